/* The cache folder: open, look up, store, list, remove, and the per-key locks.
 * See cache_internal.h for the layout and why readers need no lock. */
#include "cache_internal.h"
#include "sha256.h"
#include "util/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define STORE_LOCK_WAIT_MS 10000 /* a store holds store.lock for two small writes */
#define READ_ATTEMPTS 100        /* re-reads when concurrent stores replaced the cubin twice */

struct st_cache {
	char *dir;  /* what the user named */
	char *root; /* dir/v1 */
};

struct st_cache_lock {
	int fd; /* -1 when not held */
	char *folder, *path;
};

static char *join(const char *a, const char *b, const char *c)
{
	size_t n = strlen(a) + strlen(b) + (c ? strlen(c) : 0) + 3;
	char *s = malloc(n);
	if (s)
		snprintf(s, n, "%s/%s%s%s", a, b, c ? "/" : "", c ? c : "");
	return s;
}

st_status st_cache_open(st_cache **out, const char *dir, st_error *err)
{
	*out = NULL;
	char *d = NULL;
	if (dir && *dir) {
		d = strdup(dir);
	} else if ((dir = getenv("SASSTUNE_CACHE_DIR")) && *dir) {
		d = strdup(dir);
	} else if ((dir = getenv("XDG_CACHE_HOME")) && dir[0] == '/') {
		d = join(dir, "sasstune", NULL);
	} else if ((dir = getenv("HOME")) && *dir) {
		d = join(dir, ".cache/sasstune", NULL);
	} else {
		return st_error_set(err, ST_ENOTFOUND, "no cache folder: set SASSTUNE_CACHE_DIR or HOME");
	}
	st_cache *c = calloc(1, sizeof *c);
	char *root = d ? join(d, "v1", NULL) : NULL;
	if (!c || !d || !root) {
		free(c);
		free(d);
		free(root);
		return st_error_set(err, ST_ENOMEM, "out of memory");
	}
	c->dir = d;
	c->root = root;
	*out = c;
	return ST_OK;
}

void st_cache_free(st_cache *c)
{
	if (!c)
		return;
	free(c->dir);
	free(c->root);
	free(c);
}

const char *st_cache_dir(const st_cache *c) { return c ? c->dir : NULL; }

static st_status mkdir_p(const char *path, st_error *err)
{
	char *p = strdup(path);
	if (!p)
		return st_error_set(err, ST_ENOMEM, "out of memory");
	for (char *s = p + 1;; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;
		*s = '\0';
		if (mkdir(p, 0755) != 0 && errno != EEXIST) {
			st_status rc = st_error_set(err, ST_EIO, "cannot create %s: %s", p, strerror(errno));
			free(p);
			return rc;
		}
		*s = c;
		if (!c)
			break;
	}
	free(p);
	return ST_OK;
}

