/* The pipe form-2 checker's control fields (docs/sched.md "Checker: pipe form 2"): Q10, the wait
 * masks (a removed member's waits on the next instruction kept in its place, each hand-over's on
 * S', nothing else changed) and the scoreboards; Q11, stalls only raised, yield as the template's,
 * reuse flags only cleared and cleared on every new, moved or copied instruction and before each
 * changed slot. */
#include "check_pipe2.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool reuse_mode(st_ctrl c)
{
	return c.yield && c.stall >= 1 && c.stall <= 11;
}

/* The wait mask Q10 asks of each kept instruction and hand-over of loop l (want[j], tuned slots). */
static void loop_waits(const cp2 *q, const cp2_loop *l, int16_t *want)
{
	const cp *p = q->p;
	const cp_loop *lo = l->lo;
	uint8_t acc = 0, s = (uint8_t)(l->sb >= 0 && l->sb < 6 ? 1u << l->sb : 0);
	for (uint32_t o = lo->f; o <= lo->l; o++) {
		uint8_t w = p->in[o].ctrl.wait;
		uint32_t h = l->ho[o - lo->f];
		if (lo->mem[o - lo->f] && h == CP_NONE) {
			acc |= w;
			continue;
		}
		if (h != CP_NONE) {
			want[h] = (int16_t)(w | acc | s);
			for (unsigned j = 1; j < p->in[o].defs[0].count; j++)
				want[h + j] = (int16_t)(p->in[l->u].ctrl.wait | s);
		} else {
			want[p->inv[o]] = (int16_t)(w | acc);
		}
		acc = 0;
	}
}

/* The template of tuned slot j: the original instruction whose control fields it starts from. */
static uint32_t templ(const cp2 *q, uint32_t j)
{
	const cp *p = q->p;
	if (p->kind[j] == CP_NEW && p->lp[j] && p->src[j] != q->lp[p->lp[j] - 1].lo->e && (p->in[p->src[j]].flags & ST_F_LOAD))
		return q->lp[p->lp[j] - 1].u; /* a hand-over: U's */
	return p->src[j];
}

static void slot_ctrl(cp2 *q, uint32_t j, int want_wait)
{
	cp *p = q->p;
	st_error e = {0};
	uint32_t i = templ(q, j);
	st_ctrl o = p->in[i].ctrl, t = st_ctrl_decode(p->tcode + 16 * j);
	const char *op = p->in[p->src[j]].opcode;
	bool load = p->kind[j] != CP_SAME && p->kind[j] != CP_NEW && (p->in[i].flags & ST_F_LOAD) && p->lp[j] &&
		    q->lp[p->lp[j] - 1].ho[i - q->lp[p->lp[j] - 1].lo->f] != CP_NONE;
	bool ho = p->kind[j] == CP_NEW && i != p->src[j];
	int sb = p->lp[j] ? q->lp[p->lp[j] - 1].sb : -1;
	unsigned wb = load ? (unsigned)sb : ho ? ST_SB_NONE : o.wbar, rb = load || ho ? ST_SB_NONE : o.rbar;
	unsigned ww = want_wait >= 0 ? (unsigned)want_wait : o.wait;
	bool changed = p->kind[j] != CP_SAME || j + 1 >= p->n || p->src[j + 1] != p->src[j] + 1 || p->kind[j + 1] != CP_SAME;
	if (st_ctrl_check(t, &e))
		cp_flag(p, j, "Q11", "%s: %s", op, e.msg);
	if (t.wbar != wb || t.rbar != rb)
		cp_flag(p, j, "Q10", "%s from 0x%x: scoreboards W%u R%u, the rules want W%u R%u", op, 16 * p->src[j], t.wbar,
			t.rbar, wb, rb);
	if (t.wait != ww)
		cp_flag(p, j, "Q10", "%s from 0x%x: wait mask 0x%02x, the rules want 0x%02x", op, 16 * p->src[j], t.wait, ww);
	if (t.yield != o.yield)
		cp_flag(p, j, "Q11", "%s from 0x%x: yield %u, its template's %u", op, 16 * p->src[j], t.yield, o.yield);
	if (p->kind[j] != CP_NEW && t.stall < o.stall)
		cp_flag(p, j, "Q11", "%s from 0x%x: stall lowered %u -> %u", op, 16 * p->src[j], o.stall, t.stall);
	bool ro = reuse_mode(o), rt = reuse_mode(t);
	if ((!ro && !rt && t.reuse != o.reuse) || (rt && (t.reuse & ~(ro ? o.reuse : 0))) || (ro && !rt && t.reuse) ||
	    (rt && changed && t.reuse))
		cp_flag(p, j, "Q11", "%s from 0x%x: reuse bits %u -> %u%s", op, 16 * p->src[j], o.reuse, t.reuse,
			changed ? " (new, copied or before a changed slot: clear them)" : "");
}

void cp2_check_ctrl(cp2 *q)
{
	cp *p = q->p;
	int16_t *want = malloc((p->n ? p->n : 1) * sizeof *want);
	if (!want) {
		cp_flag(p, 0, "Q10", "out of memory");
		return;
	}
	for (uint32_t j = 0; j < p->n; j++)
		want[j] = -1;
	for (size_t l = 0; l < q->nl; l++)
		loop_waits(q, &q->lp[l], want);
	for (uint32_t j = 0; j < p->n; j++)
		if (p->src[j] != CP_NONE)
			slot_ctrl(q, j, want[j]);
	free(want);
}
