/* Reading the samples file (schema sasstune-samples-1, docs/profile.md).  Outside input:
 * every field is checked and every error names it; fuzzed by test/fuzz/fuzz_samples.c. */
#include "sasstune/profile.h"
#include "profile_internal.h"
#include "util/util.h"

#include <cJSON.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INT 9007199254740992.0 /* 2^53: every integer up to here is exact */

static bool skip_key(const char *k) { return !strcmp(k, "note") || !strcmp(k, "comment"); }

static st_status get_uint(const cJSON *v, const char *what, double max, uint64_t *out, st_error *err)
{
	if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0) || v->valuedouble > max ||
	    v->valuedouble != floor(v->valuedouble))
		return st_error_set(err, ST_EFORMAT, "%s: expected an integer from 0 to %.0f", what, max);
	*out = (uint64_t)v->valuedouble;
	return ST_OK;
}

static st_status get_str(const cJSON *v, const char *what, char *dst, size_t n, st_error *err)
{
	if (!cJSON_IsString(v) || strlen(v->valuestring) >= n)
		return st_error_set(err, ST_EFORMAT, "%s: expected a string of at most %zu bytes", what, n - 1);
	snprintf(dst, n, "%s", v->valuestring);
	return ST_OK;
}

static st_status parse_meta(const cJSON *root, st_profile_meta *m, st_error *err)
{
	bool schema = false;
	st_status rc = ST_OK;
	for (const cJSON *f = root->child; f && rc == ST_OK; f = f->next) {
		const char *k = f->string;
		uint64_t u = 0;
		if (!strcmp(k, "schema")) {
			if (!cJSON_IsString(f) || strcmp(f->valuestring, "sasstune-samples-1"))
				rc = st_error_set(err, ST_EFORMAT, "schema: expected \"sasstune-samples-1\"");
			schema = true;
		} else if (!strcmp(k, "device")) {
			rc = get_str(f, k, m->device, sizeof m->device, err);
		} else if (!strcmp(k, "kernel")) {
			rc = get_str(f, k, m->kernel, sizeof m->kernel, err);
		} else if (!strcmp(k, "launches")) {
			rc = get_uint(f, k, 1e9, &u, err);
			m->launches = (unsigned)u;
		} else if (!strcmp(k, "period")) {
			if ((rc = get_uint(f, k, 31, &u, err)) == ST_OK && u && u < 5)
				rc = st_error_set(err, ST_EFORMAT, "period: expected 0 (the default) or 5 to 31");
			m->period = (unsigned)u;
		} else if (!strcmp(k, "total_samples")) {
			rc = get_uint(f, k, MAX_INT, &m->total_samples, err);
		} else if (!strcmp(k, "dropped_samples")) {
			rc = get_uint(f, k, MAX_INT, &m->dropped_samples, err);
		} else if (!strcmp(k, "cost_ms")) {
			if (!cJSON_IsNumber(f) || !(f->valuedouble >= 0) || f->valuedouble > 1e12)
				rc = st_error_set(err, ST_EFORMAT, "cost_ms: expected a number from 0 to 1e12");
			else
				m->cost_ms = f->valuedouble;
		} else if (strcmp(k, "pcs") && !skip_key(k)) {
			char shown[65];
			rc = st_error_set(err, ST_EFORMAT, "unknown field '%s'", st_profile_printable(k, shown, sizeof shown));
		}
	}
	if (rc == ST_OK && !schema)
		rc = st_error_set(err, ST_EFORMAT, "schema: missing (expected \"sasstune-samples-1\")");
	return rc;
}

static st_status parse_pc(st_profile *p, const cJSON *pc, size_t i, st_error *err)
{
	char what[64];
	snprintf(what, sizeof what, "pcs[%zu]", i);
	if (!cJSON_IsObject(pc))
		return st_error_set(err, ST_EFORMAT, "%s: expected an object", what);
	const cJSON *fn = NULL, *off = NULL, *stalls = NULL;
	for (const cJSON *f = pc->child; f; f = f->next) {
		if (!strcmp(f->string, "function"))
			fn = f;
		else if (!strcmp(f->string, "offset"))
			off = f;
		else if (!strcmp(f->string, "stalls"))
			stalls = f;
		else if (!skip_key(f->string)) {
			char shown[65];
			return st_error_set(err, ST_EFORMAT, "%s: unknown field '%s'", what,
					    st_profile_printable(f->string, shown, sizeof shown));
		}
	}
	uint64_t o = 0;
	if (!cJSON_IsString(fn) || !fn->valuestring[0] || strlen(fn->valuestring) > 4096)
		return st_error_set(err, ST_EFORMAT, "%s.function: expected a non-empty string", what);
	st_status rc = off ? get_uint(off, "offset", UINT32_MAX, &o, err)
			   : st_error_set(err, ST_EFORMAT, "%s.offset: missing", what);
	if (rc == ST_OK && o % 16)
		rc = st_error_set(err, ST_EFORMAT, "%s.offset: %llu is not a multiple of 16", what, (unsigned long long)o);
	if (rc == ST_OK && !cJSON_IsObject(stalls))
		rc = st_error_set(err, ST_EFORMAT, "%s.stalls: expected an object of reason: samples", what);
	for (const cJSON *s = stalls ? stalls->child : NULL; rc == ST_OK && s; s = s->next) {
		uint64_t n = 0;
		char shown[81];
		if ((rc = get_uint(s, st_profile_printable(s->string, shown, sizeof shown), MAX_INT, &n, err)) == ST_OK)
			rc = st_profile_add(p, fn->valuestring, (uint32_t)o, s->string, n, err);
	}
	if (rc != ST_OK)
		st_error_wrap(err, "%s", what);
	return rc;
}

st_status st_profile_parse(const char *json, size_t len, st_profile **out, st_error *err)
{
	*out = NULL;
	cJSON *root = cJSON_ParseWithLength(json, len);
	if (!root)
		return st_error_set(err, ST_EFORMAT, "not valid JSON");
	st_profile *p = NULL;
	st_status rc = cJSON_IsObject(root) ? st_profile_new(&p, err)
					    : st_error_set(err, ST_EFORMAT, "expected a JSON object");
	if (rc == ST_OK)
		rc = parse_meta(root, st_profile_meta_of(p), err);
	const cJSON *pcs = cJSON_GetObjectItemCaseSensitive(root, "pcs");
	if (rc == ST_OK && !cJSON_IsArray(pcs))
		rc = st_error_set(err, ST_EFORMAT, "pcs: expected an array");
	size_t i = 0;
	for (const cJSON *pc = pcs ? pcs->child : NULL; rc == ST_OK && pc; pc = pc->next, i++)
		rc = parse_pc(p, pc, i, err);
	cJSON_Delete(root);
	if (rc != ST_OK) {
		st_profile_free(p);
		return rc;
	}
	*out = p;
	return ST_OK;
}

st_status st_profile_load(const char *path, st_profile **out, st_error *err)
{
	uint8_t *data;
	size_t size;
	*out = NULL;
	st_status rc = st_read_file(path, &data, &size, err);
	if (rc != ST_OK)
		return rc;
	rc = st_profile_parse((const char *)data, size, out, err);
	free(data);
	if (rc != ST_OK)
		st_error_wrap(err, "%s", path);
	return rc;
}