/* Read a whole file of at most max bytes.  ST_ENOTFOUND if it does not exist. */
static st_status read_limited(const char *path, size_t max, uint8_t **data, size_t *size, st_error *err)
{
	*data = NULL;
	*size = 0;
	/* O_NONBLOCK: a FIFO planted in the cache must not hang us (regular files ignore it) */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return st_error_set(err, errno == ENOENT ? ST_ENOTFOUND : ST_EIO, "%s: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > max) {
		close(fd);
		return st_error_set(err, ST_EFORMAT, "%s: not a regular file of at most %zu bytes", path, max);
	}
	size_t n = (size_t)st.st_size, got = 0;
	uint8_t *buf = malloc(n + 1);
	if (!buf) {
		close(fd);
		return st_error_set(err, ST_ENOMEM, "out of memory");
	}
	while (got < n) {
		ssize_t r = read(fd, buf + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	if (got != n) {
		free(buf);
		return st_error_set(err, ST_EIO, "%s: short read", path);
	}
	buf[n] = 0;
	*data = buf;
	*size = n;
	return ST_OK;
}

/* Read and check the entry stored under key, with its tuned cubin. */
static st_status read_entry(st_cache_entry **out, st_cache *c, const char *key, st_error *err)
{
	*out = NULL;
	char *path = join(c->root, key, "entry.json");
	if (!path)
		return st_error_set(err, ST_ENOMEM, "out of memory");
	st_status rc = ST_OK;
	for (int attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
		uint8_t *json;
		size_t size;
		if ((rc = read_limited(path, ST_CACHE_ENTRY_MAX, &json, &size, err)) != ST_OK)
			break;
		st_cache_entry *e;
		rc = st_cache__parse_entry(&e, (const char *)json, size, key, err);
		free(json);
		if (rc != ST_OK)
			break;
		if (e->info.negative) { /* names no cubin */
			*out = e;
			break;
		}
		char name[72];
		snprintf(name, sizeof name, "%s.cubin", e->info.tuned_sha256);
		char *cpath = join(c->root, key, name);
		if (!cpath) {
			st_cache_entry_free(e);
			rc = st_error_set(err, ST_ENOMEM, "out of memory");
			break;
		}
		size_t csize;
		rc = read_limited(cpath, ST_CACHE_CUBIN_MAX, &e->cubin, &csize, err);
		free(cpath);
		if (rc == ST_ENOTFOUND) {
			/* replaced by a concurrent store between our two reads: read the entry again */
			st_cache_entry_free(e);
			rc = st_error_set(err, ST_EFORMAT, "entry %.12s...: its tuned cubin is missing", key);
			continue;
		}
		if (rc == ST_OK) {
			char sha[65];
			st_cache_sha256_hex(e->cubin, csize, sha);
			if (csize != e->info.tuned_cubin_size || strcmp(sha, e->info.tuned_sha256) != 0)
				rc = st_error_set(err, ST_EFORMAT,
						  "entry %.12s...: tuned cubin does not match its recorded SHA-256", key);
		}
		if (rc != ST_OK) {
			if (rc != ST_EFORMAT)
				st_error_wrap(err, "entry %.12s...", key);
			st_cache_entry_free(e);
			break;
		}
		e->info.tuned_cubin = e->cubin;
		*out = e;
		break;
	}
	if (rc == ST_ENOTFOUND)
		st_error_set(err, ST_ENOTFOUND, "no cache entry %.12s...", key);
	free(path);
	return rc;
}

/* Optional key fields: both absent, or the same text. */
static int same_optional(const char *a, const char *b) { return (!a && !b) || (a && b && !strcmp(a, b)); }

int st_cache__fields_match(const st_cache_key_fields *fields, const st_cache_info *i)
{
	st_cache_key_fields f;
	st_cache__normalize(fields, &f);
	return !strcmp(f.cubin_sha256, i->cubin_sha256) && !strcmp(f.kernel, i->kernel) &&
	       !strcmp(f.gpu_name, i->gpu_name) && !strcmp(f.compute_capability, i->compute_capability) &&
	       !strcmp(f.driver_version, i->driver_version) && !strcmp(f.ptxas_version, i->ptxas_version) &&
	       !strcmp(f.legality_version, i->legality_version) && !strcmp(f.moves, i->moves) &&
	       same_optional(f.variants, i->variants) && same_optional(f.ptxas_options, i->ptxas_options);
}

st_status st_cache_lookup(st_cache_entry **out, st_cache *c, const st_cache_key_fields *fields, st_error *err)
{
	*out = NULL;
	char key[65];
	st_status rc = st_cache_key(fields, key, err);
	if (rc != ST_OK)
		return rc;
	st_cache_entry *e;
	if ((rc = read_entry(&e, c, key, err)) != ST_OK)
		return rc;
	/* The key already covers the fields; this guards against a hash collision or a bug. */
	if (!st_cache__fields_match(fields, &e->info)) {
		st_cache_entry_free(e);
		return st_error_set(err, ST_EFORMAT, "entry %.12s...: its fields differ from the ones looked up", key);
	}
	*out = e;
	return ST_OK;
}

static int is_hex_prefix(const char *s)
{
	size_t n = 0;
	for (; s[n]; n++)
		if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
			return 0;
	return n >= 4 && n <= 64;
}

st_status st_cache_read(st_cache_entry **out, st_cache *c, const char *key, st_error *err)
{
	*out = NULL;
	if (!key || !is_hex_prefix(key))
		return st_error_set(err, ST_EINVAL, "'%.80s' is not a cache key (4 to 64 lowercase hex digits)",
				    key ? key : "");
	if (strlen(key) == 64)
		return read_entry(out, c, key, err);
	DIR *d = opendir(c->root);
	if (!d && errno == ENOENT)
		return st_error_set(err, ST_ENOTFOUND, "no cache entry matches %s (%s does not exist)", key, c->root);
	if (!d) /* say what is wrong (permission denied, not a folder, ...), not "no entry" */
		return st_error_set(err, ST_EIO, "cannot read the cache folder %s: %s", c->root, strerror(errno));
	char found[65] = "";
	int matches = 0;
	struct dirent *de;
	while ((de = readdir(d)))
		if (st_cache__is_key(de->d_name) && !strncmp(de->d_name, key, strlen(key)) && matches++ == 0)
			memcpy(found, de->d_name, 65);
	closedir(d);
	if (matches == 0)
		return st_error_set(err, ST_ENOTFOUND, "no cache entry matches %s", key);
	if (matches > 1)
		return st_error_set(err, ST_EINVAL, "%s matches %d cache entries; give more digits", key, matches);
	return read_entry(out, c, found, err);
}

/* flock folder/name exclusively, polling for at most wait_ms.  The lock is on the
 * file that is at the path when we return: a lock file unlinked under us (by
 * st_cache_unlock or cache clear) is opened again, and so is a folder removed
 * between our mkdir and open. */
static st_status lock_file(int *fd_out, const char *folder, const char *name, int wait_ms, st_error *err)
{
	char *path = join(folder, name, NULL);
	if (!path)
		return st_error_set(err, ST_ENOMEM, "out of memory");
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	st_status rc = ST_OK;
	for (int reopen = 0;; reopen++) {
		if (reopen > 100) {
			rc = st_error_set(err, ST_EIO, "%s keeps disappearing", path);
			break;
		}
		if ((rc = mkdir_p(folder, err)) != ST_OK)
			break;
		int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0 && errno == ENOENT)
			continue;
		if (fd < 0) {
			rc = st_error_set(err, ST_EIO, "%s: %s", path, strerror(errno));
			break;
		}
		for (;;) {
			if (flock(fd, LOCK_EX | LOCK_NB) == 0)
				break;
			if (errno != EWOULDBLOCK && errno != EINTR) {
				rc = st_error_set(err, ST_EIO, "%s: flock: %s", path, strerror(errno));
				break;
			}
			struct timespec now;
			clock_gettime(CLOCK_MONOTONIC, &now);
			long ms = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
			if (ms >= wait_ms) {
				rc = st_error_set(err, ST_ETIMEOUT, "%s is held by another process", path);
				break;
			}
			struct timespec nap = {0, 2000000};
			nanosleep(&nap, NULL);
		}
		if (rc != ST_OK) {
			close(fd);
			break;
		}
		struct stat a, b;
		if (fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev) {
			*fd_out = fd;
			break;
		}
		close(fd);
	}
	free(path);
	return rc;
}

/* Remove the key folder's files other than the cubins named keep and keep_prev (replaced
 * cubins, temporaries of writers that died).  Runs under store.lock, so no writer is between
 * its two writes.  The previous entry's cubin is kept because a reader may have read the
 * previous entry.json and not yet opened its cubin; only a second replacement removes it,
 * and a reader that loses that race reads the entry again. */
static void sweep(const char *folder, const char *keep, const char *keep_prev)
{
	DIR *d = opendir(folder);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		const char *n = de->d_name;
		size_t len = strlen(n);
		int cubin = len > 6 && !strcmp(n + len - 6, ".cubin");
		if ((cubin && strcmp(n, keep) != 0 && strcmp(n, keep_prev) != 0) || strstr(n, ".tmp.")) {
			char *p = join(folder, n, NULL);
			if (p)
				unlink(p);
			free(p);
		}
	}
	closedir(d);
}

