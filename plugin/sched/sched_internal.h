/* Internal pieces of the sched module's move generator (model.c, state.c, moves.c, env.c).
 * The independent checker (check.c) does not use any of this. */
#ifndef ST_SCHED_INTERNAL_H
#define ST_SCHED_INTERNAL_H

#include "sasstune/sched.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Cycles: no constraint the model knows is longer (latency tables top out at 28; set-to-wait is 2;
 * an instruction the tables do not know is assumed to need this much). */
#define SC_LIMIT 30

/* Register runs a and b share a register (same file, intersecting [index, index + count)). */
static inline bool sc_regs_meet(const st_sass_reg *a, const st_sass_reg *b)
{
	return a->file == b->file && a->index < b->index + b->count && b->index < a->index + a->count;
}

/* Some run of a[0..na) meets some run of b[0..nb). */
static inline bool sc_regs_any(const st_sass_reg *a, unsigned na, const st_sass_reg *b, unsigned nb)
{
	for (unsigned i = 0; i < na; i++)
		for (unsigned j = 0; j < nb; j++)
			if (sc_regs_meet(&a[i], &b[j]))
				return true;
	return false;
}

/* p writes a register q reads or writes, or reads one q writes: their order matters. */
static inline bool sc_insns_touch(const st_sass_insn *p, const st_sass_insn *q)
{
	return sc_regs_any(p->defs, p->ndefs, q->uses, q->nuses) || sc_regs_any(p->defs, p->ndefs, q->defs, q->ndefs) ||
	       sc_regs_any(p->uses, p->nuses, q->defs, q->ndefs);
}
/* Instructions: every walk stops here; a walk that needs more is refused (conservative). */
#define SC_WINDOW 64
#define SC_KINDS 4 /* move kinds enumerated per slot: SWAP, STALL, YIELD, REUSE (3 flags share one slot kind) */
/* Hoist/sink (ST_MOVE_HOIST): a chain of at most this many adjacent swaps, each legal in the state
 * the previous ones left.  Variants per slot (arg): 0..3 up by 2, 4, 8, and "far" (the longest
 * legal chain up to SC_HOIST_MAX, listed only when it is not 1, 2, 4 or 8); 4..7 down alike. */
#define SC_HOIST_MAX 16
#define SC_HOIST_VARIANTS 8
#define SC_LEGAL_HOIST 6 /* bit of the first hoist variant in st_sched.legal[slot] */
#define SC_LEGAL_WAIT 14 /* bit of the wait move of SB0 (SB k: bit 14 + k) */
/* Group hoist/sink (group.c): ST_MOVE_HOIST arg 8..15 (arg - 8 as the single variants) moves a
 * load with up to SC_GROUP_MAX - 1 address producers that lie within SC_HOIST_MAX slots above it. */
#define SC_GROUP_MAX 5
#define SC_HOIST_ARGS 16 /* single 0..7, group 8..15 */
#define SC_LEGAL_GROUP 20 /* bit of group variant 8 (arg a: bit 12 + a) */
#define SC_LEGAL_SB 28   /* bits of the SB moves: 28 write SB, 29 read SB (to the lowest locally idle SB) */
#define SC_LEGAL_XBLOCK 30 /* bit of the xblock move */
#define SC_LEGAL_RENAME 31 /* bit of the rename move of a slot (rename.c) */

/* Static facts about one original instruction. */
enum {
	SC_FIXED = 1 << 0,       /* never moves: control flow, barriers, fences, leaders, references, unknown */
	SC_PROTO = 1 << 1,       /* in the prototype's movable set (global/shared loads, stores, async copies) */
	SC_VARLAT = 1 << 2,      /* completes through scoreboards */
	SC_NEEDS_CLAIM = 1 << 3, /* variable latency with a result: may pass another one only with its own SB */
	SC_SPECIAL = 1 << 4,     /* reads or writes a non-register latency resource (GMMA, RPC, CGA barrier) */
	SC_UNKNOWN = 1 << 5,     /* the latency tables do not know it */
	SC_ALU = 1 << 6,         /* fixed-latency math: its stall may be lowered, reuse flags may be set */
	SC_ASYNC_COPY = 1 << 7,  /* LDGSTS: completion counted by LDGDEPBAR groups */
	SC_NO_YIELD = 1 << 8,    /* its yield bit is not to be flipped */
	SC_SYNC_DST = 1 << 9,    /* memory, variable-latency, barrier or fence: kept apart from an earlier barrier */
};
/* Barrier/fence -> later memory or variable-latency instruction (docs/sched.md, rule 9): the issue
 * distance kept is min(original, cap).  BAR: 6 cycles (BAR_OP's BARWAIT occupancy in the latency
 * files; ptxas puts every first memory access 6 cycles or more after a BAR; 5 and 3 gave wrong
 * results on the H200).  Every other barrier or fence: the same 6 (every distance ptxas leaves from
 * one to such an instruction that is 6 or less is kept exactly). */
