/* sasstune: the schedule cache.
 *
 * An entry maps a key (SHA-256 over the original cubin's SHA-256, the kernel,
 * the GPU name, its compute capability, the driver and ptxas versions, the
 * legality model's version and the move families, plus the variant set and base
 * ptxas options when the compile-variants stage ran) to a tuned result: the
 * schedule (an opaque JSON object, see schedule.h), the confirmed speedup with
 * its interval, the verification record, provenance, and the tuned cubin bytes
 * (stored beside the entry, their SHA-256 checked on every read); or to a
 * negative result: "tuned, nothing beat stock" (best ratio seen, why).  Writes
 * are atomic; an entry that is corrupt, of another schema or does not match its
 * key is reported and never used.
 * Layout and formats: docs/cache.md.  Functions are safe to call from several
 * threads on different st_cache handles.
 */
#ifndef SASSTUNE_CACHE_H
#define SASSTUNE_CACHE_H

#include "sasstune/error.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ST_CACHE_SCHEMA 1 /* entries live in DIR/v1/<key>/ */

typedef struct st_cache st_cache;             /* an open cache folder */
typedef struct st_cache_entry st_cache_entry; /* one valid entry, read from disk */
typedef struct st_cache_lock st_cache_lock;   /* a held per-key tuning lock */

#define ST_CACHE_KEY_FIELD_MAX 1024 /* bytes in one key field: st_cache_key refuses a longer one */

/* What a key is made of.  NULL or "" means "unknown"; sasstune_version NULL means this library's
 * (recorded in the entry, not part of the key); legality_version and moves NULL mean this
 * library's (ST_LEGALITY_VERSION and ST_SCHED_MOVE_FAMILIES of sched.h). */
typedef struct st_cache_key_fields {
	const char *cubin_sha256; /* required: 64 lowercase hex digits of the original cubin */
	const char *kernel, *gpu_name, *compute_capability, *driver_version, *ptxas_version, *sasstune_version;
	/* Optional, NULL or "" = absent (then not hashed: the key is the one made without them): set
	 * when the compile-variants stage ran: "on:" + the ptxas versions it could use, and the base
	 * ptxas options the variants were compiled with. */
	const char *variants, *ptxas_options;
	const char *legality_version, *moves; /* always hashed (key format 2) */
} st_cache_key_fields;

/* What a tuning run stores.  Everything is borrowed for the duration of the call. */
typedef struct st_cache_record {
	const char *schedule_json;     /* a JSON object */
	const char *verification_json; /* a JSON object */
	double speedup, speedup_low, speedup_high; /* confirmed speedup and its interval, low <= speedup <= high */
	const char *method, *budget;   /* provenance, e.g. "ppo", "5m"; NULL means "unknown" */
	const char *date;              /* "YYYY-MM-DDTHH:MM:SSZ", NULL means now */
	const uint8_t *tuned_cubin;
	size_t tuned_cubin_size;
	/* Optional (NULL = no "variant" in the entry): the compile variant the tuned cubin was made
	 * from: its ptxas version and extra options ("" for none). */
	const char *variant_ptxas_version, *variant_options;
	/* negative: tuning ran and nothing beat stock.  Then only method, budget, date, best_ratio
	 * (the best original/candidate ratio seen, >= 0) and why (NULL: "unknown") are stored. */
	int negative;
	double best_ratio;
	const char *why;
} st_cache_record;

/* A valid entry, as read.  Strings live as long as the entry. */
typedef struct st_cache_info {
	const char *key, *cubin_sha256, *kernel, *gpu_name, *compute_capability, *driver_version,
		*ptxas_version, *sasstune_version;
	double speedup, speedup_low, speedup_high;
	const char *date, *method, *budget;
	int64_t time;                 /* date as seconds since the epoch */
	const uint8_t *tuned_cubin;   /* checked against tuned_sha256 */
	size_t tuned_cubin_size;
	const char *tuned_sha256;
	const char *variants, *ptxas_options;                /* optional key fields, NULL when absent */
	const char *variant_ptxas_version, *variant_options; /* the record's variant, NULL when absent */
	const char *legality_version, *moves; /* "none" for entries keyed before legality versions */
	int stale;                    /* legality_version is not this library's: never served */
	int negative;                 /* nothing beat stock: no schedule, speedup or cubin (all 0/NULL) */
	double best_ratio;            /* negative: best ratio seen */
	const char *why;              /* negative: why nothing was kept */
} st_cache_info;

