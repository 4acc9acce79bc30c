/* entry.json: formatting a record and parsing (with every check) what is read
 * back.  Entry files are outside input: they may be truncated, hand-edited, or
 * written by another version, so nothing in them is trusted until checked. */
#include "cache_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The recorded fields: the first 7 are in every entry; legality_version and moves are in
 * entries of key format 2 (entries without them are of format 1: stale, never looked up). */
static const char *const key_field_names[] = {"cubin_sha256",	  "kernel",	      "gpu_name",
					      "compute_capability", "driver_version", "ptxas_version",
					      "sasstune_version",   "legality_version", "moves"};
#define FIELDS_V1 7
#define FIELDS_V2 9

static const char **info_field(st_cache_info *i, int n)
{
	const char **v[] = {&i->cubin_sha256,	&i->kernel,	   &i->gpu_name,	 &i->compute_capability,
			    &i->driver_version, &i->ptxas_version, &i->sasstune_version, &i->legality_version,
			    &i->moves};
	return v[n];
}

static int printable(const char *s, size_t max)
{
	size_t n = 0;
	for (; s[n]; n++)
		if (n >= max || (unsigned char)s[n] < 0x20 || s[n] == 0x7f)
			return 0;
	return 1;
}

void st_cache_entry_free(st_cache_entry *e)
{
	if (!e)
		return;
	cJSON_Delete(e->root);
	free(e->schedule_json);
	free(e->verification_json);
	free(e->cubin);
	free(e);
}

const st_cache_info *st_cache_entry_info(const st_cache_entry *e) { return e ? &e->info : NULL; }

const char *st_cache_entry_schedule(st_cache_entry *e)
{
	if (e && !e->schedule_json)
		e->schedule_json = cJSON_PrintUnformatted(e->schedule);
	return e ? e->schedule_json : NULL;
}

const char *st_cache_entry_verification(st_cache_entry *e)
{
	if (e && !e->verification_json)
		e->verification_json = cJSON_PrintUnformatted(e->verification);
	return e ? e->verification_json : NULL;
}

static const char *get_string(const cJSON *obj, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
	return cJSON_IsString(v) && v->valuestring ? v->valuestring : NULL;
}

static int get_number(const cJSON *obj, const char *name, double *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
		return 0;
	*out = v->valuedouble;
	return 1;
}

static int speedup_ok(double s, double lo, double hi)
{
	return isfinite(s) && isfinite(lo) && isfinite(hi) && lo > 0 && lo <= s && s <= hi && hi < 1e6;
}

/* An optional string member: absent (NULL, 1), or a printable string (non-empty unless
 * empty_ok); 0 when present and anything else. */
static int optional_string(const cJSON *obj, const char *name, int empty_ok, const char **out)
{
	*out = NULL;
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
	if (!v)
		return 1;
	if (!cJSON_IsString(v) || !v->valuestring || (!empty_ok && !*v->valuestring) ||
	    !printable(v->valuestring, ST_CACHE_FIELD_MAX))
		return 0;
	*out = v->valuestring;
	return 1;
}

/* The optional parts: key fields "variants" and "ptxas_options", and the "variant" object
 * (a ptxas_version and its options) of an entry made from a compile variant. */
static st_status parse_optional(const cJSON *root, const cJSON *fields, st_cache_info *in, st_error *err)
{
	if (!optional_string(fields, "variants", 0, &in->variants) ||
	    !optional_string(fields, "ptxas_options", 0, &in->ptxas_options))
		return st_error_set(err, ST_EFORMAT, "entry field variants or ptxas_options is not a printable string");
	const cJSON *var = cJSON_GetObjectItemCaseSensitive(root, "variant");
	if (!var)
		return ST_OK;
	if (!cJSON_IsObject(var) || !optional_string(var, "ptxas_version", 0, &in->variant_ptxas_version) ||
	    !optional_string(var, "options", 1, &in->variant_options) || !in->variant_ptxas_version ||
	    !in->variant_options)
		return st_error_set(err, ST_EFORMAT, "entry variant needs a ptxas_version and options (printable strings)");
	return ST_OK;
}

#define BAD(...) st_error_set(err, ST_EFORMAT, __VA_ARGS__)

/* The recorded fields, checked against the key (format 2, or 1 for entries made before legality
 * versions: those read as legality "none", stale). */