#define SC_BAR_CAP 6
#define SC_SYNC_CAP 6
enum { SC_SP_G = 1, SC_SP_S = 2, SC_SP_L = 4 }; /* memory spaces touched */

typedef struct sc_info {
	uint16_t flags;
	uint8_t mem_r, mem_w;  /* SC_SP_* read / written */
	uint8_t depbar;        /* SBs a DEPBAR waits on (bit k = SB k) */
	uint8_t lout, lin;     /* longest fixed latency from / to an instruction of another block, cycles */
	uint8_t sync_cap;      /* a barrier or fence: the cap of its distance to later SC_SYNC_DST (0: none) */
	uint8_t reuse_ok;      /* reuse bits (1 a, 2 b, 4 c) that may be added: ptxas set that bit on this
	                        * opcode in this kernel, and every reuse it set on the opcode follows the
	                        * positional slots (st_sass_reuse_marks) */
	int32_t orig_t;        /* issue cycle from its block's start, in the original order */
	int32_t orig_end;      /* cycles from its issue to its block's end (own stall included), original */
	uint32_t block;
} sc_info;

/* Latency between two instructions (max over every shared register and resource). */
#define SC_LAT_NONE (-1)

typedef struct sc_memo sc_memo; /* latency lookups, by signature */
typedef struct sc_rename sc_rename; /* the rename family's state (rename.c) */

/* The static model of one kernel. */
typedef struct sc_model {
	const st_sass_kernel *k;
	const st_sass_insn *in;
	size_t n;
	int sm;
	unsigned flags;  /* ST_SCHED_* */
	sc_info *si;
	uint32_t *bfirst, *blast; /* per block: first and last slot */
	uint8_t *loop;            /* per block: how many loops (back edges) enclose it */
	uint8_t counted_sbs;      /* SBs some DEPBAR.LE counts (count > 0) */
	sc_memo *memo;
} sc_model;

st_status sc_model_build(sc_model *m, const st_sass_kernel *k, const st_cubin *c, unsigned flags, st_error *err);
void sc_model_free(sc_model *m);
/* Drop every memoised latency (registers of some instructions changed: a rename). */
void sc_model_forget(sc_model *m);
/* Fixed latency producer p -> consumer c (original indices), SC_LAT_NONE when independent.
 * what (may be NULL) gets the dependence kind and register for messages. */
int sc_latency(sc_model *m, uint32_t p, uint32_t c, char *what, size_t n);
/* Barrier or fence p -> later memory/variable-latency/barrier instruction c (original indices): the
 * issue distance to keep (callers take the original distance when shorter), SC_LAT_NONE if none. */
int sc_sync_latency(const sc_model *m, uint32_t p, uint32_t c);
/* Whether p and c (original indices) must keep their order; why gets a message. */
bool sc_ordered(sc_model *m, uint32_t p, uint32_t c, char *why, size_t n);

/* The state. */
typedef struct sc_change { uint32_t idx, slot; st_ctrl old, now; } sc_change;
typedef struct sc_undo {
	st_move m;
	uint8_t cont; /* a later swap of the hoist that the record before it began: undone with it */
	uint8_t nchg;
	sc_change chg[4];
	uint32_t aux; /* xblock: the slot its instruction moved to (the block's first slot then) */
} sc_undo;

