/* Schedule files (include/sasstune/schedule.h): parse, build, print, apply. */
#include "schedule_internal.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void st_schedule_free(st_schedule *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		free(s->k[i].name);
		free(s->k[i].v);
		free(s->k[i].ctrl);
		free(s->k[i].isc);
		free(s->k[i].aux);
		free(s->k[i].pipe);
	}
	free(s->k);
	free(s);
}

st_status st_schedule_new(st_schedule **out, st_error *err)
{
	*out = calloc(1, sizeof **out);
	return *out ? ST_OK : st_error_set(err, ST_ENOMEM, "out of memory");
}

size_t st_schedule_kernel_count(const st_schedule *s) { return s->n; }

const char *st_schedule_kernel_name(const st_schedule *s, size_t i) { return i < s->n ? s->k[i].name : NULL; }

static sched_kernel *find(st_schedule *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->k[i].name, name))
			return &s->k[i];
	return NULL;
}

static sched_kernel *add_kernel(st_schedule *s, const char *name)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 4;
		sched_kernel *p = realloc(s->k, cap * sizeof *p);
		if (!p)
			return NULL;
		s->k = p;
		s->cap = cap;
	}
	sched_kernel *k = &s->k[s->n];
	memset(k, 0, sizeof *k);
	if (!(k->name = strdup(name)))
		return NULL;
	s->n++;
	return k;
}

sched_kernel *sp_kernel(st_schedule *s, const char *name, bool create)
{
	sched_kernel *k = find(s, name);
	return k || !create ? k : add_kernel(s, name);
}

/* The kernel swaps, control edits and renames go to, found or made: one that holds neither a
 * permutation nor rotations. */
static st_status movable(st_schedule *s, const char *kernel, sched_kernel **out, st_error *err)
{
	sched_kernel *k = find(s, kernel);
	if (k && (k->is_perm || k->is_pipe))
		return st_error_set(err, ST_EINVAL, "kernels.%s already holds %s", kernel,
				    k->is_pipe ? "pipe rotations" : "a permutation");
	if (!k && !(k = add_kernel(s, kernel)))
		return st_error_set(err, ST_ENOMEM, "out of memory");
	*out = k;
	return ST_OK;
}

static bool push(sched_kernel *k, uint32_t x)
{
	if (k->n == k->cap) {
		size_t cap = k->cap ? 2 * k->cap : 16;
		uint32_t *p = realloc(k->v, cap * sizeof *p);
		if (!p)
			return false;
		k->v = p;
		st_ctrl *c = realloc(k->ctrl, cap * sizeof *c);
		if (c)
			k->ctrl = c;
		uint8_t *f = c ? realloc(k->isc, cap) : NULL;
		if (f)
			k->isc = f;
		uint16_t *a = f ? realloc(k->aux, cap * sizeof *a) : NULL;
		if (a)
			k->aux = a;
		if (!c || !f || !a)
			return false;
		k->cap = cap;
	}
	k->isc[k->n] = 0;
	k->aux[k->n] = 0;
	k->v[k->n++] = x;
	return true;
}

static bool push_kind(sched_kernel *k, uint32_t slot, uint8_t kind, uint16_t aux)
{
	if (!push(k, slot))
		return false;
	k->isc[k->n - 1] = kind;
	k->aux[k->n - 1] = aux;
	memset(&k->ctrl[k->n - 1], 0, sizeof *k->ctrl);
	k->nctrl++;
	return true;
}