static st_status parse_fields(st_cache_info *in, const cJSON *root, st_error *err)
{
	const cJSON *fields = cJSON_GetObjectItemCaseSensitive(root, "fields");
	if (!cJSON_IsObject(fields))
		return BAD("entry has no fields object");
	int format = get_string(fields, "legality_version") || get_string(fields, "moves") ? 2 : 1;
	for (int i = 0; i < (format == 2 ? FIELDS_V2 : FIELDS_V1); i++) {
		const char *v = get_string(fields, key_field_names[i]);
		if (!v || !*v || !printable(v, ST_CACHE_FIELD_MAX))
			return BAD("entry field %s is missing or not a printable string", key_field_names[i]);
		*info_field(in, i) = v;
	}
	if (format == 1)
		in->legality_version = in->moves = "none";
	in->stale = strcmp(in->legality_version, st_cache__legality_version()) != 0;
	st_status rc = parse_optional(root, fields, in, err);
	if (rc != ST_OK)
		return rc;
	st_cache_key_fields kf;
	st_cache_info_key_fields(in, &kf);
	char key[65];
	st_error kerr;
	if (st_cache__key_format(&kf, format, key, &kerr) != ST_OK)
		return BAD("entry fields: %s", kerr.msg);
	if (strcmp(key, in->key) != 0)
		return BAD("entry key %.12s... does not match its fields (stale or edited entry)", in->key);
	return ST_OK;
}

static st_status parse_provenance(st_cache_info *in, const cJSON *root, st_error *err)
{
	const cJSON *prov = cJSON_GetObjectItemCaseSensitive(root, "provenance");
	in->date = get_string(prov, "date");
	in->method = get_string(prov, "method");
	in->budget = get_string(prov, "budget");
	if (!in->date || st_cache__parse_date(in->date, &in->time) != ST_OK)
		return BAD("entry provenance has no valid date (YYYY-MM-DDTHH:MM:SSZ)");
	if (!in->method || !in->budget || !printable(in->method, ST_CACHE_FIELD_MAX) ||
	    !printable(in->budget, ST_CACHE_FIELD_MAX))
		return BAD("entry provenance method or budget is missing or not printable");
	return ST_OK;
}

/* A tuned entry's schedule, verification, speedup and tuned cubin. */
static st_status parse_tuned(st_cache_entry *e, const cJSON *root, st_error *err)
{
	st_cache_info *in = &e->info;
	const cJSON *sched = cJSON_GetObjectItemCaseSensitive(root, "schedule");
	const cJSON *verif = cJSON_GetObjectItemCaseSensitive(root, "verification");
	if (!cJSON_IsObject(sched) || !cJSON_IsObject(verif))
		return BAD("entry has no %s object", cJSON_IsObject(sched) ? "verification" : "schedule");
	const cJSON *sp = cJSON_GetObjectItemCaseSensitive(root, "speedup");
	if (!get_number(sp, "estimate", &in->speedup) || !get_number(sp, "low", &in->speedup_low) ||
	    !get_number(sp, "high", &in->speedup_high) || !speedup_ok(in->speedup, in->speedup_low, in->speedup_high))
		return BAD("entry speedup is missing or not 0 < low <= estimate <= high");
	const cJSON *tc = cJSON_GetObjectItemCaseSensitive(root, "tuned_cubin");
	in->tuned_sha256 = get_string(tc, "sha256");
	double tsize;
	if (!st_cache__is_key(in->tuned_sha256) || !get_number(tc, "size", &tsize) || tsize < 1 ||
	    tsize > (double)ST_CACHE_CUBIN_MAX || tsize != floor(tsize))
		return BAD("entry tuned_cubin needs a sha256 and a size between 1 and %zu", ST_CACHE_CUBIN_MAX);
	in->tuned_cubin_size = (size_t)tsize;
	e->schedule = sched;
	e->verification = verif;
	return ST_OK;
}

static st_status parse_root(st_cache_entry *e, const char *expect_key, st_error *err)
{
	st_cache_info *in = &e->info;
	const cJSON *root = e->root;
	if (!cJSON_IsObject(root))
		return BAD("entry is not a JSON object");
	const cJSON *schema = cJSON_GetObjectItemCaseSensitive(root, "schema");
	if (!cJSON_IsNumber(schema))
		return BAD("entry has no schema number");
	if (schema->valuedouble != ST_CACHE_SCHEMA)
		return BAD("entry has schema %.6g, this sasstune reads schema %d", schema->valuedouble, ST_CACHE_SCHEMA);
	in->key = get_string(root, "key");
	if (!st_cache__is_key(in->key))
		return BAD("entry has no valid key");
	if (expect_key && strcmp(in->key, expect_key) != 0)
		return BAD("entry says key %.12s..., it is stored under %.12s...", in->key, expect_key);
	st_status rc = parse_fields(in, root, err);
	if (!rc)
		rc = parse_provenance(in, root, err);
	if (!rc)
		rc = cJSON_GetObjectItemCaseSensitive(root, "negative") ? st_cache__parse_negative(e, root, err)
									  : parse_tuned(e, root, err);
	return rc;
}

