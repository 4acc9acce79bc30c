/* The "pipe" form of a schedule kernel (include/sasstune/schedule.h, docs/cubin.md): family 3 rewrites,
 * {"pipe": [{"loop": OFF, "loads": [OFF, ...]}, ...]} (form 1, rotation) or with "form": 2 and
 * "regs": N (form 2, prefetch into fresh registers, up to N registers), parsed, built, printed and
 * applied through st_pipe_make / st_pipe2_make / st_pipe_apply (docs/pipeline.md "Form 1", "Form 2"). */
#include "schedule_internal.h"
#include "sasstune/pipe.h"
#include "sasstune/sched.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SP_SHAPE "{\"loop\": OFF, \"loads\": [OFF, ...]} (with \"form\": 2, \"regs\": N for form 2)"

/* v: a byte offset, an integer 0..2^32-1 and a multiple of 16 (one instruction's). */
static st_status offset(const char *name, const char *kname, size_t j, const char *fld, const cJSON *v, uint32_t *out,
			st_error *err)
{
	double d = cJSON_IsNumber(v) ? v->valuedouble : -1;
	if (!cJSON_IsNumber(v) || d < 0 || d > 4294967295.0 || floor(d) != d)
		return st_error_set(err, ST_EFORMAT, "%s: kernels.%s.pipe[%zu].%s: expected a non-negative integer byte offset",
				    name, kname, j, fld);
	if ((uint32_t)d % 16)
		return st_error_set(err, ST_EFORMAT, "%s: kernels.%s.pipe[%zu].%s: %u (0x%x) is not a multiple of 16", name,
				    kname, j, fld, (uint32_t)d, (uint32_t)d);
	*out = (uint32_t)d;
	return ST_OK;
}

/* "loads" of entry j: 1..8 distinct offsets. */
static st_status parse_loads(const char *name, const char *kname, size_t j, const cJSON *a, sched_pipe *p,
			     st_error *err)
{
	int n = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : -1;
	if (n < 1 || n > 8)
		return st_error_set(err, ST_EFORMAT, "%s: kernels.%s.pipe[%zu].loads: %s", name, kname, j,
				    n < 0 ? "expected an array of 1..8 load offsets"
				    : n ? "more than 8 loads (a rotation takes at most 8)" : "empty (a rotation takes 1..8 loads)");
	p->n = 0;
	for (const cJSON *e = a->child; e; e = e->next) {
		char fld[24];
		snprintf(fld, sizeof fld, "loads[%u]", p->n);
		st_status rc = offset(name, kname, j, fld, e, &p->loads[p->n], err);
		for (uint32_t m = 0; !rc && m < p->n; m++)
			if (p->loads[m] == p->loads[p->n])
				rc = st_error_set(err, ST_EFORMAT, "%s: kernels.%s.pipe[%zu].%s: 0x%x given twice", name, kname, j,
						  fld, p->loads[m]);
		if (rc)
			return rc;
		p->n++;
	}
	return ST_OK;
}

/* "form" (1 or 2) and "regs" (form 2 only: 0 or the kernel's count .. 255) of entry j. */
static st_status parse_form(const char *name, const char *kname, size_t j, const cJSON *form, const cJSON *regs,
			    sched_pipe *p, st_error *err)
{
	p->form = 1;
	if (form && (!cJSON_IsNumber(form) || (form->valuedouble != 1 && form->valuedouble != 2)))
		return st_error_set(err, ST_EFORMAT, "%s: kernels.%s.pipe[%zu].form: expected 1 (rotation) or 2 (prefetch)",
				    name, kname, j);
	if (form)
		p->form = (uint8_t)form->valuedouble;
	if (regs && p->form != 2)
		return st_error_set(err, ST_EFORMAT, "%s: kernels.%s.pipe[%zu].regs: only form 2 takes a register limit", name,
				    kname, j);
	double d = regs && cJSON_IsNumber(regs) ? regs->valuedouble : 0;
	if (regs && (!cJSON_IsNumber(regs) || d < 0 || d > 255 || floor(d) != d))
		return st_error_set(err, ST_EFORMAT, "%s: kernels.%s.pipe[%zu].regs: expected an integer 0..255", name, kname,
				    j);
	p->regs = (uint16_t)d;
	return ST_OK;
}

