/* Internals of family 3 form 2, prefetch into fresh registers (docs/pipeline.md "Form 2: prefetch into
 * fresh registers", rules Q1-Q12): pipe2.c (Q1-Q5, Q8), pipe2_phi.c (φ, Q7, Q9, Q10), pipe2_words.c (the new words and
 * their decoded forms), pipe2_find.c (the public entries), pipe2_apply.c (the plan, Q11 timing through
 * pipe_timing.c's pa_fix, the rewrite).  Form 1's loop finding and closure are reused (pipe.c). */
#ifndef ST_PIPE2_INTERNAL_H
#define ST_PIPE2_INTERNAL_H
#include "pipe_timing.h"

/* One legal form-2 candidate of a loop (original indices, layout order). */
typedef struct pq_cand {
	pp_loop L;
	pp_group g;         /* members (the loads included) and feeders, sorted; pred_from/to unused */
	uint32_t u, e;      /* the induction update U (`VIADD i, i, s` / `IADD3 i, i, s, RZ`) and exit test E */
	unsigned iv;        /* i */
	int ebyte;          /* the byte of E's word that holds i: 3 (Ra) or 4 (Rb) */
	int16_t phi_r[256]; /* φ of the R registers members write, -1 elsewhere */
	int8_t phi_p[8];    /* φ of the P registers members write, -1 elsewhere */
	unsigned ip;        /* i' */
	int pf, sb;         /* Pf, S' */
	unsigned nhand, npeel, regs_before, regs_after;
} pq_cand;

/* Q1 (form 1's P1 through pp_loop_at) with the rule renamed. */
bool pq_loop_at(const pp_kern *x, uint32_t b, pp_loop *L, pp_why *why);
/* Q1-Q10 for loads[0..n) (original indices) of loop L; reglimit as st_pipe2_find's. */
bool pq_build(const pp_kern *x, const pp_loop *L, const uint32_t *loads, size_t n, unsigned reglimit, pq_cand *q,
	      pp_why *why);
/* pipe2_phi.c (Q7, Q9, Q10): φ of W (the registers members write) onto fresh registers keeping the
 * tuples, i', Pf, S' and the register count after. */
bool pq_fresh_all(const pp_kern *x, pq_cand *q, const pp_set *W, unsigned reglimit, pp_why *why);
unsigned pq_width(const st_sass_insn *ld); /* the R destination registers of a load (1, 2, 4; 0 other) */
void pq_to_cand(const pp_kern *x, const pq_cand *q, st_pipe_cand *c);
bool pq_same(const st_pipe_cand *a, const st_pipe_cand *b); /* the fields a re-check must reproduce */

/* pipe2_words.c: member i renamed by φ as it reads in the prefetch block (prefetch 1: i -> i', loads
 * guarded by continue(Pf)) or in the peel (0: reads i, loads unguarded); word and decoded form. */
bool pq_member_edit(const pp_kern *x, const pq_cand *q, uint32_t i, int prefetch, pa_edit *e, pp_why *why);
void pq_copy_edit(const st_sass_insn *y, pa_edit *e); /* y unchanged */
/* The hand-over D = φ(D) + 0 (a copy of U), I (i' = i + s) and F (Pf = cmp(i', b)). */
void pq_hand_edit(const pp_kern *x, const pq_cand *q, unsigned d, pa_edit *e);
void pq_i_edit(const pp_kern *x, const pq_cand *q, pa_edit *e);
void pq_f_edit(const pp_kern *x, const pq_cand *q, pa_edit *e);

/* One instruction of the new code of a loop: an original slot (a non-member unchanged but for its
 * control fields, or a member's prefetch copy, edited in place) or an inserted word. */
typedef struct pq_ent {
	int32_t orig;   /* the original slot it occupies, -1: inserted */
	bool edited;    /* ed holds its word and decoded form; else it is the original instruction */
	pa_edit ed;
	st_ctrl ctl;    /* control fields of an inserted entry (an original slot's: pq_plan.ct) */
} pq_ent;
typedef struct pq_loop {
	pq_cand q;
	pq_ent *b, *peel; /* B's new layout and the peel */
	uint32_t nb, np;
} pq_loop;
typedef struct pq_plan {
	pp_kern x;
	st_ctrl *ct; /* per original slot */
	pq_loop *lp; /* sorted by B, last first */
	size_t n;
} pq_plan;
static inline st_ctrl *pq_ct(pq_plan *P, pq_ent *e) { return e->orig >= 0 ? &P->ct[e->orig] : &e->ctl; }
static inline const st_sass_insn *pq_insn(const pq_plan *P, const pq_ent *e)
{
	return e->edited ? &e->ed.x : &P->x.in[e->orig];
}
/* pipe2_seq.c: Q11 over the plan (the wrap, the entry through the peel, the exit), stalls raised. */
bool pq_time_loop(pq_plan *P, pq_loop *lp, pp_why *why);

/* pipe2_apply.c: st_pipe_apply for form-2 candidates. */
st_status pq_apply(st_cubin *c, const char *kernel, const st_sass_opts *o, const st_pipe_cand *cands, size_t n,
		   st_error *err);
#endif