st_status st_cache__parse_entry(st_cache_entry **out, const char *json, size_t size, const char *expect_key,
				st_error *err)
{
	*out = NULL;
	st_cache_entry *e = calloc(1, sizeof *e);
	if (!e)
		return st_error_set(err, ST_ENOMEM, "out of memory");
	e->root = cJSON_ParseWithLength(json, size);
	st_status rc = parse_root(e, expect_key, err);
	if (rc != ST_OK) {
		st_cache_entry_free(e);
		return rc;
	}
	*out = e;
	return ST_OK;
}

#undef BAD

static cJSON *parse_object(const char *text, const char *what, st_error *err)
{
	cJSON *o = text ? cJSON_Parse(text) : NULL;
	if (!cJSON_IsObject(o)) {
		cJSON_Delete(o);
		st_error_set(err, ST_EINVAL, "cache record: %s is not a JSON object", what);
		return NULL;
	}
	return o;
}

/* The optional key fields into jf, only when present. */
static int add_optional_fields(cJSON *jf, const st_cache_key_fields *f)
{
	return (!f->variants || cJSON_AddStringToObject(jf, "variants", f->variants)) &&
	       (!f->ptxas_options || cJSON_AddStringToObject(jf, "ptxas_options", f->ptxas_options));
}

/* The record's "variant" object into root, only when it has one. */
static int add_variant(cJSON *root, const st_cache_record *rec)
{
	if (!rec->variant_ptxas_version)
		return 1;
	cJSON *v = cJSON_CreateObject();
	const char *opts = rec->variant_options ? rec->variant_options : "";
	if (!v || !cJSON_AddStringToObject(v, "ptxas_version", rec->variant_ptxas_version) ||
	    !cJSON_AddStringToObject(v, "options", opts) || !cJSON_AddItemToObject(root, "variant", v)) {
		cJSON_Delete(v);
		return 0;
	}
	return 1;
}

/* The checks of a record's tuned part: cubin, speedup, schedule and verification objects. */
static st_status check_tuned(const st_cache_record *rec, cJSON **sched, cJSON **verif, st_error *err)
{
	*sched = *verif = NULL;
	if (!rec->tuned_cubin || rec->tuned_cubin_size == 0 || rec->tuned_cubin_size > ST_CACHE_CUBIN_MAX)
		return st_error_set(err, ST_EINVAL, "cache record: no tuned cubin, or one over %zu bytes",
				    ST_CACHE_CUBIN_MAX);
	if (!speedup_ok(rec->speedup, rec->speedup_low, rec->speedup_high))
		return st_error_set(err, ST_EINVAL, "cache record: speedup %g [%g, %g] is not 0 < low <= estimate <= high",
				    rec->speedup, rec->speedup_low, rec->speedup_high);
	if (!(*sched = parse_object(rec->schedule_json, "schedule", err)))
		return ST_EINVAL;
	if (!(*verif = parse_object(rec->verification_json, "verification", err))) {
		cJSON_Delete(*sched);
		*sched = NULL;
		return ST_EINVAL;
	}
	return ST_OK;
}

/* Add the tuned part (schedule, speedup, verification, tuned_cubin) to root; takes sched and verif. */
static int add_tuned(cJSON *root, const st_cache_record *rec, cJSON *sched, cJSON *verif)
{
	char tuned[65];
	st_cache_sha256_hex(rec->tuned_cubin, rec->tuned_cubin_size, tuned);
	int ok = cJSON_AddItemToObject(root, "schedule", sched);
	if (!ok)
		cJSON_Delete(sched);
	cJSON *sp = cJSON_AddObjectToObject(root, "speedup");
	ok = ok && sp && cJSON_AddNumberToObject(sp, "estimate", rec->speedup) &&
	     cJSON_AddNumberToObject(sp, "low", rec->speedup_low) && cJSON_AddNumberToObject(sp, "high", rec->speedup_high);
	if (!ok || !cJSON_AddItemToObject(root, "verification", verif)) {
		cJSON_Delete(verif);
		return 0;
	}
	cJSON *tc = cJSON_AddObjectToObject(root, "tuned_cubin");
	return tc && cJSON_AddStringToObject(tc, "sha256", tuned) &&
	       cJSON_AddNumberToObject(tc, "size", (double)rec->tuned_cubin_size);
}