struct st_sched {
	sc_model m;
	uint32_t *at, *pos; /* at[slot] = original index; pos[index] = slot */
	st_ctrl *ctrl;      /* current control fields per original index */
	sc_undo *undo;
	size_t nundo, capundo;
	size_t nmoves;       /* moves applied (a hoist is one move of several undo records) */
	/* legal-move cache: bit (slot * SC_KINDS + kind) plus its read extent */
	uint32_t *legal;  /* per slot: bit per kind; REUSE 3..5 for a/b/c, HOIST 6..13, WAIT 14..19, group HOIST 20..27, SB 28..29, XBLOCK 30 */
	uint32_t *gread;  /* group: per original index, SC_GROUP_MAX - 1 readers of its results (group.c) */
	uint8_t *ngread;  /* group: how many; 0 when it cannot be an address producer (NULL: no hoist family) */
	uint8_t *wneed;   /* wait family, per original index: a stop (bit 6), touches a special (bit 7) */
	uint32_t *wo_off, *wo; /* wait family: O(X, k) = wo[wo_off[6X+k] .. wo_off[6X+k+1]) (wait.c) */
	uint8_t sb_reserved; /* sb family: SBs a DEPBAR names, SB0 with LDGSTS groups: never re-assigned (sb.c) */
	uint32_t *rlo, *rhi; /* per slot: positions the cached results read */
	int32_t *fen;     /* Fenwick tree over per-slot legal counts */
	size_t nlegal;
	uint32_t last_swap; /* slot of the latest swap applied, UINT32_MAX none (for features) */
	uint32_t *xa;       /* xblock family, per original index: 1 + the block it may move to, 0 none */
	uint8_t *xlin;      /* its longest fixed latency in from anywhere (cycles) */
	uint8_t *xfroz;     /* per block: xblock moves applied into or out of it (then no wait, sb, rename or
	                     * xblock move there; docs/sched.md X8) */
	struct sc_xsave *xsave; /* per original index: its facts before its xblock move (xblock.c) */
	sc_rename *rn;      /* rename family (NULL when off): owns the instructions m.in points at */
};

/* Legality of a move in the current state.  On success *fix (may be NULL) gets the control edits a
 * swap needs; rd gets the slot range read. */
typedef struct sc_fix { uint8_t n; sc_change chg[4]; } sc_fix;
st_status sc_check(const st_sched *s, st_move m, sc_fix *fix, uint32_t *rlo, uint32_t *rhi, st_error *err);
/* Hoist/sink (hoist.c).  sc_hoist_reach: how many adjacent swaps in direction dir (-1 up, +1 down)
 * the insn at `slot` can make in a row (0..SC_HOIST_MAX), each checked in the state the previous
 * ones left; the state is restored before it returns; [*lo, *hi] widens to every slot read; err
 * (may be NULL) gets the first refused swap.  sc_hoist_dist: the swaps variant arg takes for that
 * reach, 0 when the variant is not legal. */
unsigned sc_hoist_reach(st_sched *s, uint32_t slot, int dir, uint32_t *lo, uint32_t *hi, st_error *err);
unsigned sc_hoist_dist(unsigned arg, unsigned reach);
st_status sc_check_hoist(const st_sched *s, st_move m, uint32_t *rlo, uint32_t *rhi, st_error *err);
/* Group form (group.c).  sc_group_prepare: the static readers (with ST_SCHED_HOIST).
 * sc_group_members: the group of the load at `slot` in the current state, as slots in ascending
 * order (the load last), or 0 when it has none (not such a load, or no producer).
 * sc_group_reach: how many group steps in direction dir are legal in a row (0..SC_HOIST_MAX), the
 * state restored as sc_hoist_reach does.  sc_hoist_swaps: the swap slots, in order, that a legal
 * hoist move (single or group) applies, 0 when it is not legal now. */
st_status sc_group_prepare(st_sched *s, st_error *err);
unsigned sc_group_members(const st_sched *s, uint32_t slot, uint32_t mem[SC_GROUP_MAX]);
unsigned sc_group_reach(st_sched *s, const uint32_t *mem, unsigned nm, int dir, uint32_t *lo, uint32_t *hi,
			st_error *err);
unsigned sc_hoist_swaps(const st_sched *s, st_move m, uint32_t sw[SC_GROUP_MAX * SC_HOIST_MAX]);
st_status sc_check_group(const st_sched *s, st_move m, uint32_t *rlo, uint32_t *rhi, st_error *err);
int sc_group_describe(const st_sched *s, st_move m, char *buf, size_t n);
/* Later waits (wait.c): the static needs/stops (only with ST_SCHED_WAIT), the legality and fix-up
 * of a wait move, and the slot its wait lands on. */
st_status sc_wait_prepare(st_sched *s, st_error *err);
st_status sc_check_wait(const st_sched *s, st_move m, sc_fix *fix, uint32_t *rlo, uint32_t *rhi, st_error *err);
uint32_t sc_wait_target(const st_sched *s, st_move m);
/* Scoreboard re-assignment (sb.c): the reserved SBs, the legality and fix-up of an SB move (*fix:
 * the producer's new SB, the wait added where the old SB's first wait after it is), the slot that
 * wait is on, and the arg of the move the list offers at slot j for field rd (1 read SB). */
