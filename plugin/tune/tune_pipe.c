/* A pipe alternative of one tune (tune_pipe.h): find, choose, rewrite, check, describe. */
#include "tune_pipe.h"
#include "tune_internal.h"
#include "sasstune/pipe.h"
#include "sasstune/sched.h"
#include "sasstune/schedule.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void st_tune_pipe_free(st_tune_pipe *p)
{
	if (!p)
		return;
	free(p->cubin);
	free(p->schedule_json);
	p->cubin = NULL;
	p->schedule_json = NULL;
}

/* Each loop's candidate with the most loads (the first of equals), in loop order, into pick.
 * st_pipe_find lists a loop's candidates together, so equal headers are adjacent. */
static size_t choose(const st_pipe_cand *c, size_t n, st_pipe_cand *pick)
{
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (m && pick[m - 1].header == c[i].header) {
			if (c[i].nloads > pick[m - 1].nloads)
				pick[m - 1] = c[i];
		} else {
			pick[m++] = c[i];
		}
	}
	return m;
}

static const char *what(int form) { return form == 2 ? "prefetch" : "rotation"; }

/* The rewritten cubin passes the independent checker (its pipe rules; for a raised register count
 * the occupancy rule) and nvdisasm; else the note. */
static st_status judge(const st_cubin *c, const st_cubin *t, const char *kname, const st_sass_opts *so,
		       const st_tune_pipe_regs *rg, st_tune_pipe *p, int *ok, st_error *err)
{
	size_t violations = 0;
	st_error ce = {0};
	*ok = 0;
	st_status rc = st_check_kernel(c, t, kname, so, NULL, NULL, &violations, &ce);
	if (rc == ST_OK && p->regs_after != p->regs_before)
		rc = st_tune_regs_check(&rg->g, c, t, kname, &violations, &ce);
	if (rc == ST_EILLEGAL) {
		snprintf(p->note, sizeof p->note, "the checker found %zu violation%s in the %s (%.200s); not tried",
			 violations, violations == 1 ? "" : "s", what(p->form), ce.msg);
		return ST_OK;
	}
	if (rc)
		return st_error_set(err, rc, "checking the %s: %s", what(p->form), ce.msg);
	char why[320];
	if ((rc = st_tune_nvdisasm_accepts(t, so, why, sizeof why, err)))
		return rc;
	if (why[0]) {
		snprintf(p->note, sizeof p->note, "nvdisasm does not accept the %s (%.300s); not tried", what(p->form), why);
		return ST_OK;
	}
	*ok = 1;
	return ST_OK;
}

/* The alternative's bytes and schedule into p. */
static st_status keep(const st_cubin *t, const char *kname, const st_pipe_cand *pick, size_t m, st_tune_pipe *p,
		      st_error *err)
{
	st_schedule *sch = NULL;
	st_status rc = st_schedule_new(&sch, err);
	for (size_t i = 0; !rc && i < m; i++)
		rc = st_schedule_add_pipe_form(sch, kname, pick[i].form, pick[i].form == 2 ? pick[i].regs_after : 0,
					       pick[i].header, pick[i].loads, pick[i].nloads, err);
	p->schedule_json = rc ? NULL : st_schedule_to_json(sch);
	st_schedule_free(sch);
	if (rc)
		return rc;
	size_t size;
	const uint8_t *d = st_cubin_data(t, &size);
	p->cubin = malloc(size ? size : 1);
	if (!p->cubin || !p->schedule_json) {
		st_tune_pipe_free(p);
		return st_error_set(err, ST_ENOMEM, "out of memory");
	}
	memcpy(p->cubin, d, size);
	p->size = size;
	return ST_OK;
}