/* schema, key, fields and provenance: what every entry has. */
static int add_common(cJSON *root, const char *key, const st_cache_key_fields *fields, const char *date,
		      const char *method, const char *budget)
{
	st_cache_key_fields f;
	st_cache__normalize(fields, &f);
	const char *fv[] = {f.cubin_sha256,	f.kernel,	  f.gpu_name,	       f.compute_capability,
			    f.driver_version, f.ptxas_version, f.sasstune_version, f.legality_version,
			    f.moves};
	int ok = cJSON_AddNumberToObject(root, "schema", ST_CACHE_SCHEMA) && cJSON_AddStringToObject(root, "key", key);
	cJSON *jf = ok ? cJSON_AddObjectToObject(root, "fields") : NULL;
	ok = jf != NULL;
	for (int i = 0; ok && i < FIELDS_V2; i++)
		ok = cJSON_AddStringToObject(jf, key_field_names[i], fv[i]) != NULL;
	ok = ok && add_optional_fields(jf, &f);
	cJSON *prov = ok ? cJSON_AddObjectToObject(root, "provenance") : NULL;
	return prov && cJSON_AddStringToObject(prov, "date", date) && cJSON_AddStringToObject(prov, "method", method) &&
	       cJSON_AddStringToObject(prov, "budget", budget);
}

st_status st_cache__format_entry(char **json_out, const st_cache_key_fields *fields, const st_cache_record *rec,
				 st_error *err)
{
	*json_out = NULL;
	char key[65];
	st_status rc = st_cache_key(fields, key, err);
	if (rc != ST_OK)
		return rc;
	if (!rec)
		return st_error_set(err, ST_EINVAL, "cache record: none");
	const char *method = rec->method && *rec->method ? rec->method : "unknown";
	const char *budget = rec->budget && *rec->budget ? rec->budget : "unknown";
	if (!printable(method, ST_CACHE_FIELD_MAX) || !printable(budget, ST_CACHE_FIELD_MAX))
		return st_error_set(err, ST_EINVAL, "cache record: method or budget is not a printable string");
	if (rec->variant_ptxas_version &&
	    (!*rec->variant_ptxas_version || !printable(rec->variant_ptxas_version, ST_CACHE_FIELD_MAX) ||
	     (rec->variant_options && !printable(rec->variant_options, ST_CACHE_FIELD_MAX))))
		return st_error_set(err, ST_EINVAL, "cache record: variant ptxas version or options is not printable");
	char date[21];
	int64_t t;
	if (rec->date) {
		if (st_cache__parse_date(rec->date, &t) != ST_OK)
			return st_error_set(err, ST_EINVAL, "cache record: date '%.40s' is not YYYY-MM-DDTHH:MM:SSZ",
					    rec->date);
		snprintf(date, sizeof date, "%s", rec->date);
	} else {
		st_cache__format_date((int64_t)time(NULL), date);
	}
	cJSON *sched = NULL, *verif = NULL;
	if (!rec->negative && (rc = check_tuned(rec, &sched, &verif, err)) != ST_OK)
		return rc;
	cJSON *root = cJSON_CreateObject();
	int ok = root && add_common(root, key, fields, date, method, budget);
	if (rec->negative) {
		if (ok && (rc = st_cache__format_negative(root, rec, err)) != ST_OK) {
			cJSON_Delete(root);
			return rc;
		}
	} else if (ok) {
		ok = add_tuned(root, rec, sched, verif);
	} else {
		cJSON_Delete(sched);
		cJSON_Delete(verif);
	}
	ok = ok && (rec->negative || add_variant(root, rec));
	char *text = ok ? cJSON_Print(root) : NULL;
	cJSON_Delete(root);
	if (!text)
		return st_error_set(err, ST_ENOMEM, "out of memory");
	*json_out = text;
	return ST_OK;
}

void st_cache_info_key_fields(const st_cache_info *i, st_cache_key_fields *f)
{
	*f = (st_cache_key_fields){.cubin_sha256 = i->cubin_sha256,
				   .kernel = i->kernel,
				   .gpu_name = i->gpu_name,
				   .compute_capability = i->compute_capability,
				   .driver_version = i->driver_version,
				   .ptxas_version = i->ptxas_version,
				   .sasstune_version = i->sasstune_version,
				   .variants = i->variants,
				   .ptxas_options = i->ptxas_options,
				   .legality_version = i->legality_version,
				   .moves = i->moves};
}

void st_cache_entry_record(st_cache_entry *e, st_cache_record *r)
{
	const st_cache_info *i = st_cache_entry_info(e);
	*r = (st_cache_record){.schedule_json = st_cache_entry_schedule(e),
			       .verification_json = st_cache_entry_verification(e),
			       .speedup = i->speedup,
			       .speedup_low = i->speedup_low,
			       .speedup_high = i->speedup_high,
			       .method = i->method,
			       .budget = i->budget,
			       .date = i->date,
			       .tuned_cubin = i->tuned_cubin,
			       .tuned_cubin_size = i->tuned_cubin_size,
			       .variant_ptxas_version = i->variant_ptxas_version,
			       .variant_options = i->variant_options,
			       .negative = i->negative,
			       .best_ratio = i->best_ratio,
			       .why = i->why};
}