void sc_sb_prepare(st_sched *s);
st_status sc_check_sb(const st_sched *s, st_move m, sc_fix *fix, uint32_t *rlo, uint32_t *rhi, st_error *err);
uint32_t sc_sb_target(const st_sched *s, st_move m);
int sc_sb_arg(const st_sched *s, uint32_t j, unsigned rd, uint32_t *lo, uint32_t *hi);
/* Moves across blocks (xblock.c): static candidates (only with ST_SCHED_XBLOCK), legality and
 * fix-up, the slot the insn lands on, the rotation (dir 1 apply, -1 undo; marks/unmarks the two
 * blocks, and moves the model's block facts with it: X joins A, H starts one slot later, X's and
 * L's exposure facts change, X8), whether a slot lies in a marked block (no wait, sb, rename or
 * xblock move there), and whether original instruction i is an X moved by an applied xblock move
 * (it stays at the end of A: no swap moves it; every latency into or out of it is the table's). */
st_status sc_xblock_prepare(st_sched *s, st_error *err);
st_status sc_check_xblock(const st_sched *s, st_move m, sc_fix *fix, uint32_t *rlo, uint32_t *rhi, st_error *err);
uint32_t sc_xblock_target(const st_sched *s, uint32_t slot);
void sc_xblock_rotate(st_sched *s, uint32_t j, uint32_t t, int dir);
int sc_xblock_frozen(const st_sched *s, uint32_t slot);
int sc_xblock_moved(const st_sched *s, uint32_t i);
/* Register renaming (rename.c, rename_enc.c): prepare (only with ST_SCHED_RENAME; m.in then
 * points at the state's own copy of the instructions), the target register of slot's move (-1:
 * none), legality (read range: the def's slot to its range's end), apply and undo (the undo
 * stack holds a ST_MOVE_RENAME record without fix-ups; rename.c keeps the details), the current
 * word of an instruction whose register fields changed (NULL: unchanged). */
st_status sc_rename_prepare(st_sched *s, const st_cubin *c, st_error *err);
void sc_rename_free(sc_rename *r);
int sc_rename_target(const st_sched *s, uint32_t slot); /* rename_regs.c: bank-aware, raise-aware */
/* rename_regs.c: the raised register count into kernel k of c when the state needs one; the
 * kernel's own count (0 unknown); a schedule's {"regcount": n} of kernel i as the state's limit
 * before its moves replay (none: nothing changes). */
st_status sc_rename_count_to_cubin(const st_sched *s, st_cubin *c, size_t k, st_error *err);
unsigned sc_rename_origcount(const st_sched *s);
st_status sc_rename_replay_limit(st_sched *s, const st_schedule *sch, size_t i, st_error *err);
st_status sc_check_rename(const st_sched *s, st_move mv, uint32_t *rlo, uint32_t *rhi, st_error *err);
st_status sc_apply_rename(st_sched *s, st_move mv, st_error *err);
void sc_undo_rename(st_sched *s);
const uint8_t *sc_rename_word(const st_sched *s, uint32_t i);
size_t sc_rename_count(const st_sched *s);
/* Rename record `rec` as schedule entries (the move, its field edits and cleared reuse flags at
 * the slots pos[] gives); a register byte (2, 3, 4, 8) of original instruction i now. */
st_status sc_rename_to_schedule(const st_sched *s, size_t rec, st_move mv, const uint32_t *pos, st_schedule *out,
				st_error *err);
unsigned sc_rename_field(const st_sched *s, uint32_t i, unsigned byte);
/* Which byte of the word holds the register of operand slot (ST_SLOT_D/A/B/C), -1 none; whether
 * every R operand of x sits in a field the rename can rewrite (docs/sched.md rule N2). */
int sc_rename_byte(unsigned slot);
bool sc_rename_encodable(const st_sass_insn *x, const uint8_t word[16]); /* word: x's current one */
/* Apply a swap at `slot` with its fix-up, no refresh (state.c; hoist.c's tentative chains). */
void sc_swap_raw(st_sched *s, uint32_t slot, const sc_fix *fix);
void sc_unswap_raw(st_sched *s, uint32_t slot, const sc_fix *fix);
/* Recompute cached legality for slots whose read range meets [lo, hi]. */
void sc_refresh(st_sched *s, uint32_t lo, uint32_t hi);
void sc_refresh_all(st_sched *s);

#endif
