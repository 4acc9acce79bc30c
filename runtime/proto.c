/* The worker protocol: 16-byte header (magic, type, payload length), then a
 * payload of little-endian fields.  Sent over a stream socket pair with
 * MSG_NOSIGNAL, so a dead peer is an error code, never a SIGPIPE. */
#include "rt.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void put(st_rt_writer *w, const void *data, size_t n)
{
	if (!w->failed && st_buf_append(&w->b, data, n) != ST_OK)
		w->failed = true;
}

void st_rt_put_u32(st_rt_writer *w, uint32_t v)
{
	uint8_t b[4];
	st_put_le32(b, v);
	put(w, b, 4);
}

void st_rt_put_u64(st_rt_writer *w, uint64_t v)
{
	uint8_t b[8];
	st_put_le64(b, v);
	put(w, b, 8);
}

void st_rt_put_f64(st_rt_writer *w, double v)
{
	uint64_t u;
	memcpy(&u, &v, 8);
	st_rt_put_u64(w, u);
}

void st_rt_put_blob(st_rt_writer *w, const void *data, size_t n)
{
	st_rt_put_u64(w, n);
	if (n)
		put(w, data, n);
}

void st_rt_put_raw(st_rt_writer *w, const void *data, size_t n) { put(w, data, n); }

void st_rt_put_str(st_rt_writer *w, const char *s) { st_rt_put_blob(w, s ? s : "", s ? strlen(s) : 0); }

static const uint8_t *take(st_rt_reader *r, size_t n)
{
	if (r->bad || r->left < n) {
		r->bad = true;
		return NULL;
	}
	const uint8_t *p = r->p;
	r->p += n;
	r->left -= n;
	return p;
}

uint32_t st_rt_get_u32(st_rt_reader *r)
{
	const uint8_t *p = take(r, 4);
	return p ? st_le32(p) : 0;
}

uint64_t st_rt_get_u64(st_rt_reader *r)
{
	const uint8_t *p = take(r, 8);
	return p ? st_le64(p) : 0;
}

double st_rt_get_f64(st_rt_reader *r)
{
	uint64_t u = st_rt_get_u64(r);
	double d;
	memcpy(&d, &u, 8);
	return d;
}

const uint8_t *st_rt_get_blob(st_rt_reader *r, size_t *n)
{
	uint64_t len = st_rt_get_u64(r);
	*n = 0;
	if (r->bad || len > r->left) {
		r->bad = true;
		return NULL;
	}
	*n = (size_t)len;
	return take(r, (size_t)len);
}

char *st_rt_get_str(st_rt_reader *r)
{
	size_t n;
	const uint8_t *p = st_rt_get_blob(r, &n);
	if (r->bad)
		return NULL;
	if (n && memchr(p, 0, n)) {
		r->bad = true;
		return NULL;
	}
	char *s = malloc(n + 1);
	if (!s) {
		r->bad = true;
		return NULL;
	}
	if (n)
		memcpy(s, p, n);
	s[n] = 0;
	return s;
}

static st_status send_all(int fd, const void *data, size_t n, st_error *err)
{
	const uint8_t *p = data;
	while (n > 0) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == ENOTSOCK)
			w = write(fd, p, n);
		if (w <= 0)
			return st_error_set(err, ST_EIO, "worker connection: send failed: %s",
					    w < 0 ? strerror(errno) : "closed");
		p += w;
		n -= (size_t)w;
	}
	return ST_OK;
}

st_status st_rt_msg_send(int fd, uint32_t type, const st_rt_writer *payload, st_error *err)
{
	if (payload && payload->failed)
		return st_error_set(err, ST_ENOMEM, "out of memory building a worker message");
	size_t len = payload ? payload->b.len : 0;
	uint8_t h[16];
	st_put_le32(h, ST_PROTO_MAGIC);
	st_put_le32(h + 4, type);
	st_put_le64(h + 8, len);
	st_status rc = send_all(fd, h, sizeof h, err);
	if (rc == ST_OK && len)
		rc = send_all(fd, payload->b.data, len, err);
	return rc;
}

static st_status recv_all(int fd, void *data, size_t n, double deadline_ms, st_error *err)
{
	uint8_t *p = data;
	while (n > 0) {
		if (deadline_ms > 0) {
			double left = deadline_ms - st_rt_now_ms();
			if (left <= 0)
				return st_error_set(err, ST_ETIMEOUT, "no answer from the worker in time");
			struct pollfd pfd = {.fd = fd, .events = POLLIN};
			int pr = poll(&pfd, 1, left > 1e6 ? 1000000 : (int)ceil(left));
			if (pr < 0 && errno == EINTR)
				continue;
			if (pr < 0)
				return st_error_set(err, ST_EIO, "worker connection: poll failed: %s", strerror(errno));
			if (pr == 0)
				continue;
		}
		ssize_t r = read(fd, p, n);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r < 0)
			return st_error_set(err, ST_EIO, "worker connection: %s", strerror(errno));
		if (r == 0)
			return st_error_set(err, ST_EIO, "worker connection closed");
		p += r;
		n -= (size_t)r;
	}
	return ST_OK;
}

st_status st_rt_msg_recv(int fd, double deadline_ms, uint32_t *type, uint8_t **payload, size_t *len, st_error *err)
{
	*payload = NULL;
	*len = 0;
	uint8_t h[16];
	st_status rc = recv_all(fd, h, sizeof h, deadline_ms, err);
	if (rc != ST_OK)
		return rc;
	uint64_t n = st_le64(h + 8);
	if (st_le32(h) != ST_PROTO_MAGIC || n > ST_PROTO_MAX)
		return st_error_set(err, ST_EFORMAT, "worker connection: malformed message header");
	*type = st_le32(h + 4);
	uint8_t *buf = malloc(n ? (size_t)n : 1);
	if (!buf)
		return st_error_set(err, ST_ENOMEM, "out of memory receiving %llu bytes", (unsigned long long)n);
	if (n && (rc = recv_all(fd, buf, (size_t)n, deadline_ms, err)) != ST_OK) {
		free(buf);
		return rc;
	}
	*payload = buf;
	*len = (size_t)n;
	return ST_OK;
}
