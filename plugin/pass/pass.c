/* The after-ptxas pass: sasstune_plugin_info() and its run().
 *
 * run() hashes the cubin, builds the cache key from it and the kernel's
 * metadata, and returns the cached tuned cubin on a hit (the stock one, UNCHANGED,
 * on a negative hit: "cached: nothing beat stock"; pass_serve.c decides whether a
 * found entry is served: retunes, re-checks of another version's cubin).  On a miss it goes to
 * produce(), the one place where tuning (mode tune) and learned policies (mode
 * policy) plug in.  Mode policy: SASSTUNE_POLICY applied, gated by the cost
 * model and checked, not stored.  Mode tune: with the kernel's launch spec and
 * a GPU, first the compile-variants stage (variants_stage.c; API 2 records with
 * PTX, SASSTUNE_VARIANTS), then st_tune() on its winner with the GPU reward and
 * PPO for SASSTUNE_BUDGET (300 s by default); a confirmed result (or a confirmed
 * variant alone) is stored in the cache and returned; when nothing beat stock,
 * a negative entry is stored under the same key (the variants part included) and
 * the stock cubin returned; when tuning could not run, the stock cubin (or, when
 * a policy is set, the policy's cubin) with the reason.
 * Settings are read on every call (pass_internal.h); nothing is global. */
#include "pass_internal.h"
#include "sasstune/cache.h"
#include "sasstune/plugin.h"
#include "sasstune/version.h"

#include <fcntl.h>
#include <stddef.h>
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
	const st_plugin_kernel *k; /* launch_json for tuning */
	const st_plugin_kernel2 *k2; /* the v2 record (v1 callers: ptx etc. NULL), same v1 part as k */
	st_pass_variants_key vkey;   /* the variant part of the key (variants_stage.c) */
	char unserved[96];           /* the entry found and not served ("date sha"), so as not to judge it twice */
	st_pass_fleet fleet;         /* the Redis tier (pass_fleet.c), when SASSTUNE_REDIS is set */
};

/* Identifies an entry's content well enough to tell a replaced one from the one already judged. */
static void entry_id(const st_cache_info *i, char *out, size_t n)
{
	snprintf(out, n, "%s %.64s", i->date, i->negative ? "negative" : i->tuned_sha256);
}

