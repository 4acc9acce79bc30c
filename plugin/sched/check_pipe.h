/* The independent checker's reading of a pipe rewrite (family 3 form 1: a load group rotated across
 * a loop's back edge, a peel of copies before the loop; /docs/sched.md "Checker: pipe").  Shared by
 * check_pipe*.c only; nothing here is used by the rewrite (pipe*.c) and nothing of it is used here. */
#ifndef ST_CHECK_PIPE_H
#define ST_CHECK_PIPE_H

#include "check_internal.h"

#define CP_NONE UINT32_MAX
#define CP_MAX_MEMBERS 24
enum { CP_SAME, CP_MOVED, CP_PEEL, CP_NEW }; /* what a tuned slot holds: kept in place, a moved member (form 2: its
					       * prefetch copy), a peel copy, form 2's hand-over, I or F */

/* One rotated loop B = orig [f, l] (l: the back branch), entered from H (the block before f). */
typedef struct cp_loop {
	uint32_t f, l;      /* original indices of B's first and last instruction */
	uint32_t tp, L;     /* tuned slot of the peel and its length; tuned B starts at tp + L */
	uint32_t e;         /* E: the last writer of Pe in B, CP_NONE when none */
	int pe, cneg;       /* Pe's index; "continue" is Pe when cneg = 0, !Pe when 1 */
	uint32_t p;         /* original index of the last member */
	uint8_t *mem;       /* per B position (i - f): moved to the end in the tuned kernel */
	uint8_t *clo;       /* per B position: in the P2 closure of the moved loads */
	uint8_t *feed;      /* per B position: a feeder (P3c) some member reads */
	uint8_t *comb;      /* per B position: P6 edit in B (CP_OR_BREAK, CP_AND_CONT, CP_GUARD_CONT) or 0 */
	int8_t ren[8];      /* the P6 predicate renames Pg -> ren[g], -1 when none */
	bool bad;           /* the peel could not be lined up: no edit or timing checks */
	uint32_t tn;        /* form 2: the tuned body's slots, back branch included (0: form 1, B's length) */
} cp_loop;

typedef struct cp {
	ck *c;
	const st_sass_insn *in; /* original instructions */
	size_t n;
	int sm;
	const uint8_t *ocode, *tcode;
	uint32_t *src;      /* per tuned slot: the original index whose word it holds */
	uint8_t *kind;      /* per tuned slot: CP_SAME / CP_MOVED / CP_PEEL */
	uint32_t *lp;       /* per tuned slot: loop number + 1 for a peel or B slot, else 0 */
	uint32_t *inv;      /* per original index: its tuned slot (never a peel copy) */
	st_sass_insn *ti;   /* per tuned slot: the instruction as rewritten (guard and predicate edits) */
	st_sass_reg *tregs; /* the register lists of the edited ti, 40 per tuned slot */
	uint32_t *bfirst, *bcount;
	int32_t (*bsucc)[2];
	size_t nb;
	cp_loop *loops;
	size_t nl;
	bool f2;           /* form 2: lines read "pipe2 Q<n>: ..." (the form-1 rules renamed) */
} cp;
#define CP_REGS 40
enum { CP_OR_BREAK = 1, CP_AND_CONT, CP_GUARD_CONT };

/* The state for one reading (the blocks of c's original decode; src unset); false when out of memory
 * (reported).  cp_free releases it. */
bool cp_init(cp *p, ck *c, const st_cubin *orig, size_t ko, const st_cubin *tuned, size_t kt);
void cp_free(cp *p);
/* One violation "pipe <rule>: ..." at tuned slot `slot` (form 2: "pipe2 <Q rule>: ..."). */
void cp_flag(cp *p, uint32_t slot, const char *rule, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Bits of a 128-bit word (lo = bits 0..63, hi = 64..127). */
unsigned cp_bits(const uint8_t *w, unsigned at, unsigned len);
void cp_set_bits(uint8_t *w, unsigned at, unsigned len, unsigned v);
/* Equal outside the control bits; coarse: also outside bits 16..81 (branch immediates). */
bool cp_same_word(const uint8_t *a, const uint8_t *b, bool coarse);
/* Is block b i a back-branch loop block's start (the shape of docs/sched.md, not yet P1)? */
bool cp_is_loop(const cp *p, size_t b, const st_cubin *orig, size_t ko);
/* Every code reference names the instruction it named (p->inv), a loop's back branch the tuned body's
 * first slot (check_pipe.c). */
void cp_check_refs(cp *p, const st_cubin *orig, size_t ko, const st_cubin *tuned, size_t kt);
/* Match one loop's tuned slots (peel and rotated body) against B; false when nothing could be matched
 * (a violation was reported).  Fills src/kind/inv/lp and the loop's mem. (check_pipe_match.c) */
bool cp_match_loop(cp *p, cp_loop *lo);
/* The words: allowed edits only, the P6 guards and the rename (check_pipe_match.c). */
void cp_check_edits(cp *p, cp_loop *lo);
/* P1 (sets lo->e) and the P2 closure of the members' loads (sets clo, feed, p) (check_pipe_rules.c). */
void cp_shape(cp *p, cp_loop *lo);
void cp_closure(cp *p, cp_loop *lo);
/* Register (file f, index i) written / read by x (check_pipe_rules.c; form 2's reading shares them). */
bool cp_writes(const st_sass_insn *x, unsigned f, unsigned i);
bool cp_reads(const st_sass_insn *x, unsigned f, unsigned i);
/* P1..P4, P7 on the original reading (check_pipe_rules.c). */
void cp_check_rules(cp *p, cp_loop *lo);
/* Is register unit (file, index) live on entry to block b (own CFG liveness, conservative)?  *at:
 * the original index of a reader (or of the opaque block end) that makes it so. */
bool cp_live_into(const cp *p, size_t b, unsigned file, unsigned index, uint32_t *at);
/* P8 on the tuned code and the control fields (check_pipe_time.c). */
void cp_check_timing(cp *p, cp_loop *lo);
void cp_check_ctrl(cp *p);

#endif
