/* File and buffer helpers. */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

st_status st_read_file(const char *path, uint8_t **data, size_t *size, st_error *err)
{
	*data = NULL;
	*size = 0;
	FILE *f = fopen(path, "rb");
	if (!f)
		return st_error_set(err, ST_EIO, "%s: %s", path, strerror(errno));
	st_buf b = {0};
	uint8_t chunk[65536];
	size_t n;
	st_status rc = ST_OK;
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
		if ((rc = st_buf_append(&b, chunk, n)) != ST_OK) {
			st_error_set(err, rc, "%s: out of memory", path);
			break;
		}
	}
	if (rc == ST_OK && ferror(f))
		rc = st_error_set(err, ST_EIO, "%s: read error", path);
	fclose(f);
	if (rc == ST_OK && (rc = st_buf_append(&b, "", 1)) != ST_OK)
		st_error_set(err, rc, "%s: out of memory", path);
	if (rc != ST_OK) {
		st_buf_free(&b);
		return rc;
	}
	*data = b.data;
	*size = b.len - 1;
	return ST_OK;
}

st_status st_write_file_atomic(const char *path, const void *data, size_t size, st_error *err)
{
	size_t plen = strlen(path);
	char *tmp = malloc(plen + 32);
	if (!tmp)
		return st_error_set(err, ST_ENOMEM, "out of memory");
	snprintf(tmp, plen + 32, "%s.tmp.%ld.XXXXXX", path, (long)getpid());
	int fd = mkostemp(tmp, O_CLOEXEC); /* no child spawned meanwhile inherits it */
	if (fd < 0) {
		st_status rc = st_error_set(err, ST_EIO, "%s: cannot create temporary file: %s", path, strerror(errno));
		free(tmp);
		return rc;
	}
	const uint8_t *p = data;
	size_t left = size;
	while (left > 0) {
		ssize_t w = write(fd, p, left);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			st_status rc = st_error_set(err, ST_EIO, "%s: write failed: %s", path, strerror(errno));
			close(fd);
			unlink(tmp);
			free(tmp);
			return rc;
		}
		p += w;
		left -= (size_t)w;
	}
	if (fchmod(fd, 0644) != 0 || fsync(fd) != 0 || close(fd) != 0) {
		st_status rc = st_error_set(err, ST_EIO, "%s: %s", path, strerror(errno));
		unlink(tmp);
		free(tmp);
		return rc;
	}
	if (rename(tmp, path) != 0) {
		st_status rc = st_error_set(err, ST_EIO, "%s: rename failed: %s", path, strerror(errno));
		unlink(tmp);
		free(tmp);
		return rc;
	}
	free(tmp);
	return ST_OK;
}

st_status st_buf_append(st_buf *b, const void *data, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + n + 1)
			cap *= 2;
		uint8_t *d = realloc(b->data, cap);
		if (!d)
			return ST_ENOMEM;
		b->data = d;
		b->cap = cap;
	}
	if (n)
		memcpy(b->data + b->len, data, n);
	b->len += n;
	b->data[b->len] = 0;
	return ST_OK;
}

st_status st_buf_printf(st_buf *b, const char *fmt, ...)
{
	va_list ap, ap2;
	va_start(ap, fmt);
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		va_end(ap2);
		return ST_EINVAL;
	}
	if (b->len + (size_t)n + 1 > b->cap) {
		st_status rc = st_buf_append(b, NULL, 0);
		size_t cap = b->cap;
		while (cap < b->len + (size_t)n + 1)
			cap *= 2;
		uint8_t *d = rc == ST_OK ? realloc(b->data, cap) : NULL;
		if (!d) {
			va_end(ap2);
			return ST_ENOMEM;
		}
		b->data = d;
		b->cap = cap;
	}
	vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap2);
	va_end(ap2);
	b->len += (size_t)n;
	return ST_OK;
}

void st_buf_free(st_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

int st_env_on(const char *name)
{
	const char *v = getenv(name);
	return v && *v && strcmp(v, "0") != 0;
}