static st_status parse_entry(const char *name, const char *kname, size_t j, const cJSON *e, sched_pipe *p,
			     st_error *err)
{
	if (!cJSON_IsObject(e))
		return st_error_set(err, ST_EFORMAT, "%s: kernels.%s.pipe[%zu]: expected " SP_SHAPE, name, kname, j);
	static const char *const names[] = {"loop", "loads", "form", "regs"};
	const cJSON *f4[4] = {NULL, NULL, NULL, NULL};
	for (const cJSON *f = e->child; f; f = f->next) {
		size_t m = 0;
		while (m < 4 && strcmp(f->string, names[m]))
			m++;
		if (m == 4 || f4[m])
			return st_error_set(err, ST_EFORMAT, "%s: kernels.%s.pipe[%zu]: %s field \"%s\"", name, kname, j,
					    m < 4 ? "repeated" : "unknown", f->string);
		f4[m] = f;
	}
	if (!f4[0] || !f4[1])
		return st_error_set(err, ST_EFORMAT, "%s: kernels.%s.pipe[%zu]: missing \"%s\"", name, kname, j,
				    f4[0] ? "loads" : "loop");
	st_status rc = offset(name, kname, j, "loop", f4[0], &p->header, err);
	rc = rc ? rc : parse_loads(name, kname, j, f4[1], p, err);
	return rc ? rc : parse_form(name, kname, j, f4[2], f4[3], p, err);
}

st_status sp_parse_pipe(const char *name, const char *kname, const cJSON *arr, sched_kernel *k, st_error *err)
{
	k->is_pipe = true;
	if (!cJSON_IsArray(arr))
		return st_error_set(err, ST_EFORMAT, "%s: kernels.%s.pipe: expected an array of " SP_SHAPE, name, kname);
	int n = cJSON_GetArraySize(arr);
	if (!(k->pipe = calloc(n ? (size_t)n : 1, sizeof *k->pipe)))
		return st_error_set(err, ST_ENOMEM, "out of memory");
	for (const cJSON *e = arr->child; e; e = e->next) {
		size_t j = k->npipe;
		st_status rc = parse_entry(name, kname, j, e, &k->pipe[j], err);
		for (size_t m = 0; !rc && m < j; m++)
			if (k->pipe[m].header == k->pipe[j].header)
				rc = st_error_set(err, ST_EFORMAT, "%s: kernels.%s.pipe[%zu].loop: loop 0x%x given twice (one entry per loop)",
						  name, kname, j, k->pipe[j].header);
		if (rc)
			return rc;
		k->npipe++;
	}
	return ST_OK;
}

st_status sp_pipe_json(st_buf *b, const sched_kernel *k)
{
	st_status rc = st_buf_printf(b, "\"pipe\": [");
	for (size_t j = 0; !rc && j < k->npipe; j++) {
		rc = st_buf_printf(b, "%s{\"loop\": %u, \"loads\": [", j ? ", " : "", k->pipe[j].header);
		for (uint32_t m = 0; !rc && m < k->pipe[j].n; m++)
			rc = st_buf_printf(b, "%s%u", m ? ", " : "", k->pipe[j].loads[m]);
		rc = rc ? rc : st_buf_printf(b, "]");
		if (!rc && k->pipe[j].form == 2)
			rc = st_buf_printf(b, ", \"form\": 2, \"regs\": %u", k->pipe[j].regs);
		rc = rc ? rc : st_buf_printf(b, "}");
	}
	return rc ? rc : st_buf_printf(b, "]");
}

size_t st_schedule_pipe_count(const st_schedule *s, size_t i) { return i < s->n ? s->k[i].npipe : 0; }