/* Replace control characters so that a message stays one printable line. */
static void one_line(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

#define pass_log st_pass__log
void st_pass__log(const st_pass_settings *set, st_log_level level, const char *fmt, ...)
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

/* An entry under the key: served (its tuned cubin, or the stock one for a negative entry), 1;
 * or not (a retune is due, or the checker refused another version's cubin), 0 with why.
 * remote: it came from Redis (always re-checked, copied locally when served). */
static int serve(st_plugin_result *r, struct run_ctx *c, st_cache_entry *e, char *why, size_t n, int remote)
{
	const st_cache_info *i = st_cache_entry_info(e);
	char note[480];
	st_pass_serve sv = (remote ? st_pass__serve_remote : st_pass__serve)(c->set, c->cache, e, c->cubin, c->size, note,
									       sizeof note);
	if (sv == ST_SERVE_NEGATIVE) {
		finish(r, c->set, c->kernel, c->cubin, c->size, ST_PLUGIN_UNCHANGED, "%s", note);
		return 1;
	}
	if (sv == ST_SERVE_MISS) {
		if (!i->negative)
			pass_log(c->set, ST_LOG_WARN, "%s: %s", c->kernel, note);
		entry_id(i, c->unserved, sizeof c->unserved);
		snprintf(why, n, "cache miss %.12s (%.300s)", c->key, note);
		return 0;
	}
	finish(r, c->set, c->kernel, i->tuned_cubin, i->tuned_cubin_size, ST_PLUGIN_CACHED,
	       "cache hit %.12s: speedup %.3fx [%.3f, %.3f] (%s, %s%s%s)", c->key, i->speedup, i->speedup_low,
	       i->speedup_high, i->method, i->date, note[0] ? "; " : "", note);
	return 1;
}

/* ==== THE PLUG-IN POINT: tuning and policies ============================================
 * Called on a cache miss.  Mode tune holds the key's tune lock here (c->key), so no other
 * process tunes the same kernel.  With a launch spec and a GPU it tunes within the budget
 * (SASSTUNE_BUDGET, default 300 s) with the GPU reward (sasstune/tune.h: confirmation, fresh-
 * input verification, the independent checker), stores a confirmed result with
 * st_cache_store() and returns ST_PLUGIN_TUNED; otherwise the input, ST_PLUGIN_UNCHANGED and
 * why.  Mode policy (and mode tune without a GPU, when a policy is configured) applies the
 * policy greedily with no GPU and returns ST_PLUGIN_POLICY (not stored: not confirmed).  A
 * cubin that failed verification or the checker is never returned. */
#include "sasstune/runtime.h"
#include "sasstune/tune.h"

/* Apply c->set->policy; 1 when r was filled (POLICY, or an error), 0 when it changed nothing. */
static int apply_policy(st_plugin_result *r, const struct run_ctx *c, const char *why)
{
	st_policy *p = NULL;
	st_error err = {0};
	if (st_policy_load(c->set->policy, &p, &err) != ST_OK) {
		finish(r, c->set, c->kernel, c->cubin, c->size, ST_PLUGIN_UNCHANGED,
		       "%s; policy %s cannot be used (%s), stock cubin kept", why, c->set->policy, err.msg);
		return 1;
	}
	st_tune_kernel k = {.cubin = c->cubin, .size = c->size, .name = c->kernel, .kernel = c->fields.kernel};
	st_tune_result tr;
	st_status rc = st_tune_apply_policy(&k, p, 64, 0.0, ST_TUNE_MODEL_GATE, &tr, &err);
	st_policy_free(p);
	if (rc != ST_OK) {
		finish(r, c->set, c->kernel, c->cubin, c->size, ST_PLUGIN_ERROR, "%s; applying policy %s: %s, stock cubin kept",
		       why, c->set->policy, err.msg);
		return 1;
	}
	int changed = tr.improved;
	if (changed)
		finish(r, c->set, c->kernel, tr.cubin, tr.cubin_size, ST_PLUGIN_POLICY,
		       "%s; policy %s applied (%llu moves, checked, unconfirmed: the cost model predicts %.4fx; "
		       "no policy has been shown to transfer to unseen kernels, docs/tune.md)", why,
		       c->set->policy, (unsigned long long)tr.steps, tr.model_ratio);
	st_tune_result_free(&tr);
	return changed;
}

/* Tuning ran and nothing beat stock (when variants ran, they chose stock too):
 * that is a result too (a negative entry, same key: with variants, the variants key). */
static void store_negative(const struct run_ctx *c, const st_tune_result *tr, const st_pass_variant_pick *pick,
			   int64_t budget, char *out, size_t n)
{
	char budget_s[32], why[700];
	snprintf(budget_s, sizeof budget_s, "%llds", (long long)budget);
	snprintf(why, sizeof why, "%s%.600s", pick->ran ? "variants chose stock; " : "", tr->message);
	st_cache_record rec = {.method = st_search_method_name(ST_TUNE_DEFAULT_METHOD),
			       .budget = budget_s,
			       .negative = 1,
			       .best_ratio = tr->best.ratio >= 0 && tr->best.ratio < 1e6 ? tr->best.ratio : 0,
			       .why = why};
	st_error se = {0};
	if (st_cache_store(c->cache, &c->fields, &rec, &se) == ST_OK)
		snprintf(out, n, ST_PLUGIN_NEGATIVE " (stored as negative, best ratio %.4f)", rec.best_ratio);
	else
		snprintf(out, n, "nothing better found, not stored: %.150s", se.msg);
}

/* The variants stage confirmed a winner but the search on it did not confirm (or failed):
 * the winner alone is the result, stored like a tuned one (no SASS moves). */
static void finish_variant(st_plugin_result *r, const struct run_ctx *c, st_pass_variant_pick *pick,
			   int64_t budget, const char *why_missed, const char *search)
{
	char budget_s[32], stored[200] = "stored";
	snprintf(budget_s, sizeof budget_s, "%llds", (long long)budget);
	char *verif = st_pass__variant_verification(pick);
	st_cache_record rec = {.schedule_json = "{}", .verification_json = verif, .method = "variants",
			       .budget = budget_s, .tuned_cubin = pick->cubin, .tuned_cubin_size = pick->size};
	st_pass__variant_record(pick, &rec);
	st_error se = {0};
	if (!verif || st_cache_store(c->cache, &c->fields, &rec, &se) != ST_OK)
		snprintf(stored, sizeof stored, "not stored: %.150s", verif ? se.msg : "out of memory");
	finish(r, c->set, c->kernel, pick->cubin, pick->size, ST_PLUGIN_TUNED,
	       "%s; variant %.32s %.100s: %.4fx [%.4f, %.4f], search on it: %.120s (%s)", why_missed,
	       pick->ptxas_version, pick->options, rec.speedup, rec.speedup_low, rec.speedup_high, search, stored);
	free(verif);
	free(pick->cubin);
	pick->cubin = NULL;
}

/* Mode policy: apply SASSTUNE_POLICY, or keep stock and say why. */
static void produce_policy(st_plugin_result *r, const struct run_ctx *c, const char *why_missed)
{
	if (!c->set->policy) {
		finish(r, c->set, c->kernel, c->cubin, c->size, ST_PLUGIN_UNCHANGED,
		       "%s; mode policy but no policy file (SASSTUNE_POLICY), stock cubin kept", why_missed);
		return;
	}
	if (!apply_policy(r, c, why_missed))
		finish(r, c->set, c->kernel, c->cubin, c->size, ST_PLUGIN_UNCHANGED,
		       "%s; policy %s made no move that passed the checker, stock cubin kept", why_missed, c->set->policy);
}

/* A confirmed tune: stored under the key, and the result. */
static void store_tuned(st_plugin_result *r, const struct run_ctx *c, st_tune_result *tr, st_pass_variant_pick *pick,
			int64_t budget, const char *why_missed)
{
	char budget_s[32], stored[200] = "stored";
	snprintf(budget_s, sizeof budget_s, "%llds", (long long)budget);
	st_cache_record rec = {.schedule_json = tr->schedule_json,
			       .verification_json = tr->verification_json,
			       .speedup = tr->best.ratio,
			       .speedup_low = tr->best.lo,
			       .speedup_high = tr->best.hi,
			       .method = st_search_method_name(ST_TUNE_DEFAULT_METHOD),
			       .budget = budget_s,
			       .tuned_cubin = tr->cubin,
			       .tuned_cubin_size = tr->cubin_size};
	st_pass__variant_record(pick, &rec); /* speedup over stock, the variant */
	free(pick->cubin);
	pick->cubin = NULL;
	st_error se = {0};
	if (st_cache_store(c->cache, &c->fields, &rec, &se) != ST_OK)
		snprintf(stored, sizeof stored, "not stored: %.150s", se.msg);
	finish(r, c->set, c->kernel, tr->cubin, tr->cubin_size, ST_PLUGIN_TUNED,
	       "%s; tuned: %.4fx [%.4f, %.4f] over %u pairs in %llu steps (%s)", why_missed, tr->best.ratio, tr->best.lo,
	       tr->best.hi, tr->best.pairs, (unsigned long long)tr->steps, stored);
}

/* Mode tune with a launch spec: the variants stage, then st_tune on its winner (or stock).
 * Returns 1 when r holds the result, 0 when tuning needs a GPU (why says so; the caller goes on). */
static int tune_spec(st_plugin_result *r, const struct run_ctx *c, st_launch *spec, const char *why_missed, char *why,
		     size_t why_n)
{
	int64_t budget = c->set->budget_seconds; /* checked when the settings were read */
	st_tune_opts o;
	st_tune_opts_init(&o);
	o.reward = ST_REWARD_GPU;
	o.search.method = ST_TUNE_DEFAULT_METHOD; /* recorded in the entry (store_tuned) */
	o.search.steps = 0;
	o.search.seconds = (double)budget;
	o.runtime.device = c->set->device; /* the launch's device (options_json "device") */
	o.runtime.check_reference = c->set->check_reference != 0; /* SASSTUNE_CHECK_REFERENCE */
	o.aim = c->set->aim ? "auto" : NULL; /* SASSTUNE_AIM (docs/profile.md) */
	st_pass_variant_pick pick; /* variants_stage.c: the search starts from its winner (same device) */
	st_pass__variants_run(&c->vkey, c->k2, c->cubin, c->size, c->fields.kernel, spec, &pick);
	if (pick.log[0])
		pass_log(c->set, ST_LOG_INFO, "%s: %s", c->kernel, pick.log);
	st_tune_kernel k = {.cubin = pick.cubin ? pick.cubin : c->cubin, .size = pick.cubin ? pick.size : c->size,
			    .name = c->kernel, .kernel = c->fields.kernel, .launch = spec};
	st_tune_result tr;
	st_error err = {0};
	st_status rc = st_tune(&k, &o, NULL, &tr, &err);
	if (rc == ST_OK && (strstr(tr.pipe, "rotated") || strstr(tr.pipe, "prefetched"))) /* family 3 had one */
		pass_log(c->set, ST_LOG_INFO, "%s: pipe: %s", c->kernel, tr.pipe);
	if (pick.cubin && (rc != ST_OK || !tr.confirmed)) {
		finish_variant(r, c, &pick, budget, why_missed, rc == ST_OK ? tr.message : err.msg);
	} else if (rc == ST_EDEVICE) {
		snprintf(why, why_n, "%s; tuning needs a GPU (%.300s)", why_missed, err.msg);
		return 0;
	} else if (rc != ST_OK) {
		finish(r, c->set, c->kernel, c->cubin, c->size, ST_PLUGIN_ERROR, "%s; tuning failed: %s, stock cubin kept",
		       why_missed, err.msg);
	} else if (!tr.confirmed) {
		char stored[200];
		store_negative(c, &tr, &pick, budget, stored, sizeof stored);
		finish(r, c->set, c->kernel, c->cubin, c->size, ST_PLUGIN_UNCHANGED, "%s; tuned %llu steps: %s; %s",
		       why_missed, (unsigned long long)tr.steps, tr.message, stored);
	} else {
		store_tuned(r, c, &tr, &pick, budget, why_missed);
	}
	if (rc == ST_OK)
		st_tune_result_free(&tr);
	return 1;
}

static void produce(st_plugin_result *r, const struct run_ctx *c, const char *why_missed)
{
	char why[480];
	if (c->set->mode == ST_PASS_POLICY) {
		produce_policy(r, c, why_missed);
		return;
	}
	/* mode tune */
	const char *launch_json = c->k ? c->k->launch_json : NULL;
	st_error err = {0};
	st_launch *spec = NULL;
	if (!launch_json || !*launch_json) {
		snprintf(why, sizeof why, "%s; no launch spec (launch_json), tuning needs one", why_missed);
	} else if (st_launch_parse(launch_json, strlen(launch_json), NULL, &spec, &err) != ST_OK) {
		snprintf(why, sizeof why, "%s; launch_json: %.300s", why_missed, err.msg);
	} else {
		int done = tune_spec(r, c, spec, why_missed, why, sizeof why);
		st_launch_free(spec);
		if (done)
			return;
	}
	if (c->set->policy && apply_policy(r, c, why))
		return;
	finish(r, c->set, c->kernel, c->cubin, c->size, ST_PLUGIN_UNCHANGED, "%s, stock cubin kept", why);
}
/* ==== end of the plug-in point ========================================================== */

/* The key in Redis (pass_fleet.c): served from there (1), or not (0: a miss, refusals logged). */
static int remote_serve(st_plugin_result *r, struct run_ctx *c)
{
	st_cache_entry *e;
	char why[480];
	if (st_pass__fleet_lookup(&c->fleet, &c->fields, &e) != ST_OK)
		return 0;
	int done = serve(r, c, e, why, sizeof why, 1);
	st_cache_entry_free(e);
	return done;
}

/* Mode tune: claim the key without waiting; a second process proceeds with the stock cubin.
 * With Redis, also the key's Redis lock: another machine tuning it means stock (or a wait). */
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
	char why[480];
	snprintf(why, sizeof why, "%s", why_missed);
	if (st_cache_lookup(&e, c->cache, &c->fields, NULL) == ST_OK) {
		char id[96];
		entry_id(st_cache_entry_info(e), id, sizeof id);
		int done = strcmp(id, c->unserved) != 0 && serve(r, c, e, why, sizeof why, 0);
		st_cache_entry_free(e);
		if (done) {
			st_cache_unlock(lock);
			return;
		}
	}
	st_pass_fleet_lock fl = st_pass__fleet_lock(&c->fleet, c->key);
	if (fl == ST_FLEET_HELD) {
		finish(r, c->set, c->kernel, c->cubin, c->size, ST_PLUGIN_UNCHANGED,
		       "%s; another machine is tuning this kernel (Redis lock held by %.100s), stock cubin kept", why,
		       c->fleet.holder);
	} else if (fl == ST_FLEET_OFF || !remote_serve(r, c)) { /* the holder before us may have stored it */
		produce(r, c, why);
		st_pass__fleet_publish(&c->fleet, &c->fields, c->unserved);
	}
	st_pass__fleet_end(&c->fleet);
	st_cache_unlock(lock);
}