st_status st_cache_store(st_cache *c, const st_cache_key_fields *fields, const st_cache_record *rec, st_error *err)
{
	char *json;
	st_status rc = st_cache__format_entry(&json, fields, rec, err);
	if (rc != ST_OK)
		return rc;
	char key[65], sha[65], name[72] = "";
	st_cache_key(fields, key, NULL);
	if (!rec->negative) { /* a negative entry has no cubin: the sweep removes the old ones */
		st_cache_sha256_hex(rec->tuned_cubin, rec->tuned_cubin_size, sha);
		snprintf(name, sizeof name, "%s.cubin", sha);
	}
	char *folder = join(c->root, key, NULL);
	char *cpath = join(c->root, key, name);
	char *epath = join(c->root, key, "entry.json");
	int fd = -1;
	if (!folder || !cpath || !epath) {
		rc = st_error_set(err, ST_ENOMEM, "out of memory");
		goto done;
	}
	if ((rc = lock_file(&fd, folder, "store.lock", STORE_LOCK_WAIT_MS, err)) != ST_OK)
		goto done;
	char prev[72] = "";
	uint8_t *old;
	size_t old_size;
	if (read_limited(epath, ST_CACHE_ENTRY_MAX, &old, &old_size, NULL) == ST_OK) {
		st_cache_entry *e;
		if (st_cache__parse_entry(&e, (const char *)old, old_size, key, NULL) == ST_OK) {
			if (!e->info.negative)
				snprintf(prev, sizeof prev, "%s.cubin", e->info.tuned_sha256);
			st_cache_entry_free(e);
		}
		free(old);
	}
	if ((!rec->negative &&
	     (rc = st_write_file_atomic(cpath, rec->tuned_cubin, rec->tuned_cubin_size, err)) != ST_OK) ||
	    (rc = st_write_file_atomic(epath, json, strlen(json), err)) != ST_OK)
		goto done;
	sweep(folder, name, prev);
done:
	if (fd >= 0)
		close(fd);
	if (rc != ST_OK)
		st_error_wrap(err, "cache store %.12s...", key);
	free(folder);
	free(cpath);
	free(epath);
	free(json);
	return rc;
}

