/* Warp stall samples per (function, offset, reason): a hash table of counts, the
 * reason names, and the samples file (JSON).  See include/sasstune/profile.h. */
#include "sasstune/profile.h"
#include "profile_internal.h"
#include "util/util.h"

#include <cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FUNCS 4096u
#define MAX_ENTRIES (1u << 22)
#define NAME_MAX_LEN 63

typedef struct entry {
	uint32_t fn, off, reason; /* fn + 1: 0 marks an empty slot */
	uint64_t samples;
} entry;

struct st_profile {
	st_profile_meta meta;
	char *reasons[ST_PROFILE_MAX_REASONS];
	size_t nreasons;
	char **funcs;
	size_t nfuncs;
	entry *tab; /* open addressing, capacity a power of two, at most half full */
	size_t cap, used;
};

st_status st_profile_new(st_profile **out, st_error *err)
{
	st_profile *p = calloc(1, sizeof *p);
	if (!p)
		return st_error_set(err, ST_ENOMEM, "out of memory");
	*out = p;
	return ST_OK;
}

void st_profile_free(st_profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nreasons; i++)
		free(p->reasons[i]);
	for (size_t i = 0; i < p->nfuncs; i++)
		free(p->funcs[i]);
	free(p->funcs);
	free(p->tab);
	free(p);
}

st_profile_meta *st_profile_meta_of(st_profile *p) { return &p->meta; }
const st_profile_meta *st_profile_get_meta(const st_profile *p) { return &p->meta; }
size_t st_profile_reason_count(const st_profile *p) { return p->nreasons; }
const char *st_profile_reason(const st_profile *p, size_t r) { return r < p->nreasons ? p->reasons[r] : NULL; }

const char *st_profile_short_name(const char *reason, char *buf, size_t n)
{
	static const char prefix[] = "smsp__pcsamp_warps_issue_stalled_";
	static const struct { const char *full, *brief; } names[] = {
		{"long_scoreboard", "long_sb"}, {"short_scoreboard", "short_sb"},
		{"math_pipe_throttle", "math_pipe"}, {"no_instructions", "no_inst"},
		{"branch_resolving", "branch"}, {"dispatch_stall", "dispatch"},
	};
	if (!strncmp(reason, prefix, sizeof prefix - 1))
		reason += sizeof prefix - 1;
	size_t len = strlen(reason);
	if (len >= 11 && !strcmp(reason + len - 11, "_not_issued"))
		return NULL;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcmp(reason, names[i].full))
			reason = names[i].brief;
	snprintf(buf, n, "%s", reason);
	return buf;
}

const char *st_profile_printable(const char *s, char *buf, size_t n)
{
	size_t i = 0;
	for (; s[i] && i + 1 < n; i++)
		buf[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	buf[n ? i : 0] = 0;
	return buf;
}

static bool name_ok(const char *s)
{
	size_t n = strlen(s);
	if (!n || n > NAME_MAX_LEN)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

long st_profile_reason_find(const st_profile *p, const char *name)
{
	for (size_t i = 0; i < p->nreasons; i++)
		if (!strcmp(p->reasons[i], name))
			return (long)i;
	return -1;
}

static long func_find(const st_profile *p, const char *fn)
{
	for (size_t i = 0; i < p->nfuncs; i++)
		if (!strcmp(p->funcs[i], fn))
			return (long)i;
	return -1;
}

static uint64_t slot_of(uint32_t fn, uint32_t off, uint32_t r)
{
	uint64_t x = ((uint64_t)fn << 40) ^ ((uint64_t)r << 32) ^ off;
	return st_splitmix64(&x);
}

static entry *find(const st_profile *p, uint32_t fn, uint32_t off, uint32_t r)
{
	if (!p->cap)
		return NULL;
	for (size_t i = slot_of(fn, off, r) & (p->cap - 1);; i = (i + 1) & (p->cap - 1)) {
		entry *e = &p->tab[i];
		if (!e->fn || (e->fn == fn + 1 && e->off == off && e->reason == r))
			return e;
	}
}

static st_status grow(st_profile *p, st_error *err)
{
	size_t cap = p->cap ? 2 * p->cap : 256;
	entry *old = p->tab, *tab = calloc(cap, sizeof *tab);
	if (!tab)
		return st_error_set(err, ST_ENOMEM, "out of memory");
	size_t oldcap = p->cap;
	p->tab = tab;
	p->cap = cap;
	for (size_t i = 0; i < oldcap; i++)
		if (old[i].fn)
			*find(p, old[i].fn - 1, old[i].off, old[i].reason) = old[i];
	free(old);
	return ST_OK;
}

static st_status intern(char **list, size_t *n, size_t max, const char *s, const char *what, uint32_t *id,
			st_error *err)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp(list[i], s))
			return *id = (uint32_t)i, ST_OK;
	if (*n >= max)
		return st_error_set(err, ST_EFORMAT, "more than %zu %s", max, what);
	if (!(list[*n] = strdup(s)))
		return st_error_set(err, ST_ENOMEM, "out of memory");
	*id = (uint32_t)(*n)++;
	return ST_OK;
}

