/* The independent checker's reading of a pipe form-2 rewrite (family 3 form 2, "prefetch into fresh
 * registers"; /work spec pipe2-rules.md, docs/sched.md "Checker: pipe form 2"): the peel before B,
 * each chosen load replaced at its place by hand-overs D = phi(D) + 0, the prefetch block (I, F, the
 * group renamed by phi) after the last hand-over.  Read from the original decode and the tuned
 * kernel's own decode; shares the form-1 checker's state (check_pipe.h) and its closure, liveness
 * and timing walks, nothing of the rewrite (pipe*.c). */
#ifndef ST_CHECK_PIPE2_H
#define ST_CHECK_PIPE2_H

#include "check_pipe.h"

#define CP2_NR 256 /* GPR indices R0..R255 (R255 = RZ never appears) */

/* Form 2's part of one loop; lo: the shared form-1 fields (f, l, tp = the peel's first slot, L its
 * length, tn the tuned body's slots with the back branch, mem = members, clo, feed, p, e, pe, cneg). */
typedef struct cp2_loop {
	cp_loop *lo;
	uint32_t u;          /* U, original index (the only writer of i in B) */
	unsigned iv, ifield; /* i; E's operand field holding i: 24 (Ra) or 32 (Rb) */
	uint32_t pf;         /* tuned slot of I; F at pf + 1, the member copies after */
	uint32_t nm;         /* members */
	uint32_t *ho;        /* per B position: a chosen load's first hand-over slot, else CP_NONE */
	int16_t rphi[CP2_NR], pphi[8]; /* phi on R and P registers, -1 where none */
	int ip, pfp, sb;     /* i', Pf, S' (-1 unknown) */
} cp2_loop;

typedef struct cp2 {
	cp *p;
	const st_sass_insn *t;  /* the tuned kernel's own decode */
	cp2_loop *lp;
	size_t nl;
	unsigned regs_o, regs_t; /* register counts, original and tuned */
	unsigned named_o;        /* the original's highest named GPR + 1; [named_o, regs_o) is ptxas's reserve */
} cp2;

/* Judge a rewrite that used padding as form 2 (check_pipe2.c): false when it does not line up as
 * one (nothing reported, *why says where); true when it did, its violations reported. */
bool ck_pipe2(ck *c, const st_cubin *orig, size_t ko, const st_cubin *tuned, size_t kt, char *why, size_t wn);

/* Fields (q->t NULL: the words alone, before the rewrite is decoded): the hand-over / I shape (a copy of U outside Rd, Ra and the 32-bit immediate, guard
 * aside) and F's (a copy of E outside Pd [83:81], Ra, Rb, guard aside) (check_pipe2_words.c). */
bool cp2_ucopy(const cp2 *q, const cp2_loop *l, uint32_t t);
bool cp2_ecopy(const cp2 *q, const cp2_loop *l, uint32_t t);
/* Q6..Q8: the hand-overs, the prefetch block, the peel, phi read off the words (check_pipe2_words.c). */
void cp2_check_words(cp2 *q, cp2_loop *l);
/* Q1, Q3..Q5, phi's freshness, Q9, Q12 on the original reading (check_pipe2_rules.c). */
void cp2_check_rules(cp2 *q, cp2_loop *l);
void cp2_check_regs(cp2 *q);
/* Q10 waits and scoreboards, Q11's control fields (check_pipe2_ctrl.c). */
void cp2_check_ctrl(cp2 *q);

#endif
