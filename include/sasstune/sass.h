/* sasstune sass: one kernel decoded into instructions (sm_80/86/89/90).
 * Control fields come from the 128-bit words; opcode, modifiers and operands from
 * nvdisasm's `-hex -c` listing, checked word by word against the code bytes. */
#ifndef SASSTUNE_SASS_H
#define SASSTUNE_SASS_H
#include "sasstune/error.h"
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

/* Control fields (bits 105..124).  wbar/rbar: scoreboard 0..5, 7 = none; wait: bit k =
 * wait on SB k; reuse: bits 122..124 (operand reuse a/b/c when yield=1 and stall 1..11,
 * else batch_t).  Rules: stall 12..15 and stall 0 need yield=0; reuse needs stall 1..11. */
typedef struct st_ctrl { uint8_t stall, yield, wbar, rbar, wait, reuse; } st_ctrl;
#define ST_SB_NONE 7
st_ctrl st_ctrl_decode(const uint8_t word[16]);
st_status st_ctrl_check(st_ctrl c, st_error *err);                    /* the encoding rules */
st_status st_ctrl_encode(uint8_t word[16], st_ctrl c, st_error *err); /* check, then write bits */
unsigned st_ctrl_reuse_bits(st_ctrl c); /* reuse flags a/b/c (1/2/4), or 0 when bits 122..124 are batch_t */

typedef enum st_rf { ST_RF_R, ST_RF_UR, ST_RF_P, ST_RF_UP, ST_RF_B, ST_RF_COUNT } st_rf;
/* Operand slots (latency-table connectors): destination, sources a/b/c/e, guard. */
enum { ST_SLOT_D, ST_SLOT_A, ST_SLOT_B, ST_SLOT_C, ST_SLOT_E, ST_SLOT_G };
/* A run of `count` registers from `index` (R24..R27 = {R, 24, 4}); RZ/URZ/PT/UPT never appear. */
typedef struct st_sass_reg { uint16_t index; uint8_t file, count, slot; } st_sass_reg;

typedef enum st_sass_class {
	ST_CLASS_ALU,     /* fixed-latency math/logic (incl. uniform datapath) */
	ST_CLASS_VARLAT,  /* variable-latency non-memory: MUFU, S2R, conversions, SHFL, ... */
	ST_CLASS_MEMORY,  /* loads, stores, atomics, async copies */
	ST_CLASS_TENSOR,  /* HMMA, IMMA, DMMA, HGMMA, ... */
	ST_CLASS_CONTROL, /* BRA, EXIT, CALL, RET, BSSY, BSYNC, ... */
	ST_CLASS_SYNC,    /* BAR, DEPBAR, LDGDEPBAR, MEMBAR, FENCE, WARPGROUP, SYNCS, ... */
	ST_CLASS_OTHER,   /* NOP and anything unknown */
} st_sass_class;
typedef enum st_space { ST_SPACE_NONE, ST_SPACE_GLOBAL, ST_SPACE_SHARED, ST_SPACE_LOCAL,
	ST_SPACE_CONST, ST_SPACE_GENERIC } st_space;
enum { /* st_sass_insn.flags */
	ST_F_LOAD = 1 << 0, ST_F_STORE = 1 << 1, ST_F_ATOMIC = 1 << 2, ST_F_ASYNC = 1 << 3,
	ST_F_VARLAT = 1 << 4,  /* completion tracked by scoreboards, not by stalls */
	ST_F_BARRIER = 1 << 5, /* BAR, WARPGROUP, SYNCS, DEPBAR, ...: orders other threads/units */
	ST_F_FENCE = 1 << 6,   /* MEMBAR, FENCE, CCTL, ERRBAR: orders memory */
	ST_F_BRANCH = 1 << 7,  /* transfers control (BRA, BRX, CALL, RET, EXIT, ...) */
	ST_F_LEADER = 1 << 8,  /* first instruction of a basic block */
	ST_F_COLLECTIVE = 1 << 9, /* warp- or warpgroup-wide (SHFL, VOTE, WARPSYNC, HGMMA, ...) */
	ST_F_PCREL = 1 << 10,  /* holds a PC-relative immediate (BRA, BSSY, CALL.REL, BRX, RET.REL) */
};

typedef struct st_sass_insn {
	uint32_t offset, index, block;      /* byte offset in .text, position, basic-block id */
	uint8_t word[16];
	st_ctrl ctrl;
	const char *opcode;                 /* mnemonic with modifiers: "IMAD.WIDE.U32" */
	const char *operands;               /* operand text as printed, "" when none */
	const char *label;                  /* nvdisasm's label at this offset, or NULL */
	const st_sass_reg *defs, *uses;     /* guard and every implicit register included */
	uint8_t ndefs, nuses;
	uint8_t cls, space;                 /* st_sass_class, st_space */
	uint16_t flags;                     /* ST_F_* */
	int8_t guard;                       /* guard P/UP index, -1 = none (PT) */
	uint8_t guard_file, guard_neg;      /* ST_RF_P or ST_RF_UP; 1 for @!Px */
	int16_t lat_op;                     /* opcode id in the latency tables, -1 unknown */
	uint8_t lat_cond;                   /* WARPGROUP mode / gsb0 bits for the tables */
	int64_t target;                     /* branch/BSSY target offset, -1 none */
} st_sass_insn;