st_status st_profile_add(st_profile *p, const char *function, uint32_t offset, const char *reason,
			 uint64_t samples, st_error *err)
{
	char buf[NAME_MAX_LEN + 2];
	const char *name = st_profile_short_name(reason, buf, sizeof buf);
	if (!name || !samples)
		return ST_OK;
	if (samples > ST_PROFILE_MAX_SAMPLES)
		samples = ST_PROFILE_MAX_SAMPLES;
	char shown[81];
	if (!name_ok(name) || strlen(reason) > 200)
		return st_error_set(err, ST_EFORMAT, "bad stall reason name '%s'",
				    st_profile_printable(reason, shown, sizeof shown));
	if (!function[0] || strlen(function) > 4096)
		return st_error_set(err, ST_EFORMAT, "bad function name");
	uint32_t r = 0, fn = 0;
	st_status rc = intern(p->reasons, &p->nreasons, ST_PROFILE_MAX_REASONS, name, "stall reasons", &r, err);
	if (rc == ST_OK && func_find(p, function) < 0 && p->nfuncs % 16 == 0) {
		if (p->nfuncs >= MAX_FUNCS)
			return st_error_set(err, ST_EFORMAT, "more than %u functions", MAX_FUNCS);
		char **f = realloc(p->funcs, (p->nfuncs + 16) * sizeof *f);
		if (!f)
			return st_error_set(err, ST_ENOMEM, "out of memory");
		p->funcs = f;
	}
	if (rc == ST_OK)
		rc = intern(p->funcs, &p->nfuncs, MAX_FUNCS, function, "functions", &fn, err);
	if (rc != ST_OK)
		return rc;
	entry *e = find(p, fn, offset, r);
	if (!e || !e->fn) {
		if (p->used >= MAX_ENTRIES)
			return st_error_set(err, ST_EFORMAT, "more than %u sample entries", MAX_ENTRIES);
		if (2 * (p->used + 1) > p->cap && (rc = grow(p, err)) != ST_OK)
			return rc;
		e = find(p, fn, offset, r);
		*e = (entry){.fn = fn + 1, .off = offset, .reason = r};
		p->used++;
	}
	/* saturate at 2^53, the largest count the samples file holds exactly */
	e->samples = samples >= ST_PROFILE_MAX_SAMPLES - e->samples ? ST_PROFILE_MAX_SAMPLES : e->samples + samples;
	return ST_OK;
}

uint64_t st_profile_at(const st_profile *p, const char *function, uint32_t offset, long r)
{
	long fn = func_find(p, function);
	if (fn < 0)
		return 0;
	uint64_t sum = 0;
	for (size_t i = 0; i < p->nreasons; i++) {
		if (r >= 0 && (size_t)r != i)
			continue;
		const entry *e = find(p, (uint32_t)fn, offset, (uint32_t)i);
		if (e && e->fn)
			sum += e->samples;
	}
	return sum;
}

uint64_t st_profile_function_total(const st_profile *p, const char *function, long r)
{
	long fn = func_find(p, function);
	uint64_t sum = 0;
	for (size_t i = 0; fn >= 0 && i < p->cap; i++) {
		const entry *e = &p->tab[i];
		if (e->fn == (uint32_t)fn + 1 && (r < 0 || e->reason == (uint32_t)r))
			sum += e->samples;
	}
	return sum;
}

/* ---- the samples file ---- */
static int cmp_entry(const void *a, const void *b, void *ctx)
{
	const st_profile *p = ctx;
	const entry *x = a, *y = b;
	int c = x->fn == y->fn ? 0 : strcmp(p->funcs[x->fn - 1], p->funcs[y->fn - 1]);
	if (c)
		return c;
	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	/* reasons by name, not by interning order (which follows the input): a written file reads back
	 * and writes again byte for byte (fuzz_samples) */
	return x->reason == y->reason ? 0 : strcmp(p->reasons[x->reason], p->reasons[y->reason]);
}

static cJSON *meta_json(const st_profile *p)
{
	const st_profile_meta *m = &p->meta;
	cJSON *j = cJSON_CreateObject();
	cJSON_AddStringToObject(j, "schema", "sasstune-samples-1");
	cJSON_AddStringToObject(j, "device", m->device);
	cJSON_AddStringToObject(j, "kernel", m->kernel);
	cJSON_AddNumberToObject(j, "launches", m->launches);
	cJSON_AddNumberToObject(j, "period", m->period);
	cJSON_AddNumberToObject(j, "total_samples", (double)m->total_samples);
	cJSON_AddNumberToObject(j, "dropped_samples", (double)m->dropped_samples);
	cJSON_AddNumberToObject(j, "cost_ms", m->cost_ms);
	return j;
}

char *st_profile_to_json(const st_profile *p)
{
	entry *all = malloc((p->used ? p->used : 1) * sizeof *all);
	cJSON *root = meta_json(p), *pcs = cJSON_AddArrayToObject(root, "pcs");
	char *text = NULL;
	if (!all || !root || !pcs)
		goto out;
	size_t n = 0;
	for (size_t i = 0; i < p->cap; i++)
		if (p->tab[i].fn)
			all[n++] = p->tab[i];
	qsort_r(all, n, sizeof *all, cmp_entry, (void *)p);
	cJSON *stalls = NULL;
	for (size_t i = 0; i < n; i++) {
		if (!i || all[i].fn != all[i - 1].fn || all[i].off != all[i - 1].off) {
			cJSON *pc = cJSON_CreateObject();
			cJSON_AddItemToArray(pcs, pc);
			cJSON_AddStringToObject(pc, "function", p->funcs[all[i].fn - 1]);
			cJSON_AddNumberToObject(pc, "offset", all[i].off);
			stalls = cJSON_AddObjectToObject(pc, "stalls");
		}
		cJSON_AddNumberToObject(stalls, p->reasons[all[i].reason], (double)all[i].samples);
	}
	text = cJSON_Print(root);
out:
	free(all);
	cJSON_Delete(root);
	return text;
}
