/* Unit tests of the pipe form-2 checker (plugin/sched/check_pipe2*.c; docs/sched.md "Checker: pipe
 * form 2"): a form-2 rewrite built by hand on the row-sum fixture's loop 0x150 (loads 0x1d0 and
 * 0x200; members 0x150 VIADD R5, 0x160 LEA R2/P1, 0x190 LEA.HI.X R3, 0x1a0 LEA R4/P2, 0x1c0
 * LEA.HI.X R5, 0x1d0 LDG R3, 0x200 LDG R5; i = R11, U 0x240, E 0x250, back branch @!P1) is
 * accepted; one hand-made hazard per rule is reported with its rule.  phi: R2:R3 -> R22:R23,
 * R4:R5 -> R24:R25, P1 -> P3, P2 -> P4; i' = R13, Pf = P5, S' = SB0; the register count raised
 * from 21 to 28: R25 and the reserve of 2 the original keeps above its highest named register, R18
 * (the fixture's listing names none of these).  Built with st_cubin_insert (11
 * slots at the loop's start), st_cubin_set_branch (the back branch to the body's new first slot)
 * and st_cubin_set_regcount, then the 32 slots before the back branch written in the image bytes
 * (set_word takes inserted slots only; the body's moved members get renamed words) and the cubin
 * opened again from them. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define F0 21   /* the loop's first slot (0x150) */
#define BRA0 42 /* its back branch (0x2a0) */
#define U0 36   /* U: VIADD R11, R11, 0x80 */
#define E0 37   /* E: ISETP.GE.AND P1, PT, R11, R12, PT */

/* One tuned slot of the loop region: 'k'ept original, 'p'eel copy, prefetch 'b'lock copy,
 * 'h'and-over of a load, 'i' = I, 'f' = F; o: the original slot. */
typedef struct lay { char k; uint8_t o; } lay;
static const lay good[] = {
	{'p', 21}, {'p', 22}, {'p', 25}, {'p', 26}, {'p', 28}, {'p', 29}, {'p', 32},
	{'k', 23}, {'k', 24}, {'k', 27}, {'h', 29}, {'k', 30}, {'k', 31}, {'h', 32}, {'i', 0}, {'f', 0},
	{'b', 21}, {'b', 22}, {'b', 25}, {'b', 26}, {'b', 28}, {'b', 29}, {'b', 32},
	{'k', 33}, {'k', 34}, {'k', 35}, {'k', 36}, {'k', 37}, {'k', 38}, {'k', 39}, {'k', 40}, {'k', 41},
};
#define N(a) (sizeof a / sizeof a[0])

static void set_bits(uint8_t *w, unsigned at, unsigned len, unsigned v)
{
	for (unsigned i = 0; i < len; i++) {
		uint8_t m = (uint8_t)(1u << ((at + i) % 8));
		w[(at + i) / 8] = (uint8_t)((v >> i & 1) ? w[(at + i) / 8] | m : w[(at + i) / 8] & ~m);
	}
}

static unsigned get_bits(const uint8_t *w, unsigned at, unsigned len)
{
	unsigned v = 0;
	for (unsigned i = 0; i < len; i++)
		v |= (unsigned)(w[(at + i) / 8] >> ((at + i) % 8) & 1) << i;
	return v;
}

static void ctrl(uint8_t *w, int stall, int wbar, int rbar, int wait, int reuse)
{
	st_ctrl c = st_ctrl_decode(w);
	if (stall >= 0)
		c.stall = (uint8_t)stall;
	if (wbar >= 0)
		c.wbar = (uint8_t)wbar;
	if (rbar >= 0)
		c.rbar = (uint8_t)rbar;
	if (wait >= 0)
		c.wait = (uint8_t)wait;
	if (reuse >= 0)
		c.reuse = (uint8_t)reuse;
	st_error err = {0};
	if (st_ctrl_encode(w, c, &err))
		fail_msg("ctrl: %s", err.msg);
}

/* phi on a register field: R2..R5 -> R22..R25; i = R11 -> R13 in the prefetch block. */
static uint8_t rphi(uint8_t r, bool block)
{
	return r >= 2 && r <= 5 ? (uint8_t)(r + 20) : block && r == 11 ? 13 : r;
}