/* No entry (ENOTFOUND), an invalid one (EFORMAT: problem), or one not served (OK: why says why). */
static void miss(st_plugin_result *r, struct run_ctx *c, st_status rc, const char *problem, char *why, size_t n)
{
	if (rc == ST_ENOTFOUND) {
		snprintf(why, n, "cache miss %.12s", c->key);
	} else if (rc != ST_OK) {
		pass_log(c->set, ST_LOG_WARN, "%s: cache entry ignored: %s", c->kernel, problem);
		snprintf(why, n, "cache miss %.12s (entry ignored: %.300s)", c->key, problem);
	}
	if (c->set->mode == ST_PASS_CACHE_ONLY || c->set->mode == ST_PASS_CAPTURE)
		finish(r, c->set, c->kernel, c->cubin, c->size, ST_PLUGIN_UNCHANGED, "%s; mode %s, stock cubin kept", why,
		       st_pass__mode_name(c->set->mode));
	else if (c->set->mode == ST_PASS_TUNE)
		tune_locked(r, c, why);
	else
		produce(r, c, why);
}

static int pass_run_common(const uint8_t *cubin, size_t size, const st_plugin_kernel2 *k2, st_plugin_result *r)
{
	const st_plugin_kernel *k = &k2->v1;
	if (!r)
		return -1;
	memset(r, 0, sizeof *r);
	if (!cubin && size) {
		r->status = ST_PLUGIN_ERROR;
		snprintf(r->message, sizeof r->message, "invalid arguments: no cubin bytes but size %zu", size);
		return -1;
	}
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
	struct run_ctx c = {.set = &set, .kernel = kname, .cubin = cubin, .size = size, .k = k, .k2 = k2};
	c.fleet = (st_pass_fleet){.set = &set, .kernel = kname};
	if (st_pass__key(&set, k2, sha, &c.fields, &c.vkey, c.key, &err) != ST_OK ||
	    st_cache_open(&c.cache, set.cache_dir, &err) != ST_OK) {
		finish(r, &set, kname, cubin, size, ST_PLUGIN_ERROR, "%s", err.msg);
		st_pass__settings_free(&set);
		return 0;
	}

	st_cache_entry *e;
	st_status rc = st_cache_lookup(&e, c.cache, &c.fields, &err);
	char why[480];
	int served = 0;
	if (rc == ST_OK) {
		served = serve(r, &c, e, why, sizeof why, 0);
		st_cache_entry_free(e);
	}
	c.fleet.cache = c.cache;
	if (rc == ST_ENOMEM)
		finish(r, &set, kname, cubin, size, ST_PLUGIN_ERROR, "%s", err.msg);
	else if (!served && !remote_serve(r, &c)) /* local miss: the fleet tier next */
		miss(r, &c, rc, err.msg, why, sizeof why);
	st_pass__fleet_end(&c.fleet);
	st_cache_free(c.cache);
	st_pass__settings_free(&set);
	return 0;
}

static int pass_run(const uint8_t *cubin, size_t size, const st_plugin_kernel *k, st_plugin_result *r)
{
	st_plugin_kernel2 k2 = {.size = sizeof k2};
	if (k)
		k2.v1 = *k; /* a v1 record: nothing past it is read */
	return pass_run_common(cubin, size, &k2, r);
}

/* Copies only the fields the caller's size covers; the rest stay NULL (st_pass__record). */
static int pass_run2(const uint8_t *cubin, size_t size, const st_plugin_kernel2 *k, st_plugin_result *r)
{
	st_plugin_kernel2 k2;
	st_pass__record(k, &k2);
	return pass_run_common(cubin, size, &k2, r);
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
		.run2 = pass_run2,
	};
	return &info;
}