void st_cache_sha256_hex(const void *data, size_t size, char out[65]);
/* ST_EINVAL when cubin_sha256 is not 64 hex digits or a field is over 1024 bytes or not printable. */
st_status st_cache_key(const st_cache_key_fields *fields, char key_out[65], st_error *err);

/* dir NULL: $SASSTUNE_CACHE_DIR, else $XDG_CACHE_HOME/sasstune, else $HOME/.cache/sasstune.
 * Nothing is created until something is stored or locked. */
st_status st_cache_open(st_cache **out, const char *dir, st_error *err);
void st_cache_free(st_cache *cache);
const char *st_cache_dir(const st_cache *cache); /* the resolved folder */

/* ST_OK: a hit.  ST_ENOTFOUND: no entry.  ST_EFORMAT: an entry exists but is corrupt or foreign;
 * err says why, treat it as a miss (the next store replaces it). */
st_status st_cache_lookup(st_cache_entry **out, st_cache *cache, const st_cache_key_fields *fields, st_error *err);
/* The same for a full key, or a unique prefix of at least 4 hex digits (ST_EINVAL if ambiguous). */
st_status st_cache_read(st_cache_entry **out, st_cache *cache, const char *key, st_error *err);
const st_cache_info *st_cache_entry_info(const st_cache_entry *entry);
/* The key fields an entry was stored under (strings borrowed from info). */
void st_cache_info_key_fields(const st_cache_info *info, st_cache_key_fields *out);
/* What would store this entry again (strings, schedule and cubin borrowed from it; the schedule
 * and verification texts NULL when out of memory). */
void st_cache_entry_record(st_cache_entry *entry, st_cache_record *out);
/* The schedule and the verification record as compact JSON text, made on first call (a hit
 * does not pay for printing them); they live as long as the entry.  NULL when out of memory. */
const char *st_cache_entry_schedule(st_cache_entry *entry);
const char *st_cache_entry_verification(st_cache_entry *entry);
void st_cache_entry_free(st_cache_entry *entry);

/* Replace the entry of these fields atomically (tuned cubin first, then the entry). */
st_status st_cache_store(st_cache *cache, const st_cache_key_fields *fields, const st_cache_record *rec, st_error *err);

/* Calls cb once per key folder that holds an entry.json, sorted by key: entry is NULL when invalid
 * and problem says why; mtime is entry.json's modification time.  Non-zero from cb stops the walk. */
typedef int (*st_cache_list_cb)(const char *key, const st_cache_entry *entry, const char *problem,
				int64_t mtime, void *payload);
st_status st_cache_list(st_cache *cache, st_cache_list_cb cb, void *payload, st_error *err);
/* Remove a key's folder: entry, tuned cubins, lock files.  key: a full key. */
st_status st_cache_remove(st_cache *cache, const char *key, st_error *err);

/* Claim the right to tune a key (flock on DIR/v1/<key>/tune.lock), waiting at most wait_ms.
 * ST_ETIMEOUT when another process or thread holds it.  Released by st_cache_unlock or when the
 * process dies; a child forked meanwhile shares it until it exits or execs. */
st_status st_cache_lock_tune(st_cache_lock **out, st_cache *cache, const char *key, int wait_ms, st_error *err);
void st_cache_unlock(st_cache_lock *lock);

/* "30m", "12h", "7d", "2w", "90s" or plain seconds. */
st_status st_cache_parse_duration(const char *text, int64_t *seconds_out, st_error *err);

#ifdef __cplusplus
}
#endif
#endif