/* A member's word renamed: Rd, Ra, Rb (not VIADD's immediate), P1 -> P3 and P2 -> P4 in [83:81]
 * and [89:87]; a load in the block under @!P5, every load setting SB0; reuse cleared. */
static void renamed(uint8_t *w, const uint8_t *o, bool block)
{
	memcpy(w, o, 16);
	bool viadd = get_bits(o, 0, 12) == 0x836, ldg = get_bits(o, 0, 12) == 0x981;
	w[2] = rphi(o[2], false), w[3] = rphi(o[3], block);
	if (!viadd && !ldg)
		w[4] = rphi(o[4], block);
	for (unsigned at = 81; at <= 87; at += 6) {
		unsigned v = get_bits(o, at, 3);
		if (v == 1 || v == 2)
			set_bits(w, at, 3, v + 2);
	}
	if (ldg) {
		if (block)
			set_bits(w, 12, 4, 5 | 8);
		ctrl(w, -1, 0, 7, -1, 0);
	} else {
		ctrl(w, -1, -1, -1, -1, 0);
	}
}

/* A copy of U: destination d, source s, immediate imm; reuse cleared. */
static void ucopy(uint8_t *w, const uint8_t *u, unsigned d, unsigned s, unsigned imm)
{
	memcpy(w, u, 16);
	w[2] = (uint8_t)d, w[3] = (uint8_t)s;
	set_bits(w, 32, 16, imm & 0xffff), set_bits(w, 48, 16, imm >> 16);
	ctrl(w, -1, 7, 7, -1, 0);
}

static bool in_lay(const lay *ly, size_t n, char k, unsigned o)
{
	for (size_t j = 0; j < n; j++)
		if ((ly[j].k == k || (k == 'K' && (ly[j].k == 'k' || ly[j].k == 'h'))) && ly[j].o == o)
			return true;
	return false;
}

/* The wait masks of the members removed right before o (Q10: OR-ed into the next kept one). */
static unsigned acc_wait(const uint8_t *oc, const lay *ly, size_t n, unsigned o)
{
	unsigned acc = 0;
	for (unsigned m = o; m-- > F0 && !in_lay(ly, n, 'K', m);)
		acc |= st_ctrl_decode(oc + 16 * m).wait;
	return acc;
}

/* The loop region's words for layout ly (n slots from F0). */
static void write_loop(uint8_t *code, const uint8_t *oc, const lay *ly, size_t n)
{
	const uint8_t *u = oc + 16 * U0, *e = oc + 16 * E0;
	for (size_t j = 0; j < n; j++) {
		uint8_t *w = code + 16 * (F0 + j);
		const uint8_t *o = oc + 16 * ly[j].o;
		unsigned ow = st_ctrl_decode(o).wait;
		switch (ly[j].k) {
		case 'k':
			memcpy(w, o, 16);
			ctrl(w, -1, -1, -1, (int)(ow | acc_wait(oc, ly, n, ly[j].o)), -1);
			if (j + 1 < n ? ly[j + 1].k != 'k' || ly[j + 1].o != ly[j].o + 1 : ly[j].o + 1 != BRA0)
				ctrl(w, -1, -1, -1, -1, 0);
			break;
		case 'p':
		case 'b':
			renamed(w, o, ly[j].k == 'b');
			break;
		case 'h':
			ucopy(w, u, o[2], rphi(o[2], false), 0);
			ctrl(w, -1, -1, -1, (int)(ow | acc_wait(oc, ly, n, ly[j].o) | 1), -1);
			break;
		case 'i':
			ucopy(w, u, 13, 11, 0x80);
			break;
		case 'f':
			memcpy(w, e, 16);
			set_bits(w, 81, 3, 5), w[3] = 13;
			ctrl(w, -1, -1, -1, -1, 0);
			break;
		}
	}
	ctrl(code + 16 * (F0 - 1), -1, -1, -1, -1, 0); /* H's last: its next instruction changed */
}

