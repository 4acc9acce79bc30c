/* Internals of the schedule cache (not public API).
 *
 * On disk (docs/cache.md has the full format):
 *
 *   DIR/v1/<key>/entry.json        the entry; names its tuned cubin by SHA-256
 *   DIR/v1/<key>/<sha256>.cubin    the tuned cubin (content-addressed, immutable)
 *   DIR/v1/<key>/store.lock        flock held while an entry is replaced
 *   DIR/v1/<key>/tune.lock         flock held by the process tuning the key
 *
 * Every write is a temporary file plus rename; the cubin is written before the
 * entry that names it, and replaced cubins are removed only under store.lock,
 * one replacement late (the previous entry's cubin is kept).  Readers take no
 * lock: a reader that still finds the named cubin gone (two replacements
 * between its two reads) reads the entry again.
 */
#ifndef ST_CACHE_INTERNAL_H
#define ST_CACHE_INTERNAL_H

#include "sasstune/cache.h"

#include <cJSON.h>

#define ST_CACHE_FIELD_MAX ST_CACHE_KEY_FIELD_MAX /* bytes in one key field */
#define ST_CACHE_ENTRY_MAX (64u << 20)          /* bytes in entry.json */
#define ST_CACHE_CUBIN_MAX ((size_t)1 << 30)    /* bytes in a tuned cubin */

struct st_cache_entry {
	st_cache_info info; /* strings point into root or the fields below */
	cJSON *root;
	const cJSON *schedule, *verification; /* in root */
	char *schedule_json, *verification_json; /* printed on demand */
	uint8_t *cubin;
};

/* Key fields with NULL/"" replaced by "unknown", a NULL sasstune_version by ours, and the
 * optional fields (variants, ptxas_options) "" by NULL. */
void st_cache__normalize(const st_cache_key_fields *in, st_cache_key_fields *out);

/* The key of fields in key text format 1 (before legality versions) or 2 (now); st_cache_key is format 2. */
st_status st_cache__key_format(const st_cache_key_fields *fields, int format, char key_out[65], st_error *err);
/* ST_LEGALITY_VERSION as text. */
const char *st_cache__legality_version(void);

/* A negative entry (root has "negative"): its provenance-free part, into e->info.  ST_EFORMAT. */
st_status st_cache__parse_negative(st_cache_entry *e, const cJSON *root, st_error *err);
/* Add a negative record's "negative" object to root.  ST_EINVAL names a bad field. */
st_status st_cache__format_negative(cJSON *root, const st_cache_record *rec, st_error *err);

/* Do an entry's fields equal the ones looked up (normalised)? */
int st_cache__fields_match(const st_cache_key_fields *fields, const st_cache_info *info);

/* Is text 64 lowercase hex digits? */
int st_cache__is_key(const char *text);

/* Parse and check entry.json text (not NUL-terminated).  expect_key may be NULL.
 * The tuned cubin is not read: info.tuned_cubin is NULL.  ST_EFORMAT names the problem. */
st_status st_cache__parse_entry(st_cache_entry **out, const char *json, size_t size, const char *expect_key,
				st_error *err);

/* The entry.json text for a record (checked first: ST_EINVAL names the bad field). */
st_status st_cache__format_entry(char **json_out, const st_cache_key_fields *fields, const st_cache_record *rec,
				 st_error *err);

/* "YYYY-MM-DDTHH:MM:SSZ" <-> seconds since the epoch. */
st_status st_cache__parse_date(const char *text, int64_t *time_out);
void st_cache__format_date(int64_t time, char out[21]);

#endif
