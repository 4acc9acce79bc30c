/* Internals of the pipe family (family 3 form 1, docs/pipeline.md "Form 1: rotation"): pipe.c (loops and
 * groups, P1-P4, P6), pipe_live.c (CFG liveness), pipe_apply.c (P7-P8), pipe_enc.c (predicate fields).
 * The independent checker (check_pipe*.c) uses none of this. */
#ifndef ST_PIPE_INTERNAL_H
#define ST_PIPE_INTERNAL_H
#include "sasstune/pipe.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PP_MAX_MEMBERS 24
#define PP_MAX_LOADS 8

/* A set of registers: R0..R255, UR0..UR63, P0..P7, UP0..UP7. */
typedef struct pp_set { uint64_t r[4], ur; uint8_t p, up; } pp_set;
bool pp_set_has(const pp_set *s, unsigned file, unsigned index);
void pp_set_put(pp_set *s, unsigned file, unsigned index, bool on);

typedef struct pp_kern {
	const st_sass_kernel *k;
	const st_sass_insn *in;
	size_t n, nb;
	int sm;
	pp_set *livein;    /* per block: live at its start (pipe_live.c) */
	const st_cubin *c; /* may be NULL (synthetic kernels): references then come from branch targets */
	size_t ki;
} pp_kern;
st_status pp_kern_init(pp_kern *x, const st_sass_kernel *k, const st_cubin *c, size_t ki, st_error *err);
void pp_kern_free(pp_kern *x);
/* Decode kernel `kernel` of c (NULL: its only kernel) and pp_kern_init it (pipe_find.c). */
st_status pp_open(const st_cubin *c, const char *kernel, const st_sass_opts *o, st_sass_kernel **k, pp_kern *x,
		  st_error *err);

/* A loop block B (instructions first..bra, bra = the back branch) with H = block b - 1. */
typedef struct pp_loop {
	uint32_t b, first, bra, h, hfirst;
	int pe, pe_neg; /* the back branch's guard: continue is Pe (pe_neg 0) or !Pe (pe_neg 1) */
	uint32_t e;     /* the last writer of Pe in B */
	pp_set exitlive; /* live on B's exit edge */
} pp_loop;

/* One group G (original indices, layout order). */
typedef struct pp_group {
	uint32_t nmem, nfeed, nloads;
	uint32_t mem[PP_MAX_MEMBERS], feed[PP_MAX_MEMBERS], loads[PP_MAX_LOADS];
	uint32_t p;                 /* the last member */
	int8_t pred_from, pred_to;  /* P6 rename (-1: none) */
	pp_set in;                  /* the inputs (P3) */
} pp_group;

/* A refusal: the rule and a message at an offset. */
typedef struct pp_why { const char *rule; uint32_t off; char msg[192]; } pp_why;
/* Fill *why (when not NULL) with the rule, the offset and the formatted message; false (pipe.c). */
bool pp_refuse(pp_why *why, const char *rule, uint32_t off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

bool pp_loop_at(const pp_kern *x, uint32_t b, pp_loop *L, pp_why *why);
size_t pp_loop_loads(const pp_kern *x, const pp_loop *L, uint32_t *loads, size_t max);
bool pp_group_close(const pp_kern *x, const pp_loop *L, const uint32_t *loads, size_t n, pp_group *g, pp_why *why);
bool pp_group_build(const pp_kern *x, const pp_loop *L, const uint32_t *loads, size_t n, pp_group *g, pp_why *why);
int64_t pp_guard_writer(const pp_kern *x, const pp_loop *L, uint32_t X); /* ISETP of load X's guard, -1 */
/* Register (file f, index r) written / read by x; its latest writer in [from, before) (-1: none); its
 * writers in loop block B (pipe.c, shared with form 2's pipe2.c). */
bool pp_writes(const st_sass_insn *x, unsigned f, unsigned r);
bool pp_reads(const st_sass_insn *x, unsigned f, unsigned r);
int64_t pp_last_writer(const pp_kern *x, uint32_t from, uint32_t before, unsigned f, unsigned r);
unsigned pp_writers(const pp_kern *x, const pp_loop *L, unsigned f, unsigned r);
/* Append c to the candidate vector v (n used of cap; pipe_find.c, shared with pipe2_find.c). */
st_status pp_push(st_pipe_cand **v, size_t *n, size_t *cap, const st_pipe_cand *c, st_error *err);
/* The kernel's control fields, one per original slot (malloc'ed; NULL: out of memory), and the
 * all-or-nothing write of a plan: write(plan, scratch copy of c), then write(plan, c) (pipe_apply.c,
 * shared with pipe2_apply.c). */
st_ctrl *pp_ctrl_copy(const pp_kern *x);
st_status pp_write_all_or_nothing(st_cubin *c, st_status (*write)(void *plan, st_cubin *t, st_error *err), void *plan,
				  st_error *err);
/* Bits [bit, bit + width) of a 16-byte word (pipe_enc.c, shared with pipe2_words.c). */
unsigned pp_bits(const uint8_t w[16], unsigned bit, unsigned width);
void pp_set_bits(uint8_t w[16], unsigned bit, unsigned width, unsigned v);
bool pp_is_member(const pp_group *g, uint32_t i);
/* Does a member of g before index m write (f, r)? (pipe.c, shared with pipe2.c) */
bool pp_written_before_in_g(const pp_kern *x, const pp_group *g, uint32_t m, unsigned f, unsigned r);
bool pp_is_feeder(const pp_group *g, uint32_t i);
bool pp_is_load(const pp_group *g, uint32_t i);
bool pp_is_ldg(const st_sass_insn *x);   /* a global load with a register result (P1) */
bool pp_fixed_alu(const st_sass_insn *x); /* fixed-latency ALU known to the tables, no scoreboard (P2) */
bool pp_feeder_ok(const pp_kern *x, const pp_loop *L, uint32_t u); /* P3c */

/* Predicate fields of sm_80..90 words (pipe_enc.c; docs/cubin.md "Predicate fields"). */
enum { PP_OP_AND = 0, PP_OP_OR = 1, PP_OP_XOR = 2 };
bool pp_is_isetp_word(const uint8_t w[16]);
void pp_guard_set(uint8_t w[16], int p, int neg); /* p -1: PT */
int pp_isetp_dst(const uint8_t w[16]);            /* [83:81] */
int pp_isetp_dst2(const uint8_t w[16]);           /* [86:84] */
int pp_isetp_pc(const uint8_t w[16], int *neg);   /* [89:87], [90] */
int pp_isetp_op(const uint8_t w[16]);             /* [75:74] */
void pp_isetp_set(uint8_t w[16], int dst, int op, int pc, int pc_neg);

/* The new words of one loop's rewrite (pipe_apply.c). */
typedef struct pp_word { uint32_t orig; uint8_t w[16]; st_ctrl ctrl; } pp_word;
/* The member's word in B (edit 1) or in the peel (edit 0: rename only). */
void pp_member_word(const pp_kern *x, const pp_loop *L, const pp_group *g, uint32_t i, int in_b, uint8_t w[16]);
#endif