/* The rewrite with layout ly, the count `regs`, then `fix` on the code; opened again. */
static st_cubin *build(const st_test_kernel *x, const lay *ly, size_t n, unsigned regs, void (*fix)(uint8_t *code))
{
	st_error err = {0};
	st_cubin *w = st_test_cubin_copy(x->c);
	size_t k = st_cubin_find_kernel(w, x->name), osz, peel = 0, ins = n - (BRA0 - F0);
	for (size_t j = 0; j < n; j++)
		peel += ly[j].k == 'p';
	for (size_t i = 0; i < ins; i++)
		if (st_cubin_insert(w, k, F0, NULL, &err))
			fail_msg("insert: %s", err.msg);
	if (st_cubin_set_branch(w, k, BRA0 + ins, F0 + peel, &err) || st_cubin_set_regcount(w, k, regs, &err))
		fail_msg("branch / regcount: %s", err.msg);
	const uint8_t *oc = st_cubin_code(x->c, st_cubin_find_kernel(x->c, x->name), &osz);
	size_t size;
	const uint8_t *img = st_cubin_data(w, &size);
	uint8_t *buf = malloc(size);
	memcpy(buf, img, size);
	uint8_t *code = buf + st_cubin_kernel(w, k)->file_offset;
	write_loop(code, oc, ly, n);
	if (fix)
		fix(code);
	st_cubin *out = NULL;
	if (st_cubin_open_mem(buf, size, "pipe2", &out, &err))
		fail_msg("open: %s", err.msg);
	free(buf);
	st_cubin_free(w);
	return out;
}

typedef struct seen { char lines[8192]; size_t n; } seen;
static void collect(void *ctx, const char *kernel, uint32_t offset, const char *msg)
{
	seen *s = ctx;
	(void)kernel;
	size_t used = strlen(s->lines);
	snprintf(s->lines + used, sizeof s->lines - used, "0x%04x %s\n", offset, msg);
	s->n++;
}

static void check_cubin(const st_test_kernel *x, st_cubin *t, seen *s)
{
	st_error err = {0};
	size_t bad = 0;
	memset(s, 0, sizeof *s);
	st_status rc = st_check_kernel(x->c, t, x->name, &x->o, collect, s, &bad, &err);
	printf("%s", s->lines);
	assert_int_equal(bad, s->n);
	assert_int_equal(rc == ST_OK, bad == 0);
	st_cubin_free(t);
}

/* Raise the stall of tuned slot `slot` by `by` cycles. */
static void bump(uint8_t *code, uint32_t slot, unsigned by)
{
	st_ctrl c = st_ctrl_decode(code + 16 * slot);
	ctrl(code + 16 * slot, c.stall + (int)by, -1, -1, -1, -1);
}

/* The stalls the rewrite needs (Q11): in the peel and again in the prefetch block, LEA -> LEA.HI.X
 * on the carry (P3, P4: 5 cycles) and the address pairs -> LDG (8), F's Pf -> the guarded loads
 * (13); 0x1c0 VIADD R7 -> 0x1e0 LEA (5); the peel's loads read R22..R25 late (no read scoreboard,
 * 30 cycles before the block rewrites them), as do 0x2e0 LDG R9's address across the back edge
 * before 0x1d0 VIADD R9. */
static void fix_good(uint8_t *code)
{
	bump(code, 0x16, 4), bump(code, 0x18, 3), bump(code, 0x19, 6), bump(code, 0x1c, 4);
	bump(code, 0x26, 4), bump(code, 0x28, 3), bump(code, 0x29, 6);
}

static st_test_kernel rowsum;

static void accepts(void **state)
{
	(void)state;
	seen s;
	check_cubin(&rowsum, build(&rowsum, good, N(good), 28, fix_good), &s);
	assert_int_equal(s.n, 0);
}

/* The rewrite (layout ly, `regs` registers, then fix) has the line `want` among its lines. */
static void reports(const lay *ly, size_t n, unsigned regs, void (*fix)(uint8_t *), const char *want)
{
	seen s;
	check_cubin(&rowsum, build(&rowsum, ly, n, regs, fix), &s);
	if (!strstr(s.lines, want))
		fail_msg("no '%s' among:\n%s", want, s.lines);
}