/* {"slot": i, "rename": r} or {"slot": j, "field": "d"|"a"|"b"|"c", "reg": r} */
static st_status parse_regs(const char *name, const char *kname, size_t i, const cJSON *o, sched_kernel *k,
			    st_error *err)
{
	const cJSON *slot = cJSON_GetObjectItemCaseSensitive(o, "slot"), *ren = cJSON_GetObjectItemCaseSensitive(o, "rename");
	const cJSON *field = cJSON_GetObjectItemCaseSensitive(o, "field"), *reg = cJSON_GetObjectItemCaseSensitive(o, "reg");
	const cJSON *num = ren ? ren : reg;
	int nkeys = cJSON_GetArraySize(o);
	const char *fs = cJSON_IsString(field) ? field->valuestring : "";
	const char *fp = strchr("dabc", fs[0] ? fs[0] : 'x');
	if (!cJSON_IsNumber(slot) || slot->valuedouble < 0 || slot->valuedouble > 4294967295.0 ||
	    floor(slot->valuedouble) != slot->valuedouble || !cJSON_IsNumber(num) || num->valuedouble < 0 ||
	    num->valuedouble > 254 || floor(num->valuedouble) != num->valuedouble ||
	    (ren ? nkeys != 2 : (nkeys != 3 || !fp || fs[1])))
		return st_error_set(err, ST_EFORMAT,
				    "%s: kernels.%s.moves[%zu]: expected {\"slot\": i, \"rename\": 0..254} or {\"slot\": i, "
				    "\"field\": \"d\"|\"a\"|\"b\"|\"c\", \"reg\": 0..254}",
				    name, kname, i);
	bool ok = ren ? push_kind(k, (uint32_t)slot->valuedouble, 2, (uint16_t)num->valuedouble)
		      : push_kind(k, (uint32_t)slot->valuedouble, 3, (uint16_t)((fp - "dabc") << 8 | (int)num->valuedouble));
	return ok ? ST_OK : st_error_set(err, ST_ENOMEM, "out of memory");
}

/* {"regcount": n}: the kernel's register count becomes n (1..255) */
static st_status parse_regcount(const char *name, const char *kname, size_t i, const cJSON *o, sched_kernel *k,
				st_error *err)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(o, "regcount");
	if (cJSON_GetArraySize(o) != 1 || !cJSON_IsNumber(n) || n->valuedouble < 1 || n->valuedouble > 255 ||
	    floor(n->valuedouble) != n->valuedouble)
		return st_error_set(err, ST_EFORMAT, "%s: kernels.%s.moves[%zu]: expected {\"regcount\": 1..255}", name, kname, i);
	return push_kind(k, 0, ST_SCHEDULE_REGCOUNT, (uint16_t)n->valuedouble) ? ST_OK
		: st_error_set(err, ST_ENOMEM, "out of memory");
}

static bool push_ctrl(sched_kernel *k, uint32_t slot, st_ctrl c)
{
	if (!push(k, slot))
		return false;
	k->isc[k->n - 1] = 1;
	k->ctrl[k->n - 1] = c;
	k->nctrl++;
	return true;
}

/* {"slot": i, "stall": s, "yield": y, "wbar": w, "rbar": r, "wait": m, "reuse": u} */
static st_status parse_ctrl(const char *name, const char *kname, size_t i, const cJSON *o, sched_kernel *k,
			    st_error *err)
{
	static const char *const keys[] = {"slot", "stall", "yield", "wbar", "rbar", "wait", "reuse"};
	static const double maxv[] = {4294967295.0, 15, 1, 7, 7, 63, 7};
	if (cJSON_GetObjectItemCaseSensitive(o, "rename") || cJSON_GetObjectItemCaseSensitive(o, "field"))
		return parse_regs(name, kname, i, o, k, err);
	if (cJSON_GetObjectItemCaseSensitive(o, "regcount"))
		return parse_regcount(name, kname, i, o, k, err);
	double v[7];
	int seen[7] = {0};
	for (const cJSON *f = o->child; f; f = f->next) {
		size_t j = 0;
		while (j < 7 && strcmp(f->string, keys[j]))
			j++;
		if (j == 7)
			return st_error_set(err, ST_EFORMAT, "%s: kernels.%s.moves[%zu]: unknown field \"%s\"", name, kname, i,
					    f->string);
		double d = cJSON_IsNumber(f) ? f->valuedouble : -1;
		if (!cJSON_IsNumber(f) || d < 0 || d > maxv[j] || floor(d) != d)
			return st_error_set(err, ST_EFORMAT, "%s: kernels.%s.moves[%zu].%s: expected an integer 0..%.0f", name,
					    kname, i, keys[j], maxv[j]);
		v[j] = d;
		seen[j] = 1;
	}
	for (size_t j = 0; j < 7; j++)
		if (!seen[j])
			return st_error_set(err, ST_EFORMAT, "%s: kernels.%s.moves[%zu]: missing \"%s\"", name, kname, i, keys[j]);
	st_ctrl c = {(uint8_t)v[1], (uint8_t)v[2], (uint8_t)v[3], (uint8_t)v[4], (uint8_t)v[5], (uint8_t)v[6]};
	st_error e2 = {0};
	if (st_ctrl_check(c, &e2))
		return st_error_set(err, ST_EFORMAT, "%s: kernels.%s.moves[%zu]: %s", name, kname, i, e2.msg);
	return push_ctrl(k, (uint32_t)v[0], c) ? ST_OK : st_error_set(err, ST_ENOMEM, "out of memory");
}

