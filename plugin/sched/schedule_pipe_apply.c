/* Applying a schedule's "pipe" kernels (schedule_internal.h): each entry made a candidate by
 * st_pipe_make (form 1) or st_pipe2_make (form 2) on the unmodified kernel (which re-checks every rule), then one st_pipe_apply of
 * all of the kernel's entries; on the checked path (`sasstune rewrite`) the independent checker then
 * judges the result (st_check_kernel picks the pipe checker, padding slots having been used). */
#include "schedule_internal.h"
#include "sasstune/pipe.h"
#include "sasstune/sched.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

st_status sp_apply_pipe(const st_schedule *s, size_t i, st_cubin *c, const st_sass_opts *o, st_error *err)
{
	const sched_kernel *k = &s->k[i];
	if (st_cubin_find_kernel(c, k->name) == ST_CUBIN_NONE)
		return st_error_set(err, ST_ENOTFOUND, "%s: no kernel named '%s' (kernels.%s of the schedule)",
				    st_cubin_name(c), k->name, k->name);
	st_pipe_cand *cands = calloc(k->npipe ? k->npipe : 1, sizeof *cands);
	if (!cands)
		return st_error_set(err, ST_ENOMEM, "out of memory");
	st_status rc = ST_OK;
	for (size_t j = 0; j < k->npipe && !rc; j++) {
		const sched_pipe *p = &k->pipe[j];
		rc = p->form == 2 ? st_pipe2_make(c, k->name, o, p->regs, p->header, p->loads, p->n, &cands[j], err)
				  : st_pipe_make(c, k->name, o, p->header, p->loads, p->n, &cands[j], err);
		if (rc)
			st_error_wrap(err, "kernels.%s.pipe[%zu]", k->name, j);
	}
	if (!rc && (rc = st_pipe_apply(c, k->name, o, cands, k->npipe, err)))
		st_error_wrap(err, "kernels.%s.pipe", k->name);
	free(cands);
	return rc;
}

/* The first violation the checker reports (the message names its rule and offset). */
typedef struct first_bad { char msg[200]; } first_bad;

static void keep_first(void *ctx, const char *kernel, uint32_t offset, const char *msg)
{
	first_bad *f = ctx;
	(void)kernel;
	if (!f->msg[0])
		snprintf(f->msg, sizeof f->msg, "0x%x: %s", offset, msg);
}

st_status sp_rewrite_pipes(const st_cubin *orig, const st_schedule *s, const st_sass_opts *o, st_cubin *work,
			   st_error *err)
{
	for (size_t i = 0; i < s->n; i++) {
		if (!s->k[i].npipe)
			continue;
		st_status rc = sp_apply_pipe(s, i, work, o, err);
		if (rc)
			return rc;
		first_bad f = {{0}};
		size_t bad = 0;
		st_error e2 = {0};
		if (st_check_kernel(orig, work, s->k[i].name, o, keep_first, &f, &bad, &e2) && !f.msg[0])
			return st_error_set(err, e2.code ? e2.code : ST_EILLEGAL, "kernels.%s.pipe: %s", s->k[i].name, e2.msg);
		if (bad || f.msg[0])
			return st_error_set(err, ST_EILLEGAL, "kernels.%s.pipe: the independent checker refuses the result: %s (%zu violation%s)",
					    s->k[i].name, f.msg, bad, bad == 1 ? "" : "s");
	}
	return ST_OK;
}