/* The fixture with `patch` on its code (the checker's original), decoded by Triton's nvdisasm. */
static void variant(st_test_kernel *v, void (*patch)(uint8_t *code))
{
	size_t size, k = st_cubin_find_kernel(rowsum.c, rowsum.name);
	const uint8_t *img = st_cubin_data(rowsum.c, &size);
	uint8_t *buf = malloc(size);
	memcpy(buf, img, size);
	patch(buf + st_cubin_kernel(rowsum.c, k)->file_offset);
	st_error err = {0};
	memset(v, 0, sizeof *v);
	if (st_cubin_open_mem(buf, size, "rowsum-variant", &v->c, &err))
		fail_msg("%s", err.msg);
	free(buf);
	static char nvdisasm[4096];
	snprintf(nvdisasm, sizeof nvdisasm, "%s/nvdisasm", st_test_triton_bin() ? st_test_triton_bin() : ".");
	v->o.nvdisasm = st_test_triton_bin() ? nvdisasm : NULL; /* else the decoder's own search */
	v->name = rowsum.name;
}

/* On the variant `patch` makes of the original, the good rewrite (built from it) has the line `want`. */
static void variant_reports(void (*patch)(uint8_t *code), void (*fix)(uint8_t *code), const char *want)
{
	st_test_kernel v;
	variant(&v, patch);
	seen s;
	check_cubin(&v, build(&v, good, N(good), 28, fix ? fix : fix_good), &s);
	if (!strstr(s.lines, want))
		fail_msg("no '%s' among:\n%s", want, s.lines);
	st_cubin_free(v.c);
}

static void e_reads_r7(uint8_t *c) { c[16 * E0 + 4] = 7; }   /* ISETP.GE.AND P1, PT, R11, R7, PT */
static void lea_reads_r9(uint8_t *c) { c[16 * 22 + 4] = 9; } /* 0x160 LEA R2, P1, R11, R9, 0x2 */
static void lea_reads_r5(uint8_t *c) { c[16 * 27 + 3] = 5; } /* 0x1b0 LEA R6, P1, R5, R14, 0x2 */

static void lea_reads_r3(uint8_t *c) { c[16 * 30 + 3] = 3; } /* 0x1e0 LEA R8, P2, R3, R14, 0x2 */

static void ho_stall_1(uint8_t *c)
{
	fix_good(c);
	ctrl(c + 16 * 0x1f, 1, -1, -1, -1, -1);
}

/* Q11, a hand-over to its consumer: with 0x1e0 reading R3, the hand-over R3 = R23 + 0 right before
 * it needs the table's distance (U's stall, 5, gives it; 1 does not). */
static void handover_consumer(void **state)
{
	(void)state;
	variant_reports(lea_reads_r3, ho_stall_1, "pipe2 Q11: RAW on R3 (VIADD -> LEA): 1 cycles apart, needs");
}

/* Q3..Q5 on variants of the original (the rule is the original's; the rewrite follows it). */
static void q3_q4_q5(void **state)
{
	(void)state;
	variant_reports(e_reads_r7, NULL, "pipe2 Q3: the exit compare at 0x250 reads R7, written in the loop at 0x170");
	variant_reports(lea_reads_r9, NULL, "pipe2 Q4: LEA at 0x160 reads R9, written 3 times in the loop (first at 0x180)");
	variant_reports(lea_reads_r5, NULL, "pipe2 Q5: LEA at 0x1b0 reads R5, which the member VIADD at 0x150 wrote");
}

/* Q2: 0x190 LEA.HI.X R3 (the address of 0x1d0) left in place, in neither the peel nor the block. */
static void member_left_in_place(void **state)
{
	static const lay ly[] = {
		{'p', 21}, {'p', 22}, {'p', 26}, {'p', 28}, {'p', 29}, {'p', 32},
		{'k', 23}, {'k', 24}, {'k', 25}, {'k', 27}, {'h', 29}, {'k', 30}, {'k', 31}, {'h', 32}, {'i', 0}, {'f', 0},
		{'b', 21}, {'b', 22}, {'b', 26}, {'b', 28}, {'b', 29}, {'b', 32},
		{'k', 33}, {'k', 34}, {'k', 35}, {'k', 36}, {'k', 37}, {'k', 38}, {'k', 39}, {'k', 40}, {'k', 41},
	};
	(void)state;
	reports(ly, N(ly), 28, NULL, "pipe2 Q2: LEA.HI.X.SX32 at 0x190 is in the closure of the moved loads but was not moved");
}