/* ---- parsing ---- */

static st_status parse_list(const char *name, const char *kname, const char *field, const cJSON *arr, sched_kernel *k,
			    st_error *err)
{
	if (!cJSON_IsArray(arr))
		return st_error_set(err, ST_EFORMAT, "%s: kernels.%s.%s: expected an array of slot numbers", name, kname,
				    field);
	size_t i = 0;
	for (const cJSON *e = arr->child; e; e = e->next, i++) {
		if (cJSON_IsObject(e) && !strcmp(field, "moves")) {
			st_status rc = parse_ctrl(name, kname, i, e, k, err);
			if (rc)
				return rc;
			continue;
		}
		double d = cJSON_IsNumber(e) ? e->valuedouble : -1;
		if (!cJSON_IsNumber(e) || d < 0 || d > 4294967295.0 || floor(d) != d)
			return st_error_set(err, ST_EFORMAT, "%s: kernels.%s.%s[%zu]: expected a non-negative integer slot",
					    name, kname, field, i);
		if (!push(k, (uint32_t)d))
			return st_error_set(err, ST_ENOMEM, "out of memory");
	}
	return ST_OK;
}

/* Keys end up in one-line messages and are matched against kernel names, which the cubin
 * module also prints with control characters as '?'. */
static void clean_keys(cJSON *n)
{
	for (; n; n = n->next) {
		for (char *p = n->string; p && *p; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				*p = '?';
		clean_keys(n->child);
	}
}

/* The top level of a schedule: an object of exactly "sasstune_schedule" (this version) and "kernels" (an
 * object), which *kernels is set to. */
static st_status parse_root(const cJSON *root, const char *name, const cJSON **kernels, st_error *err)
{
	if (!cJSON_IsObject(root))
		return st_error_set(err, ST_EFORMAT, "%s: expected a JSON object", name);
	const cJSON *ver = NULL;
	*kernels = NULL;
	for (const cJSON *e = root->child; e; e = e->next) {
		if (!strcmp(e->string, "sasstune_schedule"))
			ver = e;
		else if (!strcmp(e->string, "kernels"))
			*kernels = e;
		else
			return st_error_set(err, ST_EFORMAT, "%s: unknown field \"%s\"", name, e->string);
	}
	if (!ver)
		return st_error_set(err, ST_EFORMAT, "%s: missing \"sasstune_schedule\" (the format version, 1)", name);
	if (!cJSON_IsNumber(ver) || ver->valuedouble != ST_SCHEDULE_VERSION)
		return st_error_set(err, ST_EUNSUPPORTED, "%s: sasstune_schedule: version %s is not supported (this is version %d)",
				    name, cJSON_IsNumber(ver) ? "other than 1" : "not a number", ST_SCHEDULE_VERSION);
	if (!*kernels || !cJSON_IsObject(*kernels))
		return st_error_set(err, ST_EFORMAT, "%s: kernels: expected an object of kernel names", name);
	return ST_OK;
}

/* One entry e of "kernels": a new kernel of s with exactly one of "swaps", "moves", "permutation" and
 * "pipe" (schedule_pipe.c). */
static st_status parse_kernel(st_schedule *s, const char *name, const cJSON *e, st_error *err)
{
	if (find(s, e->string))
		return st_error_set(err, ST_EFORMAT, "%s: kernels.%s: given twice", name, e->string);
	if (!cJSON_IsObject(e))
		return st_error_set(err, ST_EFORMAT,
				    "%s: kernels.%s: expected an object with \"swaps\", \"moves\", \"permutation\" or \"pipe\"", name,
				    e->string);
	sched_kernel *k = add_kernel(s, e->string);
	if (!k)
		return st_error_set(err, ST_ENOMEM, "out of memory");
	const cJSON *swaps = NULL, *perm = NULL, *pipe = NULL;
	const char *list = "swaps";
	for (const cJSON *f = e->child; f; f = f->next) {
		if (!strcmp(f->string, "swaps") || !strcmp(f->string, "moves")) {
			if (swaps)
				return st_error_set(err, ST_EFORMAT, "%s: kernels.%s: give only one of \"swaps\" and \"moves\"",
						    name, e->string);
			swaps = f;
			list = f->string;
		}
		else if (!strcmp(f->string, "permutation"))
			perm = f;
		else if (!strcmp(f->string, "pipe"))
			pipe = f;
		else
			return st_error_set(err, ST_EFORMAT, "%s: kernels.%s: unknown field \"%s\"", name, e->string,
					    f->string);
	}
	if (pipe && (swaps || perm))
		return st_error_set(err, ST_EFORMAT, "%s: kernels.%s: \"pipe\" cannot be mixed with \"%s\" (rotations are a form of their own)",
				    name, e->string, perm ? "permutation" : list);
	if (pipe)
		return sp_parse_pipe(name, e->string, pipe, k, err);
	if ((swaps != NULL) == (perm != NULL))
		return st_error_set(err, ST_EFORMAT,
				    "%s: kernels.%s: give exactly one of \"swaps\", \"moves\", \"pipe\" and \"permutation\"", name,
				    e->string);
	k->is_perm = perm != NULL;
	return parse_list(name, e->string, perm ? "permutation" : list, perm ? perm : swaps, k, err);
}

st_status st_schedule_parse(const char *json, size_t len, const char *name, st_schedule **out, st_error *err)
{
	*out = NULL;
	if (!name)
		name = "schedule";
	cJSON *root = cJSON_ParseWithLength(json, len);
	if (!root) {
		const char *at = cJSON_GetErrorPtr();
		size_t off = at && at >= json && at <= json + len ? (size_t)(at - json) : len;
		return st_error_set(err, ST_EFORMAT, "%s: not valid JSON (near byte %zu)", name, off);
	}
	clean_keys(root);
	st_schedule *s = NULL;
	const cJSON *kernels = NULL;
	st_status rc = st_schedule_new(&s, err);
	if (!rc)
		rc = parse_root(root, name, &kernels, err);
	for (const cJSON *e = rc ? NULL : kernels->child; e && !rc; e = e->next)
		rc = parse_kernel(s, name, e, err);
	cJSON_Delete(root);
	if (rc) {
		st_schedule_free(s);
		return rc;
	}
	*out = s;
	return ST_OK;
}

st_status st_schedule_load(const char *path, st_schedule **out, st_error *err)
{
	*out = NULL;
	uint8_t *data;
	size_t size;
	st_status rc = st_read_file(path, &data, &size, err);
	if (rc)
		return rc;
	rc = st_schedule_parse((const char *)data, size, path, out, err);
	free(data);
	return rc;
}

/* ---- using ---- */

st_status st_schedule_permutation(const st_schedule *s, size_t i, size_t n, uint32_t *perm, st_error *err)
{
	if (i >= s->n)
		return st_error_set(err, ST_EINVAL, "schedule kernel index %zu out of range", i);
	const sched_kernel *k = &s->k[i];
	for (size_t j = 0; j < n; j++)
		perm[j] = (uint32_t)j;
	if (!k->is_perm) {
		for (size_t j = 0; j < k->n; j++) {
			uint32_t a = k->v[j];
			if (k->isc[j]) {
				if ((size_t)a >= n)
					return st_error_set(err, ST_EINVAL, "kernels.%s.moves[%zu]: slot %u is past the last slot %zu",
							    k->name, j, a, n ? n - 1 : 0);
				continue;
			}
			if ((size_t)a + 1 >= n)
				return st_error_set(err, ST_EINVAL, "kernels.%s.%s[%zu]: slot %u has no next slot (the kernel has %zu)",
						    k->name, k->nctrl ? "moves" : "swaps", j, a, n);
			uint32_t t = perm[a];
			perm[a] = perm[a + 1];
			perm[a + 1] = t;
		}
		return ST_OK;
	}
	if (k->n != n)
		return st_error_set(err, ST_EINVAL, "kernels.%s.permutation: %zu entries, the kernel has %zu slots", k->name,
				    k->n, n);
	bool *seen = calloc(n ? n : 1, sizeof *seen);
	if (!seen)
		return st_error_set(err, ST_ENOMEM, "out of memory");
	st_status rc = ST_OK;
	for (size_t j = 0; j < n && !rc; j++) {
		uint32_t p = k->v[j];
		if (p >= n)
			rc = st_error_set(err, ST_EINVAL, "kernels.%s.permutation[%zu]: slot %u is past the last slot %zu",
					  k->name, j, p, n - 1);
		else if (seen[p])
			rc = st_error_set(err, ST_EINVAL, "kernels.%s.permutation[%zu]: slot %u appears twice", k->name, j, p);
		else {
			seen[p] = true;
			perm[j] = p;
		}
	}
	free(seen);
	return rc;
}

st_status st_schedule_add_swap(st_schedule *s, const char *kernel, uint32_t slot, st_error *err)
{
	sched_kernel *k;
	st_status rc0 = movable(s, kernel, &k, err);
	if (rc0)
		return rc0;
	return push(k, slot) ? ST_OK : st_error_set(err, ST_ENOMEM, "out of memory");
}

static st_status add_kind(st_schedule *s, const char *kernel, uint32_t slot, uint8_t kind, uint16_t aux, st_error *err)
{
	sched_kernel *k;
	st_status rc0 = movable(s, kernel, &k, err);
	if (rc0)
		return rc0;
	return push_kind(k, slot, kind, aux) ? ST_OK : st_error_set(err, ST_ENOMEM, "out of memory");
}

st_status st_schedule_add_rename(st_schedule *s, const char *kernel, uint32_t slot, unsigned reg, st_error *err)
{
	if (reg > 254)
		return st_error_set(err, ST_EINVAL, "rename to R%u: 0..254", reg);
	return add_kind(s, kernel, slot, 2, (uint16_t)reg, err);
}

st_status st_schedule_add_field(st_schedule *s, const char *kernel, uint32_t slot, unsigned field, unsigned reg,
				st_error *err)
{
	if (reg > 254 || field > 3)
		return st_error_set(err, ST_EINVAL, "register field %u to R%u: field 0..3, register 0..254", field, reg);
	return add_kind(s, kernel, slot, 3, (uint16_t)(field << 8 | reg), err);
}

st_status st_schedule_add_regcount(st_schedule *s, const char *kernel, unsigned regs, st_error *err)
{
	if (regs < 1 || regs > 255)
		return st_error_set(err, ST_EINVAL, "register count %u: 1..255", regs);
	return add_kind(s, kernel, 0, ST_SCHEDULE_REGCOUNT, (uint16_t)regs, err);
}

st_status st_schedule_add_ctrl(st_schedule *s, const char *kernel, uint32_t slot, st_ctrl c, st_error *err)
{
	st_status rc = st_ctrl_check(c, err);
	if (rc)
		return rc;
	sched_kernel *k;
	st_status rc0 = movable(s, kernel, &k, err);
	if (rc0)
		return rc0;
	return push_ctrl(k, slot, c) ? ST_OK : st_error_set(err, ST_ENOMEM, "out of memory");
}

size_t st_schedule_move_count(const st_schedule *s, size_t i)
{
	return i < s->n && !s->k[i].is_perm ? s->k[i].n : 0;
}

st_schedule_move st_schedule_move_at(const st_schedule *s, size_t i, size_t j)
{
	st_schedule_move m = {0};
	if (i >= s->n || s->k[i].is_perm || j >= s->k[i].n)
		return m;
	m.slot = s->k[i].v[j];
	m.is_ctrl = s->k[i].isc[j];
	if (m.is_ctrl == 1)
		m.ctrl = s->k[i].ctrl[j];
	m.field = (uint8_t)(s->k[i].aux[j] >> 8);
	m.reg = (uint8_t)s->k[i].aux[j];
	if (m.is_ctrl == ST_SCHEDULE_REGCOUNT)
		m.field = 0;
	return m;
}

int st_schedule_is_permutation(const st_schedule *s, size_t i)
{
	return i < s->n && s->k[i].is_perm;
}

st_status st_schedule_set_permutation(st_schedule *s, const char *kernel, const uint32_t *perm, size_t n,
				      st_error *err)
{
	sched_kernel *k = find(s, kernel);
	if (k && ((!k->is_perm && k->n) || k->is_pipe))
		return st_error_set(err, ST_EINVAL, "kernels.%s already holds %s", kernel, k->is_pipe ? "pipe rotations" : "swaps");
	if (!k && !(k = add_kernel(s, kernel)))
		return st_error_set(err, ST_ENOMEM, "out of memory");
	k->is_perm = true;
	k->n = 0;
	k->nctrl = 0;
	for (size_t j = 0; j < n; j++)
		if (!push(k, perm[j]))
			return st_error_set(err, ST_ENOMEM, "out of memory");
	return ST_OK;
}

char *st_schedule_to_json(const st_schedule *s)
{
	st_buf b = {0};
	bool ok = st_buf_printf(&b, "{\"sasstune_schedule\": %d, \"kernels\": {", ST_SCHEDULE_VERSION) == ST_OK;
	for (size_t i = 0; ok && i < s->n; i++) {
		const sched_kernel *k = &s->k[i];
		cJSON *str = cJSON_CreateString(k->name);
		char *q = str ? cJSON_PrintUnformatted(str) : NULL;
		cJSON_Delete(str);
		if (k->is_pipe) {
			ok = q && st_buf_printf(&b, "%s%s: {", i ? ", " : "", q) == ST_OK && sp_pipe_json(&b, k) == ST_OK &&
			     st_buf_printf(&b, "}") == ST_OK;
			free(q);
			continue;
		}
		ok = q && st_buf_printf(&b, "%s%s: {\"%s\": [", i ? ", " : "", q,
					k->is_perm ? "permutation" : k->nctrl ? "moves" : "swaps") == ST_OK;
		free(q);
		for (size_t j = 0; ok && j < k->n; j++) {
			const st_ctrl *c = &k->ctrl[j];
			if (!k->is_perm && k->isc[j] == 2)
				ok = st_buf_printf(&b, "%s{\"slot\": %u, \"rename\": %u}", j ? ", " : "", k->v[j], k->aux[j]) == ST_OK;
			else if (!k->is_perm && k->isc[j] == ST_SCHEDULE_REGCOUNT)
				ok = st_buf_printf(&b, "%s{\"regcount\": %u}", j ? ", " : "", k->aux[j]) == ST_OK;
			else if (!k->is_perm && k->isc[j] == 3)
				ok = st_buf_printf(&b, "%s{\"slot\": %u, \"field\": \"%c\", \"reg\": %u}", j ? ", " : "", k->v[j],
						   "dabc"[(k->aux[j] >> 8) & 3], k->aux[j] & 255) == ST_OK;
			else if (!k->is_perm && k->isc[j])
				ok = st_buf_printf(&b,
						   "%s{\"slot\": %u, \"stall\": %u, \"yield\": %u, \"wbar\": %u, \"rbar\": %u, "
						   "\"wait\": %u, \"reuse\": %u}",
						   j ? ", " : "", k->v[j], c->stall, c->yield, c->wbar, c->rbar, c->wait,
						   c->reuse) == ST_OK;
			else
				ok = st_buf_printf(&b, "%s%u", j ? ", " : "", k->v[j]) == ST_OK;
		}
		ok = ok && st_buf_printf(&b, "]}") == ST_OK;
	}
	ok = ok && st_buf_printf(&b, "}}\n") == ST_OK;
	if (!ok) {
		st_buf_free(&b);
		return NULL;
	}
	return (char *)b.data;
}

/* Write kernel k's control edits into c, after its permutation perm (new slot -> old slot). */
static st_status apply_ctrl(const sched_kernel *k, st_cubin *c, size_t kidx, const uint32_t *perm, st_error *err)
{
	if (!k->nctrl)
		return ST_OK;
	size_t n = st_cubin_kernel(c, kidx)->insn_count;
	uint32_t *cur = malloc((n ? n : 1) * sizeof *cur), *inv = malloc((n ? n : 1) * sizeof *inv);
	st_status rc = cur && inv ? ST_OK : st_error_set(err, ST_ENOMEM, "out of memory");
	for (size_t j = 0; !rc && j < n; j++) {
		cur[j] = (uint32_t)j;
		inv[perm[j]] = (uint32_t)j;
	}
	for (size_t j = 0; !rc && j < k->n; j++) {
		uint32_t a = k->v[j];
		if (!k->isc[j]) {
			uint32_t t = cur[a];
			cur[a] = cur[a + 1];
			cur[a + 1] = t;
			continue;
		}
		size_t slot = inv[cur[a]];
		uint8_t word[16];
		memcpy(word, st_cubin_code(c, kidx, NULL) + 16 * slot, 16);
		if (k->isc[j] == 2) /* a rename: its field edits follow */
			continue;
		if (k->isc[j] == ST_SCHEDULE_REGCOUNT) {
			rc = st_cubin_set_regcount(c, kidx, k->aux[j], err);
			continue;
		}
		if (k->isc[j] == 3) {
			static const uint8_t byte[4] = {2, 3, 4, 8};
			word[byte[(k->aux[j] >> 8) & 3]] = (uint8_t)k->aux[j];
			rc = st_cubin_set_regs(c, kidx, slot, word, err);
		} else if (!(rc = st_ctrl_encode(word, k->ctrl[j], err)))
			rc = st_cubin_set_ctrl(c, kidx, slot, word, err);
	}
	free(cur);
	free(inv);
	return rc;
}

/* Every kernel's swaps, control edits and permutation (kernels with rotations are left alone). */
static st_status apply_moves(const st_schedule *s, st_cubin *c, st_error *err)
{
	size_t nk = s->n;
	size_t *idx = calloc(nk ? nk : 1, sizeof *idx);
	uint32_t **perms = calloc(nk ? nk : 1, sizeof *perms);
	st_status rc = ST_OK;
	size_t done = 0;
	if (!idx || !perms) {
		rc = st_error_set(err, ST_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < nk; i++) {
		idx[i] = st_cubin_find_kernel(c, s->k[i].name);
		if (idx[i] == ST_CUBIN_NONE) {
			rc = st_error_set(err, ST_ENOTFOUND, "%s: no kernel named '%s' (kernels.%s of the schedule)",
					  st_cubin_name(c), s->k[i].name, s->k[i].name);
			goto out;
		}
		size_t n = st_cubin_kernel(c, idx[i])->insn_count;
		if (!(perms[i] = malloc((n ? n : 1) * sizeof **perms))) {
			rc = st_error_set(err, ST_ENOMEM, "out of memory");
			goto out;
		}
		if ((rc = st_schedule_permutation(s, i, n, perms[i], err))) {
			st_error_wrap(err, "%s", st_cubin_name(c));
			goto out;
		}
	}
	for (; done < nk; done++)
		if (!s->k[done].is_pipe &&
		    (rc = st_cubin_permute(c, idx[done], perms[done], st_cubin_kernel(c, idx[done])->insn_count, err)))
			break;
	for (size_t i = 0; !rc && i < nk; i++) /* control edits, each on the instruction then in its slot */
		rc = apply_ctrl(&s->k[i], c, idx[i], perms[i], err);
	/* Undo what was applied: the cubin rebuilds from its original bytes, so inverses restore it. */
	while (rc && done-- > 0) {
		if (s->k[done].is_pipe)
			continue;
		size_t n = st_cubin_kernel(c, idx[done])->insn_count;
		uint32_t *inv = malloc((n ? n : 1) * sizeof *inv);
		if (!inv)
			break;
		for (size_t j = 0; j < n; j++)
			inv[perms[done][j]] = (uint32_t)j;
		st_error ignored = {0};
		st_cubin_permute(c, idx[done], inv, n, &ignored);
		free(inv);
	}
out:
	for (size_t i = 0; perms && i < nk; i++)
		free(perms[i]);
	free(perms);
	free(idx);
	return rc;
}

/* Every kernel's rotations (each on its still unmodified code), then the other kernels' moves. */
static st_status apply_all(const st_schedule *s, st_cubin *c, st_error *err)
{
	st_sass_opts o = {0}; /* no listing: nvdisasm found at run time */
	for (size_t i = 0; i < s->n; i++) {
		st_status rc = s->k[i].is_pipe ? sp_apply_pipe(s, i, c, &o, err) : ST_OK;
		if (rc)
			return rc;
	}
	return apply_moves(s, c, err);
}

st_status st_schedule_apply(const st_schedule *s, st_cubin *c, st_error *err)
{
	bool pipe = false;
	for (size_t i = 0; i < s->n; i++)
		pipe |= s->k[i].is_pipe;
	if (!pipe)
		return apply_moves(s, c, err);
	/* rotations are not undone by an inverse: rehearse on a copy, so that a refusal leaves c as it was */
	size_t size;
	const uint8_t *data = st_cubin_data(c, &size);
	st_cubin *copy = NULL;
	st_status rc = st_cubin_open_mem(data, size, st_cubin_name(c), &copy, err);
	if (!rc)
		rc = apply_all(s, copy, err);
	st_cubin_free(copy);
	return rc ? rc : apply_all(s, c, err);
}
