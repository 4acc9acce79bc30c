/* sasstune sched: which instruction moves keep a kernel correct, and an independent checker.
 * A st_sched holds one decoded kernel, its current order and control fields, and the legal
 * moves of that state (updated locally after each apply/undo).  Model and rules: docs/sched.md. */
#ifndef SASSTUNE_SCHED_H
#define SASSTUNE_SCHED_H
#include "sasstune/cubin.h"
#include "sasstune/sass.h"
#include "sasstune/schedule.h"
#include "sasstune/search.h"
#include <stddef.h>
#include <stdint.h>

/* The legality model's version, part of the schedule cache key: bumped by every change to a
 * legality or checker rule (plugin/sched: model.c, state.c, check.c, check_move.c,
 * sched_internal.h, hoist.c, group.c, wait.c, sb.c, xblock.c, check_xblock.c, check_internal.h, rename.c,
 * rename_enc.c, check_rename.c, rename_internal.h, rename_regs.c, check_regs.c, occupancy.c, the pipe family's
 * pipe.c, pipe_internal.h, pipe_live.c, pipe_find.c, pipe_apply.c, pipe_seq.c, pipe_timing.c/.h, pipe_enc.c and
 * plugin/cubin/preds.c, and its checker check_pipe.h, check_pipe.c, check_pipe_match.c, check_pipe_rules.c,
 * check_pipe_live.c, check_pipe_time.c, form 2's pipe2_internal.h, pipe2.c, pipe2_phi.c, pipe2_words.c,
 * pipe2_find.c, pipe2_apply.c, pipe2_seq.c and its checker check_pipe2.h, check_pipe2.c, check_pipe2_words.c,
 * check_pipe2_rules.c, check_pipe2_fresh.c, check_pipe2_ctrl.c; plugin/sass:
 * latency.c, latency_tables.c, and since version 5 the operand decode operands.c, groups.c).  test_legality_version fails when those files change and
 * its recorded hash does not. */
#define ST_LEGALITY_VERSION 9

typedef struct st_sched st_sched;
enum { ST_SCHED_WIDE = 1, ST_SCHED_NO_CTRL = 2, /* any non-fence insn may move; no control-code moves */
       ST_SCHED_HOIST = 4, ST_SCHED_WAIT = 8, /* the hoist (ST_MOVE_HOIST) and wait (ST_MOVE_WAIT) families */
       ST_SCHED_SB = 16,                       /* scoreboard re-assignment (ST_MOVE_SB) */
       ST_SCHED_RENAME = 32,                   /* register renaming (ST_MOVE_RENAME) */
       ST_SCHED_XBLOCK = 64,                   /* moves across blocks (ST_MOVE_XBLOCK) */
       ST_SCHED_PIPE = 128 };                  /* family 3 form 1 (pipe.h): tune's alternative, no walk move */
/* The move families tuning uses by default (st_tune_opts_init, the pass), by name (keyed in the
 * schedule cache) and as flags; st_sched_families(ST_SCHED_DEFAULT_FAMILIES) == ST_SCHED_MOVE_FAMILIES.
 * Every family that passed its GPU soundness campaign (docs/sched.md, issue 15: "all in the default
 * set once proven"); `moves` and `shuffle` keep swap,ctrl as their default listing. */
#define ST_SCHED_MOVE_FAMILIES "swap,ctrl,hoist,wait,sb,rename,xblock,pipe"
#define ST_SCHED_DEFAULT_FAMILIES \
	(ST_SCHED_HOIST | ST_SCHED_WAIT | ST_SCHED_SB | ST_SCHED_RENAME | ST_SCHED_XBLOCK | ST_SCHED_PIPE)
/* "swap,ctrl", "swap", "swap,ctrl,hoist", ...: the families flags enable, written into buf (n >= 64
 * always holds the longest); returns buf. */
#define ST_SCHED_FAMILIES_MAX 64
const char *st_sched_families(unsigned flags, char *buf, size_t n);
/* Comma list of families ("swap" required; "ctrl", "hoist", "wait", "sb", "rename", "xblock", "pipe") into the family bits of *flags. */
st_status st_sched_parse_families(const char *list, unsigned *flags, st_error *err);
typedef enum st_move_kind {
	ST_MOVE_SWAP,  /* slots `slot` and slot+1 trade places (control codes fixed up) */
	ST_MOVE_STALL, /* lower the stall of `slot` by one */
	ST_MOVE_YIELD, /* flip the yield bit of `slot` */
	ST_MOVE_REUSE, /* set reuse flag `arg` (0 a, 1 b, 2 c) of `slot` */
	ST_MOVE_CTRL,  /* set the control fields of `slot` to `ctrl` (replaying schedules) */
	ST_MOVE_HOIST, /* move the insn of `slot` by adjacent swaps: arg 0..3 up 2/4/8/far, 4..7 down */
	ST_MOVE_WAIT,  /* move the wait on SB `arg` of `slot` later, to the first insn that may need it */
	ST_MOVE_SB = 7, /* `slot`'s write SB (arg k) or read SB (arg 8 + k) becomes SB k, a locally idle one */
	ST_MOVE_RENAME = 8, /* the R register `slot` defines, and its reads up to the range's end, become R`arg` */
	ST_MOVE_XBLOCK = 9, /* move the insn of `slot` to the end of the block before (out of a loop) */
} st_move_kind;
typedef struct st_move { uint8_t kind, arg; uint32_t slot; st_ctrl ctrl; } st_move;