typedef struct st_sass_kernel st_sass_kernel;
typedef struct st_cubin st_cubin;
typedef struct st_sass_opts {
	const char *listing;  /* read this `nvdisasm -hex -c` listing instead of running nvdisasm */
	const char *nvdisasm; /* this nvdisasm (else SASSTUNE_NVDISASM, ptxas_dir, Triton's, CUDA_HOME, PATH: docs/sass.md) */
	const char *ptxas_dir;/* folder of the ptxas that built the cubin, when known */
	int timeout_ms;       /* for nvdisasm; 0 = 60 s */
} st_sass_opts;

/* Decode kernel `name` of a cubin (opts may be NULL). */
st_status st_sass_decode(const st_cubin *cubin, const char *name, const st_sass_opts *opts,
			 st_sass_kernel **out, st_error *err);
/* Decode from code bytes and listing text (the listing's section .text.<name>). */
st_status st_sass_decode_code(int sm, const char *name, const uint8_t *code, size_t size,
			      const char *listing, size_t listing_len, st_sass_kernel **out,
			      st_error *err);
/* Run nvdisasm on the whole cubin: `-hex -c [flag]` (flag e.g. "-plr" or NULL); *text is
 * malloc'ed.  With opts->listing set, that file is read instead. */
st_status st_sass_listing(const st_cubin *cubin, const st_sass_opts *opts, const char *flag, char **text,
			  size_t *len, st_error *err);
void st_sass_free(st_sass_kernel *k);
int st_sass_sm(const st_sass_kernel *k);
const char *st_sass_name(const st_sass_kernel *k);
size_t st_sass_count(const st_sass_kernel *k);
const st_sass_insn *st_sass_insns(const st_sass_kernel *k); /* array of st_sass_count() */
const st_sass_insn *st_sass_at(const st_sass_kernel *k, uint32_t offset); /* or NULL */
size_t st_sass_block_count(const st_sass_kernel *k);
/* Instructions [first, first + count) form block b; succ: up to 2 successor blocks, -1 = none. */
void st_sass_block(const st_sass_kernel *k, size_t b, uint32_t *first, uint32_t *count, int32_t succ[2]);

/* Fixed latency from nvdisasm's tables: minimum issue distance in cycles between producer
 * p and later instruction c over a resource, for a dependence kind; pslot/cslot are the
 * ST_SLOT_* of the operands involved (-1: any).  -1 = the tables set no distance. */
typedef enum st_sass_res { ST_RES_GPR, ST_RES_UGPR, ST_RES_PRED, ST_RES_UPRED, ST_RES_SCOREBOARD,
	ST_RES_MEMORY, ST_RES_CC, ST_RES_BSTACK, ST_RES_CONTROL, ST_RES_CGABAR, ST_RES_GMMA_SB,
	ST_RES_GMMA_GSB, ST_RES_RPC, ST_RES_COUNT } st_sass_res;
typedef enum st_sass_dep { ST_DEP_TRUE, ST_DEP_OUTPUT, ST_DEP_ANTI } st_sass_dep;
int st_sass_latency(int sm, const st_sass_insn *p, int pslot, const st_sass_insn *c, int cslot,
		    st_sass_res res, st_sass_dep kind);

/* Compare def/use sets with `nvdisasm -plr -hex -c` output for the same cubin: of the
 * *compared instructions -plr lists (it leaves out the final NOP padding), *agree have the
 * same R/UR/P/UP defs and uses; report (may be NULL) gets the others. */
st_status st_sass_check_plr(const st_sass_kernel *k, const char *plr_listing, size_t len, size_t *agree,
			    size_t *compared, void (*report)(void *ctx, const st_sass_insn *in, const char *diff), void *ctx,
			    st_error *err);

/* The reuse bits (1 = a, 2 = b, 4 = c) that the operand text's `.reuse` marks imply, each
 * marked register's slot taken from `uses`; -1 when a mark is not on a plain R register in
 * exactly one source slot.  Compare with ctrl.reuse to see whether an opcode's reuse bits
 * follow the positional slots (most do; HADD2.F32 and IABS do not). */
int st_sass_reuse_marks(const st_sass_insn *x);

/* Text helpers: "R24", "UR4", "P0", "B1"; class and space names. */
int st_sass_reg_str(char *buf, size_t n, unsigned file, unsigned index);
const char *st_sass_class_str(unsigned cls);
const char *st_space_str(unsigned space);

#ifdef __cplusplus
}
#endif
#endif
