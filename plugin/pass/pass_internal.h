/* Internals of the pass entry (not public API): the per-call settings.
 *
 * Settings come from the environment, read on every call (no globals), and
 * the kernel's options_json overrides them key by key:
 *
 *   env                 options_json key      meaning
 *   SASSTUNE_CACHE_DIR  cache_dir             cache folder (see st_cache_open)
 *   SASSTUNE_MODE       mode                  tune | policy | cache-only | capture (default tune)
 *   SASSTUNE_BUDGET     budget                tuning budget, handed to the search
 *   SASSTUNE_POLICY     policy                policy file for mode policy
 *   SASSTUNE_LOG        log                   off|error|warn|info|debug, or a file path
 *   SASSTUNE_RETUNE     retune                1/0 (true/false, yes/no, on/off): ignore negative entries
 *   SASSTUNE_VARIANTS   variants              on | off | auto (default auto: on when more than one
 *                                             ptxas binary is found); variants_stage.c
 *   SASSTUNE_AIM        aim                   auto | off (default off): aimed proposals from a CUPTI
 *                                             profile at the start of a tune (docs/profile.md)
 *   -                   gpu_name, compute_capability, driver_version   key fields ("unknown" if absent)
 *   -                   device                CUDA device ordinal to tune on (default "0"), as the
 *                                             calling process sees it (CUDA_VISIBLE_DEVICES applies)
 *   SASSTUNE_REDIS*     redis*                the fleet tier (pass_redis_settings.c, pass_fleet.c)
 *   SASSTUNE_CHECK_REFERENCE  -               anything but "" or "0": check the reference after every
 *                                             verified candidate (st_runtime_options.check_reference)
 */
#ifndef ST_PASS_INTERNAL_H
#define ST_PASS_INTERNAL_H

#include "sasstune/cache.h"
#include "sasstune/error.h"
#include "sasstune/plugin.h"

#include <stddef.h>
#include <stdint.h>

/* ST_PASS_CAPTURE: the flow records launches to tune later (sasstune tune --captures); the pass
 * itself then only looks up, like cache-only. */
typedef enum st_pass_mode { ST_PASS_TUNE, ST_PASS_POLICY, ST_PASS_CACHE_ONLY, ST_PASS_CAPTURE } st_pass_mode;
typedef enum st_pass_variants { ST_VARIANTS_AUTO, ST_VARIANTS_ON, ST_VARIANTS_OFF } st_pass_variants;
typedef enum st_log_level { ST_LOG_OFF, ST_LOG_ERROR, ST_LOG_WARN, ST_LOG_INFO, ST_LOG_DEBUG } st_log_level;

/* The fleet tier's settings (pass_redis_settings.c; docs/cache.md "Fleet"). */
typedef struct st_pass_redis {
	char *url, *prefix;  /* SASSTUNE_REDIS (NULL: no fleet tier), SASSTUNE_REDIS_PREFIX (NULL: "sasstune:") */
	int timeout_ms;      /* SASSTUNE_REDIS_TIMEOUT: connect and reply timeout, 1..60000 ms (default 200) */
	int lock_ttl_s;      /* SASSTUNE_REDIS_LOCK_TTL: the tuning lock's lifetime, refreshed (default 30) */
	int wait;            /* SASSTUNE_REDIS_LOCKED: 0 stock (default) or 1 wait when another holds it */
	int64_t retry_s;     /* SASSTUNE_REDIS_RETRY: after a failure, Redis is left alone this long (60) */
} st_pass_redis;

typedef struct st_pass_settings {
	st_pass_mode mode;
	char *cache_dir;         /* NULL: SASSTUNE_CACHE_DIR or its defaults */
	char *budget, *policy;   /* NULL when not set */
	int64_t budget_seconds;  /* budget, checked when read (default 300) */
	int retune;              /* ignore negative entries */
	st_log_level log_level;  /* default warn */
	char *log_path;          /* NULL: stderr */
	char *gpu_name, *compute_capability, *driver_version; /* NULL: unknown */
	int device;              /* 0 <= device <= 1023; default 0 */
	char unknown_option[64]; /* first options_json key we do not know, for a warning */
	st_pass_variants variants; /* default auto */
	st_pass_redis redis;
	int aim;                 /* 1: aimed proposals from a CUPTI profile at the start (aim=auto); default off */
	int check_reference;     /* SASSTUNE_CHECK_REFERENCE: handed to the search's and the variants' runtime */
} st_pass_settings;