/* k must outlive the state; c (may be NULL) marks slots holding code references as fixed. */
st_status st_sched_new(const st_sass_kernel *k, const st_cubin *c, unsigned flags, st_sched **out, st_error *err);
void st_sched_free(st_sched *s);
size_t st_sched_move_count(const st_sched *s);         /* legal moves now, numbered in slot order */
st_move st_sched_move(const st_sched *s, size_t i);
st_status st_sched_check(const st_sched *s, st_move m, st_error *err); /* ST_EILLEGAL names the dependence */
st_status st_sched_apply(st_sched *s, st_move m, st_error *err);       /* check, then apply with fix-ups */
st_status st_sched_undo(st_sched *s, st_error *err);                   /* revert the latest apply */
void st_sched_reset(st_sched *s);                                      /* undo everything */
size_t st_sched_depth(const st_sched *s);                              /* applied moves */
int st_sched_describe(const st_sched *s, st_move m, char *buf, size_t n); /* "swap 0x1a0/0x1b0 (LDG <-> IMAD)" */
/* Look at the state move m would leave without taking it (peek.c): fn reads the order and control
 * fields (st_sched_at/ctrl) after m with its fix-ups; the state is as before when it returns. */
typedef st_status (*st_sched_peek_fn)(void *ctx, const st_sched *s, st_error *err);
st_status st_sched_peek(st_sched *s, st_move m, st_sched_peek_fn fn, void *ctx, st_error *err);

size_t st_sched_count(const st_sched *s);                 /* slots */
uint32_t st_sched_at(const st_sched *s, size_t slot);     /* original index of the insn now in slot */
st_ctrl st_sched_ctrl(const st_sched *s, size_t slot);    /* its current control fields */
const st_sass_kernel *st_sched_kernel(const st_sched *s);

/* Raising the register count (rename family, docs/sched.md "Raising the register count"): renames may
 * take targets that need up to `limit` registers (the kernel's count..255, before any move; the
 * caller picks it with its occupancy rule, occupancy.h; lowered to the kernel's EIATTR_MAXREG_COUNT); ST_EINVAL without the rename family or
 * the kernel's count (st_sched_new got no cubin).  st_sched_regcount: the count the state needs
 * now (the kernel's unless a rename went above it; 0 unknown); materialising writes it.
 * st_sched_set_banks: rename targets avoid register-bank conflicts of `banks` banks (2, the
 * default, 4; 0: the lowest free register). */
st_status st_sched_set_reglimit(st_sched *s, unsigned limit, st_error *err);
unsigned st_sched_regcount(const st_sched *s);
void st_sched_set_banks(st_sched *s, unsigned banks);

/* Materialise: permute kernel `k` of c (which must hold the decoded, unmoved kernel) and write the
 * changed control fields; or append the applied moves, fix-ups included, to a schedule. */
st_status st_sched_to_cubin(const st_sched *s, st_cubin *c, size_t k, st_error *err);
st_status st_sched_to_schedule(const st_sched *s, st_schedule *out, st_error *err);
/* Apply schedule kernel i's moves through the model (each must be legal). */
st_status st_sched_replay(st_sched *s, const st_schedule *sch, size_t i, st_error *err);
/* `rewrite`: replay every kernel of sch on c (a permutation is judged by st_check_kernel) into *out. */
st_status st_sched_rewrite(const st_cubin *c, const st_schedule *sch, const st_sass_opts *o, st_cubin **out,
			   st_error *err);

/* Search: move features (search.h schema) and an environment over a state; evaluate(ctx, s, ...)
 * scores the current state.  The environment borrows s; free it with st_sched_env_free. */
st_status st_sched_features(const st_sched *s, size_t move, float out[ST_SEARCH_NFEAT], st_error *err);
typedef st_status (*st_sched_eval_fn)(void *ctx, const st_sched *s, unsigned pairs, st_eval *out, st_error *err);
st_status st_sched_env_new(st_sched *s, st_sched_eval_fn evaluate, void *ctx, st_search_env **out, st_error *err);
void st_sched_env_free(st_search_env *env);

/* The independent checker: every constraint kernel `name` of `tuned` breaks relative to `orig`
 * (decoded with o).  report (may be NULL) gets one line per violation; ST_EILLEGAL if any. */
typedef void (*st_check_report_fn)(void *ctx, const char *kernel, uint32_t offset, const char *msg);
st_status st_check_kernel(const st_cubin *orig, const st_cubin *tuned, const char *name, const st_sass_opts *o,
			  st_check_report_fn report, void *ctx, size_t *violations, st_error *err);
/* The occupancy rule of a raised register count (check_regs.c): the tuned kernel's resident blocks
 * per SM (occupancy.h; static shared + dyn_shared bytes) are the original's unless allow_drop; a
 * raise with threads 0 (block size unknown) is a violation; an unchanged count passes. */
st_status st_check_occupancy(const st_cubin *orig, const st_cubin *tuned, const char *name, unsigned threads,
			     size_t dyn_shared, int allow_drop, st_check_report_fn report, void *ctx, size_t *violations,
			     st_error *err);
#endif