/* Q2: 0x170 VIADD R7 (the next load's index, not in the group) moved with it. */
static void non_member_moved(void **state)
{
	static const lay ly[] = {
		{'p', 21}, {'p', 22}, {'p', 23}, {'p', 25}, {'p', 26}, {'p', 28}, {'p', 29}, {'p', 32},
		{'k', 24}, {'k', 27}, {'h', 29}, {'k', 30}, {'k', 31}, {'h', 32}, {'i', 0}, {'f', 0},
		{'b', 21}, {'b', 22}, {'b', 23}, {'b', 25}, {'b', 26}, {'b', 28}, {'b', 29}, {'b', 32},
		{'k', 33}, {'k', 34}, {'k', 35}, {'k', 36}, {'k', 37}, {'k', 38}, {'k', 39}, {'k', 40}, {'k', 41},
	};
	(void)state;
	reports(ly, N(ly), 28, NULL, "pipe2 Q2: VIADD from 0x170 moved but is not in the closure of the moved loads");
}

/* Q2 (a rewrite half form 1): 0x200's load moved into the block without a hand-over at its place. */
static void load_without_handover(void **state)
{
	static const lay ly[] = {
		{'p', 21}, {'p', 22}, {'p', 25}, {'p', 26}, {'p', 28}, {'p', 29}, {'p', 32},
		{'k', 23}, {'k', 24}, {'k', 27}, {'h', 29}, {'i', 0}, {'f', 0},
		{'b', 21}, {'b', 22}, {'b', 25}, {'b', 26}, {'b', 28}, {'b', 29}, {'b', 32},
		{'k', 30}, {'k', 31}, {'k', 33}, {'k', 34}, {'k', 35}, {'k', 36}, {'k', 37}, {'k', 38}, {'k', 39}, {'k', 40},
		{'k', 41},
	};
	(void)state;
	reports(ly, N(ly), 28, NULL, "pipe2 Q2: LDG.E at 0x200 left its place without a hand-over");
}

/* The good rewrite with one more edit after fix_good. */
static void (*more)(uint8_t *code);
static void fix_more(uint8_t *code)
{
	fix_good(code);
	more(code);
}

static void good_but(void (*edit)(uint8_t *code), const char *want)
{
	more = edit;
	reports(good, N(good), 28, fix_more, want);
}

static void ho_imm(uint8_t *c) { set_bits(c + 16 * 0x1f, 32, 8, 1); }
static void ho_src(uint8_t *c) { c[16 * 0x1f + 3] = 25; }
static void i_step(uint8_t *c) { set_bits(c + 16 * 0x23, 32, 8, 0x40); }
static void f_on_i(uint8_t *c) { c[16 * 0x24 + 3] = 11; }
static void ld_unguarded(uint8_t *c) { set_bits(c + 16 * 0x2a, 12, 4, 7); }
static void ld_polarity(uint8_t *c) { set_bits(c + 16 * 0x2a, 12, 4, 5); }
static void peel_guarded(uint8_t *c) { set_bits(c + 16 * 0x1a, 12, 4, 5 | 8); }
static void peel_reads_ip(uint8_t *c) { c[16 * 0x15 + 3] = 13; }
static void i_to_f_short(uint8_t *c) { ctrl(c + 16 * 0x23, 1, -1, -1, -1, -1); }
static void wrap_short(uint8_t *c) { ctrl(c + 16 * 0x1c, st_ctrl_decode(c + 16 * 0x1c).stall - 4, -1, -1, -1, -1); }
static void ho_no_wait(uint8_t *c) { ctrl(c + 16 * 0x1f, -1, -1, -1, st_ctrl_decode(c + 16 * 0x1f).wait & ~1, -1); }