static int cmp_keys(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

st_status st_cache_list(st_cache *c, st_cache_list_cb cb, void *payload, st_error *err)
{
	DIR *d = opendir(c->root);
	if (!d)
		return errno == ENOENT ? ST_OK : st_error_set(err, ST_EIO, "%s: %s", c->root, strerror(errno));
	char **keys = NULL;
	size_t n = 0, cap = 0;
	st_status rc = ST_OK;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!st_cache__is_key(de->d_name))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			char **k = realloc(keys, cap * sizeof *keys);
			if (!k) {
				rc = st_error_set(err, ST_ENOMEM, "out of memory");
				break;
			}
			keys = k;
		}
		if (!(keys[n] = strdup(de->d_name))) {
			rc = st_error_set(err, ST_ENOMEM, "out of memory");
			break;
		}
		n++;
	}
	closedir(d);
	if (rc == ST_OK && n)
		qsort(keys, n, sizeof *keys, cmp_keys);
	for (size_t i = 0; rc == ST_OK && i < n; i++) {
		st_cache_entry *e;
		st_error why = {0};
		st_status r = read_entry(&e, c, keys[i], &why);
		if (r == ST_ENOTFOUND)
			continue; /* no entry.json: a tuning in progress, or removed meanwhile */
		if (r == ST_ENOMEM) {
			rc = st_error_set(err, ST_ENOMEM, "out of memory");
			break;
		}
		int64_t mtime = 0;
		char *p = join(c->root, keys[i], "entry.json"), *f = join(c->root, keys[i], NULL);
		struct stat st;
		if ((p && stat(p, &st) == 0) || (f && stat(f, &st) == 0))
			mtime = (int64_t)st.st_mtime;
		free(p);
		free(f);
		int stop = cb(keys[i], r == ST_OK ? e : NULL, r == ST_OK ? NULL : why.msg, mtime, payload);
		if (r == ST_OK)
			st_cache_entry_free(e);
		if (stop)
			break;
	}
	for (size_t i = 0; i < n; i++)
		free(keys[i]);
	free(keys);
	return rc;
}

st_status st_cache_remove(st_cache *c, const char *key, st_error *err)
{
	if (!st_cache__is_key(key))
		return st_error_set(err, ST_EINVAL, "'%.80s' is not a full cache key", key ? key : "");
	char *folder = join(c->root, key, NULL);
	if (!folder)
		return st_error_set(err, ST_ENOMEM, "out of memory");
	DIR *d = opendir(folder);
	if (!d) {
		st_status rc = st_error_set(err, errno == ENOENT ? ST_ENOTFOUND : ST_EIO, "%s: %s", folder, strerror(errno));
		free(folder);
		return rc;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char *p = join(folder, de->d_name, NULL);
		if (p)
			unlink(p);
		free(p);
	}
	closedir(d);
	st_status rc = ST_OK;
	if (rmdir(folder) != 0 && errno != ENOENT)
		rc = st_error_set(err, ST_EIO, "%s: %s", folder, strerror(errno));
	free(folder);
	return rc;
}

st_status st_cache_lock_tune(st_cache_lock **out, st_cache *c, const char *key, int wait_ms, st_error *err)
{
	*out = NULL;
	if (!st_cache__is_key(key))
		return st_error_set(err, ST_EINVAL, "'%.80s' is not a full cache key", key ? key : "");
	st_cache_lock *l = calloc(1, sizeof *l);
	if (l)
		l->fd = -1;
	if (!l || !(l->folder = join(c->root, key, NULL)) || !(l->path = join(l->folder, "tune.lock", NULL))) {
		st_cache_unlock(l);
		return st_error_set(err, ST_ENOMEM, "out of memory");
	}
	st_status rc = lock_file(&l->fd, l->folder, "tune.lock", wait_ms < 0 ? 0 : wait_ms, err);
	if (rc != ST_OK) {
		l->fd = -1;
		st_cache_unlock(l);
		return rc;
	}
	*out = l;
	return ST_OK;
}

void st_cache_unlock(st_cache_lock *l)
{
	if (!l)
		return;
	if (l->fd >= 0) {
		/* Unlink while holding, so that no lock-only folders pile up; a waiter that opened
		 * the old file sees it is gone (lock_file's inode check) and opens a new one.  The
		 * folder goes too when nothing else is in it. */
		unlink(l->path);
		close(l->fd);
		rmdir(l->folder);
	}
	free(l->folder);
	free(l->path);
	free(l);
}