/* The candidates of p->form (form 2 within rg->limit registers); *cands NULL with a note when none. */
static st_status find(const st_cubin *c, const st_sass_kernel *sk, const st_tune_pipe_regs *rg, st_tune_pipe *p,
		      st_pipe_cand **cands, st_error *err)
{
	st_error fe = {0};
	st_status rc = p->form == 2 ? st_pipe2_find_decoded(c, sk, rg->limit, cands, &p->cands, &fe)
				    : st_pipe_find_decoded(c, sk, cands, &p->cands, &fe);
	if (rc == ST_ENOMEM)
		return st_error_set(err, rc, "%s", fe.msg);
	if (rc || !p->cands) { /* what the model cannot read has no candidate: the search goes on */
		if (rc)
			snprintf(p->note, sizeof p->note, "not looked for (%.300s)", fe.msg);
		else if (p->form == 1)
			snprintf(p->note, sizeof p->note, "no candidate (sasstune pipe --why says why)");
		else if (!rg->limit)
			snprintf(p->note, sizeof p->note, "no candidate at the kernel's register count (raised only with a "
				 "launch spec; sasstune pipe --form 2 --regs N --why says why)");
		else
			snprintf(p->note, sizeof p->note, "no candidate within %u registers (sasstune pipe --form 2 --regs %u "
				 "--why says why)", rg->limit, rg->limit);
		st_pipe_cands_free(*cands);
		*cands = NULL;
		p->cands = 0;
	}
	return ST_OK;
}

/* Rewrite a copy of c with pick[0..p->loops) into *t; *t NULL with a note when the rules refuse. */
static st_status rewrite(const st_cubin *c, const char *kname, const st_sass_opts *so, const st_pipe_cand *pick,
			 st_tune_pipe *p, st_cubin **t, st_error *err)
{
	size_t size;
	const uint8_t *d = st_cubin_data(c, &size);
	st_status rc = st_cubin_open_mem(d, size, st_cubin_name(c), t, err);
	if (rc)
		return rc;
	st_error ae = {0};
	st_status ar = st_pipe_apply(*t, kname, so, pick, p->loops, &ae);
	if (ar == ST_OK)
		return ST_OK;
	st_cubin_free(*t);
	*t = NULL;
	if (ar != ST_EILLEGAL)
		return st_error_set(err, ar, "%s: %s", what(p->form), ae.msg);
	snprintf(p->note, sizeof p->note, "the %s was refused (%.300s); not tried", what(p->form), ae.msg);
	return ST_OK;
}

st_status st_tune_pipe_build(const st_cubin *c, const char *kname, const st_sass_opts *so, const st_sass_kernel *sk,
			     int form, const st_tune_pipe_regs *rg, st_tune_pipe *p, st_error *err)
{
	memset(p, 0, sizeof *p);
	p->form = form;
	st_pipe_cand *cands = NULL, *pick = NULL;
	st_cubin *t = NULL;
	st_status rc = find(c, sk, rg, p, &cands, err);
	if (rc || !cands)
		goto done;
	if (!(pick = malloc(p->cands * sizeof *pick))) {
		rc = st_error_set(err, ST_ENOMEM, "out of memory");
		goto done;
	}
	p->loops = choose(cands, p->cands, pick);
	p->regs_before = p->regs_after = pick[0].regs_before;
	for (size_t i = 0; i < p->loops; i++) {
		p->loads += pick[i].nloads;
		p->regs_after = pick[i].regs_after > p->regs_after ? pick[i].regs_after : p->regs_after;
	}
	int ok;
	if ((rc = rewrite(c, kname, so, pick, p, &t, err)) || !t ||
	    (rc = judge(c, t, kname, so, rg, p, &ok, err)) || !ok || (rc = keep(t, kname, pick, p->loops, p, err)))
		goto done;
	char regs[48] = "";
	if (p->regs_after != p->regs_before)
		snprintf(regs, sizeof regs, ", %u -> %u registers", p->regs_before, p->regs_after);
	snprintf(p->note, sizeof p->note, "%zu loop%s, %zu load%s %s%s, checked", p->loops, p->loops == 1 ? "" : "s",
		 p->loads, p->loads == 1 ? "" : "s", form == 2 ? "prefetched" : "rotated", regs);
done:
	st_cubin_free(t);
	free(pick);
	st_pipe_cands_free(cands);
	return rc;
}