#define ST_PASS_BUDGET_DEFAULT 300 /* seconds of tuning per kernel when SASSTUNE_BUDGET is not set */

/* Read the environment, then options_json (NULL or a JSON object).  ST_EINVAL names
 * the bad setting; s is then freed. */
st_status st_pass__settings_load(st_pass_settings *s, const char *options_json, st_error *err);
void st_pass__settings_free(st_pass_settings *s);

const char *st_pass__mode_name(st_pass_mode mode);
/* One line to the log (pass.c): stderr or the log file, one write(). */
void st_pass__log(const st_pass_settings *set, st_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The redis* settings (pass_redis_settings.c): defaults, one by its options_json name (ST_ENOTFOUND:
 * not a redis setting), free. */
void st_pass__redis_defaults(st_pass_redis *r);
st_status st_pass__redis_apply(st_pass_redis *r, const char *name, const char *v, const char *from, st_error *err);
void st_pass__redis_free(st_pass_redis *r);
/* A budget (a duration, st_cache_parse_duration, of at least 1 s) and a 1/0 flag; ST_EINVAL names "from". */
st_status st_pass__check_budget(int64_t *seconds, const char *v, const char *from, st_error *err);
st_status st_pass__set_flag(int *flag, const char *v, const char *from, st_error *err);

/* What to do with the entry under the key (pass_serve.c): serve its tuned cubin (msg: a note when
 * another sasstune version made it and the checker passed it again, else empty), serve the stock
 * cubin as a negative hit (msg: the message), or treat it as a miss (msg: why). */
typedef enum st_pass_serve { ST_SERVE_TUNED, ST_SERVE_NEGATIVE, ST_SERVE_MISS } st_pass_serve;
st_pass_serve st_pass__serve(const st_pass_settings *s, st_cache *cache, st_cache_entry *e, const uint8_t *cubin,
			     size_t size, char *msg, size_t n);
/* The same for an entry from the fleet tier: always re-checked; served ones are copied locally. */
st_pass_serve st_pass__serve_remote(const st_pass_settings *s, st_cache *cache, st_cache_entry *e,
				    const uint8_t *cubin, size_t size, char *msg, size_t n);
/* "device": a decimal ordinal 0..1023 (pass_device.c). */
st_status st_pass__set_device(int *device, const char *v, const char *from, st_error *err);

/* ---- variants_stage.c: the compile-variants stage of mode tune ---- */
#include "sasstune/cache.h"
#include "sasstune/plugin.h"
#include <stdbool.h>
#include <stdint.h>

/* The part of the cache key the variant choice depends on.  run: variants will run
 * for this call (the record has PTX and the setting, resolved, allows it); then
 * set = "on:" + the sorted, distinct ptxas versions found, and base = the record's
 * ptxas options; else both stay unused and the key is the stock path's. */
typedef struct st_pass_variants_key {
	bool run;
	char set[512];
	char why[160]; /* when !run and the record has PTX: why not, for the log */
	char probe_dir[4096]; /* <cache dir>/ptxas-probes: the binaries' remembered versions ("" none) */
	int device;           /* the settings' CUDA ordinal: the stage measures there (not part of the key) */
	int check_reference;  /* the settings' check_reference, for the stage's runtime (not part of the key) */
} st_pass_variants_key;

/* Resolve the setting and fill vk; point fields->variants / ptxas_options at it
 * when variants run.  Never fails: a problem means "variants do not run". */
void st_pass__variants_key(const st_pass_settings *s, const st_plugin_kernel2 *k, st_pass_variants_key *vk,
			   st_cache_key_fields *fields);

/* The options both the key and the stage use: the record's binary and options, discovery on,
 * vk's probe folder, and the runtime on vk->device (the launch's GPU, as the search's). */
struct st_variants_opts;
void st_pass__variants_opts(const st_plugin_kernel2 *k, const st_pass_variants_key *vk, struct st_variants_opts *o);

/* What the stage chose.  cubin NULL: stock (tune the input).  ran: variants were compiled
 * (then the entry records ptxas_version + options; stock: the record's version, ""). */
typedef struct st_pass_variant_pick {
	bool ran;
	uint8_t *cubin; /* the confirmed winner's cubin (owned), NULL for stock */
	size_t size;
	char ptxas_version[32], options[256];
	double speedup, lo, hi; /* winner over stock (1 for stock) */
	char log[600];          /* one line for the log at info, "" for none */
} st_pass_variant_pick;

/* Fold the pick into a record: speedup (and interval) times the winner's over stock, and
 * the variant fields when variants ran. */
void st_pass__variant_record(const st_pass_variant_pick *pick, st_cache_record *rec);
/* The verification object of a winner stored alone (malloc'ed JSON, NULL: no memory). */
char *st_pass__variant_verification(const st_pass_variant_pick *pick);

/* ---- pass_key.c: the call's cache key (run() and capture mode alike) ---- */
/* A caller's v2 record, copied as far as its size covers (the rest NULL); k NULL: all NULL. */
void st_pass__record(const st_plugin_kernel2 *k, st_plugin_kernel2 *out);
/* fields and key of a call on the cubin whose SHA-256 is sha (fields borrow from set, k, sha
 * and vk; vk as st_pass__variants_key fills it). */
st_status st_pass__key(const st_pass_settings *set, const st_plugin_kernel2 *k, const char *sha,
		       st_cache_key_fields *fields, st_pass_variants_key *vk, char key[65], st_error *err);

/* Run the stage (CPU compile, GPU measure) when vk->run; never fails. */
struct st_launch;
void st_pass__variants_run(const st_pass_variants_key *vk, const st_plugin_kernel2 *k, const uint8_t *cubin,
			   size_t size, const char *kernel, const struct st_launch *launch, st_pass_variant_pick *pick);

/* ---- pass_fleet.c: the fleet tier (Redis) within one run() call ---- */
#include "sasstune/cache_remote.h"
typedef struct st_pass_fleet {
	const st_pass_settings *set;
	st_cache *cache;            /* the local tier: its folder holds the back-off marker */
	const char *kernel;         /* for the log */
	st_cache_remote *remote;    /* connected on first use; NULL when off, down or backing off */
	int tried;                  /* connecting was tried (once per call) */
	st_remote_lock *lock;
	char holder[256];           /* who holds the lock, when another does */
} st_pass_fleet;
/* Look the fields up remotely: ST_OK (an entry to judge with st_pass__serve_remote), else a miss
 * (refusals are logged; a failure is logged once per back-off window and ends Redis for the call). */
st_status st_pass__fleet_lookup(st_pass_fleet *f, const st_cache_key_fields *fields, st_cache_entry **out);
typedef enum st_pass_fleet_lock { ST_FLEET_OFF, ST_FLEET_TAKEN, ST_FLEET_HELD } st_pass_fleet_lock;
/* Take the key's Redis tuning lock; with redis_locked=wait, first wait (bounded by the budget plus
 * the lock's lifetime) while another holds it.  OFF: no fleet tier (or it failed): go on locally. */
st_pass_fleet_lock st_pass__fleet_lock(st_pass_fleet *f, const char *key);
/* After tuning: copy the local entry of the fields to Redis unless it is `unserved` (the entry judged
 * before, "date sha"); then release the lock.  Also what ends the call (frees the connection). */
void st_pass__fleet_publish(st_pass_fleet *f, const st_cache_key_fields *fields, const char *unserved);
void st_pass__fleet_end(st_pass_fleet *f);

#endif