st_status st_schedule_pipe_at(const st_schedule *s, size_t i, size_t j, uint32_t *header, uint32_t loads[8], size_t *n)
{
	if (i >= s->n || j >= s->k[i].npipe)
		return ST_EINVAL;
	const sched_pipe *p = &s->k[i].pipe[j];
	*header = p->header;
	memcpy(loads, p->loads, p->n * sizeof *loads);
	*n = p->n;
	return ST_OK;
}

st_status st_schedule_pipe_form(const st_schedule *s, size_t i, size_t j, unsigned *form, unsigned *regs)
{
	if (i >= s->n || j >= s->k[i].npipe)
		return ST_EINVAL;
	*form = s->k[i].pipe[j].form;
	*regs = s->k[i].pipe[j].regs;
	return ST_OK;
}

/* The entry's shape as the parser demands it: offsets multiples of 16, 1..8 distinct loads. */
static st_status check_entry(const char *kernel, uint32_t header, const uint32_t *loads, size_t n, st_error *err)
{
	if (n < 1 || n > 8)
		return st_error_set(err, ST_EINVAL, "kernels.%s: a rotation takes 1..8 loads, not %zu", kernel, n);
	if (header % 16)
		return st_error_set(err, ST_EINVAL, "kernels.%s: loop 0x%x is not a multiple of 16", kernel, header);
	for (size_t m = 0; m < n; m++) {
		if (loads[m] % 16)
			return st_error_set(err, ST_EINVAL, "kernels.%s: load 0x%x is not a multiple of 16", kernel, loads[m]);
		for (size_t q = 0; q < m; q++)
			if (loads[q] == loads[m])
				return st_error_set(err, ST_EINVAL, "kernels.%s: load 0x%x given twice", kernel, loads[m]);
	}
	return ST_OK;
}

st_status st_schedule_add_pipe(st_schedule *s, const char *kernel, uint32_t header, const uint32_t *loads, size_t n,
			       st_error *err)
{
	return st_schedule_add_pipe_form(s, kernel, 1, 0, header, loads, n, err);
}

st_status st_schedule_add_pipe_form(st_schedule *s, const char *kernel, unsigned form, unsigned regs, uint32_t header,
				    const uint32_t *loads, size_t n, st_error *err)
{
	st_status rc = check_entry(kernel, header, loads, n, err);
	if (rc)
		return rc;
	if (form != 1 && form != 2)
		return st_error_set(err, ST_EINVAL, "kernels.%s: form %u (1 rotation, 2 prefetch)", kernel, form);
	if (regs > 255 || (form == 1 && regs))
		return st_error_set(err, ST_EINVAL, "kernels.%s: register limit %u (form 2 only, 0..255)", kernel, regs);
	sched_kernel *k = sp_kernel(s, kernel, false);
	if (k && (k->is_perm || k->n))
		return st_error_set(err, ST_EINVAL, "kernels.%s already holds %s", kernel,
				    k->is_perm ? "a permutation" : "swaps or moves");
	for (size_t j = 0; k && j < k->npipe; j++)
		if (k->pipe[j].header == header)
			return st_error_set(err, ST_EINVAL, "kernels.%s: loop 0x%x already has a rotation", kernel, header);
	if (!k && !(k = sp_kernel(s, kernel, true)))
		return st_error_set(err, ST_ENOMEM, "out of memory");
	sched_pipe *p = realloc(k->pipe, (k->npipe + 1) * sizeof *p);
	if (!p)
		return st_error_set(err, ST_ENOMEM, "out of memory");
	k->pipe = p;
	k->is_pipe = true;
	p = &k->pipe[k->npipe++];
	memset(p, 0, sizeof *p);
	p->header = header;
	p->form = (uint8_t)form;
	p->regs = (uint16_t)regs;
	p->n = (uint32_t)n;
	memcpy(p->loads, loads, n * sizeof *loads);
	return ST_OK;
}