/* In the peel and the block: register fields a -> b (bytes 2, 3), P fields [83:81], [89:87] pa -> pb. */
static void rename_group(uint8_t *c, unsigned a, unsigned b, unsigned pa, unsigned pb)
{
	static const uint32_t slots[] = {0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x2b};
	for (size_t i = 0; i < N(slots); i++) {
		uint8_t *w = c + 16 * slots[i];
		for (unsigned by = 2; by <= 3; by++)
			if (w[by] == a)
				w[by] = (uint8_t)b;
		for (unsigned at = 81; at <= 87; at += 6)
			if (get_bits(w, at, 3) == pa)
				set_bits(w, at, 3, pb);
	}
}
static void phi_p_twice(uint8_t *c) { rename_group(c, 0, 0, 4, 3); }
static void phi_not_fresh(uint8_t *c)
{
	rename_group(c, 24, 14, 7, 7), rename_group(c, 25, 15, 7, 7);
	c[16 * 0x22 + 3] = 15;
}
static void phi_misaligned(uint8_t *c)
{
	rename_group(c, 22, 21, 7, 7), rename_group(c, 23, 22, 7, 7);
	c[16 * 0x1f + 3] = 22;
}

/* S' = the scoreboard 0x220 LDG R7 sets in the loop. */
static void sb_used(uint8_t *c)
{
	size_t sz;
	const uint8_t *oc = st_cubin_code(rowsum.c, st_cubin_find_kernel(rowsum.c, rowsum.name), &sz);
	unsigned sb = st_ctrl_decode(oc + 16 * 34).wbar;
	static const uint32_t loads[] = {0x1a, 0x1b, 0x2a, 0x2b}, hos[] = {0x1f, 0x22};
	for (size_t i = 0; i < N(loads); i++)
		ctrl(c + 16 * loads[i], -1, (int)sb, -1, -1, -1);
	for (size_t i = 0; i < N(hos); i++)
		ctrl(c + 16 * hos[i], -1, -1, -1, (st_ctrl_decode(c + 16 * hos[i]).wait & ~1) | 1 << sb, -1);
}

static void q6(void **state)
{
	(void)state;
	good_but(ho_imm, "pipe2 Q6: the hand-over of 0x1d0 adds 0x1, the rules want 0x0");
	good_but(ho_src, "pipe2 Q6: the hand-over of 0x1d0 reads R25, the rules want phi(R3) = R23");
}

static void q7(void **state)
{
	(void)state;
	good_but(i_step, "pipe2 Q7: I adds 0x40, U at 0x240 adds 0x80");
	good_but(f_on_i, "pipe2 Q7: F compares R11 where E at 0x250 compares i = R11, the rules want i' = R13");
	good_but(ld_unguarded, "pipe2 Q7: LDG.E from 0x1d0: guard @PT, the rules want @!P5 (continue on Pf)");
	good_but(ld_polarity, "pipe2 Q7: LDG.E from 0x1d0: guard @P5, the rules want @!P5 (continue on Pf)");
}

static void q8(void **state)
{
	(void)state;
	good_but(peel_guarded, "pipe2 Q8: LDG.E from 0x1d0: guard @!P5, the rules want @PT (the peel's loads run unguarded)");
	good_but(peel_reads_ip, "pipe2 Q8: VIADD from 0x150 reads R13 for R11, the rules want R11");
}

/* i' = R19 instead of R13: below the count, named nowhere in the loop, but in the original's reserve
 * R19..R20 (above its highest named register, R18), which the H200 does not let a kernel write. */
static void ip_in_reserve(uint8_t *c)
{
	for (uint32_t slot = 0x23; slot <= 0x2b; slot++)
		for (int b = 2; b <= 4; b++)
			if (c[16 * slot + b] == 13)
				c[16 * slot + b] = 19;
}

static void phi(void **state)
{
	(void)state;
	good_but(ip_in_reserve, "pipe2 Q7: i' = R19 is not fresh: in the reserve R19..R20 the original counts above its "
				"highest named register");
	good_but(phi_p_twice, "pipe2 Q7: phi is not injective: P1 and P2 both become P3");
	good_but(phi_not_fresh, "pipe2 Q7: phi(R4) = R14 is not fresh: LEA at 0x160 names it in the loop");
	good_but(phi_misaligned, "pipe2 Q7: LDG.E from 0x1d0: R21, phi of the 2-register tuple R2, is not 2-aligned");
}

