/* The after-ptxas pass: sasstune_plugin_info() and its run().
 *
 * run() hashes the cubin, builds the cache key from it and the kernel's
 * metadata, and returns the cached tuned cubin on a hit.  On a miss it goes to
 * produce(), the one place where tuning (mode tune) and learned policies (mode
 * policy) plug in; today produce() returns the input unchanged and says so.
 * Settings are read on every call (pass_internal.h); nothing is global. */
#include "pass_internal.h"
#include "sasstune/cache.h"
#include "sasstune/plugin.h"
#include "sasstune/version.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Everything one call knows; lives on run()'s stack. */
struct run_ctx {
	const st_pass_settings *set;
	const char *kernel; /* for messages */
	st_cache_key_fields fields;
	char key[65];
	st_cache *cache;
	const uint8_t *cubin;
	size_t size;
};

/* Replace control characters so that a message stays one printable line. */
static void one_line(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

static void pass_log(const st_pass_settings *set, st_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void pass_log(const st_pass_settings *set, st_log_level level, const char *fmt, ...)
{
	static const char *const names[] = {"off", "error", "warning", "info", "debug"};
	if (!set || level > set->log_level || level == ST_LOG_OFF)
		return;
	char line[1024];
	int n = snprintf(line, sizeof line, "sasstune[%ld] %s: ", (long)getpid(), names[level]);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
	va_end(ap);
	one_line(line);
	size_t len = strlen(line);
	line[len++] = '\n';
	int fd = set->log_path ? open(set->log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644) : 2;
	if (fd < 0)
		return;
	ssize_t w = write(fd, line, len); /* one write, so lines of concurrent processes do not mix */
	(void)w;
	if (fd != 2)
		close(fd);
}

/* Fill the result with a copy of data. */
static void finish(st_plugin_result *r, const st_pass_settings *set, const char *kernel, const uint8_t *data,
		   size_t size, st_plugin_status status, const char *fmt, ...) __attribute__((format(printf, 7, 8)));
static void finish(st_plugin_result *r, const st_pass_settings *set, const char *kernel, const uint8_t *data,
		   size_t size, st_plugin_status status, const char *fmt, ...)
{
	static const char *const names[] = {"tuned", "cached", "policy", "unchanged", "error"};
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->message, sizeof r->message, fmt, ap);
	va_end(ap);
	one_line(r->message);
	r->status = status;
	r->cubin = malloc(size ? size : 1);
	r->cubin_size = r->cubin ? size : 0;
	if (!r->cubin) {
		r->status = ST_PLUGIN_ERROR;
		snprintf(r->message, sizeof r->message, "out of memory copying a %zu-byte cubin", size);
	} else if (size) {
		memcpy(r->cubin, data, size);
	}
	if (r->status == ST_PLUGIN_ERROR)
		pass_log(set, ST_LOG_ERROR, "%s: %s", kernel, r->message);
	else
		pass_log(set, ST_LOG_INFO, "%s: %s: %s", kernel, names[r->status], r->message);
}

/* A cache hit: the tuned cubin and a line saying where it came from. */
static void finish_hit(st_plugin_result *r, const struct run_ctx *c, const st_cache_entry *e)
{
	const st_cache_info *i = st_cache_entry_info(e);
	finish(r, c->set, c->kernel, i->tuned_cubin, i->tuned_cubin_size, ST_PLUGIN_CACHED,
	       "cache hit %.12s: speedup %.3fx [%.3f, %.3f] (%s, %s)", c->key, i->speedup, i->speedup_low,
	       i->speedup_high, i->method, i->date);
}

/* ==== THE PLUG-IN POINT: tuning and policies ============================================
 * Called on a cache miss.  Mode tune holds the key's tune lock here (c->key), so no
 * other process tunes the same kernel; the search (search.h) and the GPU worker
 * (runtime.h) will run here, store the confirmed result with st_cache_store(), and
 * return ST_PLUGIN_TUNED.  Mode policy will apply c->set->policy without a GPU and
 * return ST_PLUGIN_POLICY (not stored: a policy's result is not confirmed).
 * Until they land, the input is returned unchanged. */
static void produce(st_plugin_result *r, const struct run_ctx *c, const char *why_missed)
{
	if (c->set->mode == ST_PASS_POLICY) {
		finish(r, c->set, c->kernel, c->cubin, c->size, ST_PLUGIN_UNCHANGED,
		       "%s; applying a policy is not available yet in sasstune %s, stock cubin kept", why_missed,
		       ST_VERSION_STRING);
		return;
	}
	finish(r, c->set, c->kernel, c->cubin, c->size, ST_PLUGIN_UNCHANGED,
	       "%s; tuning is not available yet in sasstune %s, stock cubin kept", why_missed, ST_VERSION_STRING);
}
/* ==== end of the plug-in point ========================================================== */

/* Mode tune: claim the key without waiting; a second process proceeds with the stock cubin. */
static void tune_locked(st_plugin_result *r, struct run_ctx *c, const char *why_missed)
{
	st_cache_lock *lock;
	st_error err = {0};
	st_status rc = st_cache_lock_tune(&lock, c->cache, c->key, 0, &err);
	if (rc == ST_ETIMEOUT) {
		finish(r, c->set, c->kernel, c->cubin, c->size, ST_PLUGIN_UNCHANGED,
		       "%s; another process is tuning this kernel, stock cubin kept", why_missed);
		return;
	}
	if (rc != ST_OK) {
		finish(r, c->set, c->kernel, c->cubin, c->size, ST_PLUGIN_UNCHANGED,
		       "%s; cannot lock it for tuning (%s), stock cubin kept", why_missed, err.msg);
		return;
	}
	/* The process that held the lock before us may just have stored the result. */
	st_cache_entry *e;
	if (st_cache_lookup(&e, c->cache, &c->fields, NULL) == ST_OK) {
		finish_hit(r, c, e);
		st_cache_entry_free(e);
	} else {
		produce(r, c, why_missed);
	}
	st_cache_unlock(lock);
}

static int pass_run(const uint8_t *cubin, size_t size, const st_plugin_kernel *k, st_plugin_result *r)
{
	if (!r)
		return -1;
	memset(r, 0, sizeof *r);
	if (!cubin && size) {
		r->status = ST_PLUGIN_ERROR;
		snprintf(r->message, sizeof r->message, "invalid arguments: no cubin bytes but size %zu", size);
		return -1;
	}
	static const st_plugin_kernel none = {0};
	if (!k)
		k = &none;
	const char *kname = k->kernel && *k->kernel ? k->kernel : "unknown kernel";
	st_pass_settings set;
	st_error err = {0};
	if (st_pass__settings_load(&set, k->options_json, &err) != ST_OK) {
		finish(r, NULL, kname, cubin, size, ST_PLUGIN_ERROR, "%s", err.msg);
		return 0;
	}
	if (set.unknown_option[0])
		pass_log(&set, ST_LOG_WARN, "%s: options_json key '%s' is not known, ignored", kname, set.unknown_option);
	if (size == 0) {
		finish(r, &set, kname, cubin, size, ST_PLUGIN_ERROR, "empty cubin");
		st_pass__settings_free(&set);
		return 0;
	}

	char sha[65];
	st_cache_sha256_hex(cubin, size, sha);
	struct run_ctx c = {.set = &set, .kernel = kname, .cubin = cubin, .size = size};
	c.fields = (st_cache_key_fields){.cubin_sha256 = sha,
					 .kernel = k->kernel,
					 .gpu_name = set.gpu_name,
					 .compute_capability = set.compute_capability,
					 .driver_version = set.driver_version,
					 .ptxas_version = k->ptxas_version};
	if (st_cache_key(&c.fields, c.key, &err) != ST_OK || st_cache_open(&c.cache, set.cache_dir, &err) != ST_OK) {
		finish(r, &set, kname, cubin, size, ST_PLUGIN_ERROR, "%s", err.msg);
		st_pass__settings_free(&set);
		return 0;
	}

	st_cache_entry *e;
	st_status rc = st_cache_lookup(&e, c.cache, &c.fields, &err);
	char why[400];
	if (rc == ST_OK) {
		finish_hit(r, &c, e);
		st_cache_entry_free(e);
	} else if (rc == ST_ENOMEM) {
		finish(r, &set, kname, cubin, size, ST_PLUGIN_ERROR, "%s", err.msg);
	} else {
		if (rc == ST_ENOTFOUND) {
			snprintf(why, sizeof why, "cache miss %.12s", c.key);
		} else {
			pass_log(&set, ST_LOG_WARN, "%s: cache entry ignored: %s", kname, err.msg);
			snprintf(why, sizeof why, "cache miss %.12s (entry ignored: %.300s)", c.key, err.msg);
		}
		if (set.mode == ST_PASS_CACHE_ONLY)
			finish(r, &set, kname, cubin, size, ST_PLUGIN_UNCHANGED, "%s; mode cache-only, stock cubin kept",
			       why);
		else if (set.mode == ST_PASS_TUNE)
			tune_locked(r, &c, why);
		else
			produce(r, &c, why);
	}
	st_cache_free(c.cache);
	st_pass__settings_free(&set);
	return 0;
}

static void pass_free_result(st_plugin_result *r)
{
	if (!r)
		return;
	free(r->cubin);
	r->cubin = NULL;
	r->cubin_size = 0;
}

__attribute__((visibility("default"))) const st_plugin_info *sasstune_plugin_info(void)
{
	static const st_plugin_info info = {
		.api_version = ST_PLUGIN_API_VERSION,
		.name = "sasstune",
		.version = ST_VERSION_STRING,
		.stage = "after-ptxas",
		.run = pass_run,
		.free_result = pass_free_result,
	};
	return &info;
}