static void q10(void **state)
{
	(void)state;
	good_but(ho_no_wait, "pipe2 Q10: VIADD at 0x1f0: the write of R23 at 0x2a0 is not waited on (SB0)");
	good_but(ho_no_wait, "pipe2 Q10: LDG.E from 0x1d0: wait mask");
	good_but(sb_used, "pipe2 Q10: S' = SB");
}

static void q11(void **state)
{
	(void)state;
	good_but(i_to_f_short, "pipe2 Q11: RAW on R13 (VIADD -> ISETP.GE.AND): 1 cycles apart");
	good_but(wrap_short, "pipe2 Q11: WAR on R9 (LDG.E -> VIADD): 28 cycles apart across the back edge, needs 30");
}

static void q9(void **state)
{
	(void)state;
	reports(good, N(good), 26, fix_good, "pipe2 Q9: register count 26, the rules want 28 (the original's 21, the "
					     "highest fresh register R25, a reserve of 2 above it)");
	reports(good, N(good), 21, fix_good, "pipe2 Q9: register count 21, the rules want 28 (the original's 21");
}

/* Q12: an insertion outside the loop's rewrite: neither form lines up. */
static void extra_insertion(void **state)
{
	(void)state;
	st_error err = {0};
	st_cubin *t = build(&rowsum, good, N(good), 28, fix_good);
	assert_int_equal(st_cubin_insert(t, st_cubin_find_kernel(t, rowsum.name), 1, NULL, &err), ST_OK);
	seen s;
	check_cubin(&rowsum, t, &s);
	assert_non_null(strstr(s.lines, "pipe2: not a form-2 rewrite: the word at 0x10 is not the original's LDC at 0x10"));
}

/* Every single-bit flip of the rewrite's loop region outside the stall and reuse bits is reported: a flipped
 * word either does not line up (form 1's lines and the pipe2 line) or breaks a rule. */
static void every_flip_caught(void **state)
{
	(void)state;
	st_cubin *t = build(&rowsum, good, N(good), 28, fix_good);
	size_t size, k = st_cubin_find_kernel(t, rowsum.name);
	const uint8_t *img = st_cubin_data(t, &size);
	size_t at = st_cubin_kernel(t, k)->file_offset;
	uint64_t rng = 0x13198a2e03707344ull;
	for (int n = 0; n < 48; n++) {
		size_t slot = F0 + st_test_xorshift(&rng) % (N(good) + 1), r = st_test_xorshift(&rng);
		size_t bit = 128 * slot + (n % 4 == 3 ? 109 + r % 13 : r % 105); /* yield, scoreboards, wait mask */
		uint8_t *buf = malloc(size);
		memcpy(buf, img, size);
		buf[at + bit / 8] ^= (uint8_t)(1u << bit % 8);
		st_cubin *f = NULL;
		st_error err = {0};
		int rc = st_cubin_open_mem(buf, size, "flip", &f, &err);
		free(buf);
		if (rc) /* a flip the reader refuses */
			continue;
		seen s;
		check_cubin(&rowsum, f, &s);
		if (!s.n)
			fail_msg("bit %zu (slot 0x%zx, bit %zu) flipped and nothing reported", bit, bit / 128, bit % 128);
	}
	st_cubin_free(t);
}

static int setup(void **state)
{
	(void)state;
	st_test_kernel_open(&rowsum, "pipe", "rowsum_f32_256x4096");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	st_test_kernel_close(&rowsum);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(accepts),
		cmocka_unit_test(member_left_in_place),
		cmocka_unit_test(non_member_moved),
		cmocka_unit_test(load_without_handover),
		cmocka_unit_test(q6),
		cmocka_unit_test(q7),
		cmocka_unit_test(q8),
		cmocka_unit_test(phi),
		cmocka_unit_test(q10),
		cmocka_unit_test(q11),
		cmocka_unit_test(q9),
		cmocka_unit_test(extra_insertion),
		cmocka_unit_test(q3_q4_q5),
		cmocka_unit_test(handover_consumer),
		cmocka_unit_test(every_flip_caught),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
