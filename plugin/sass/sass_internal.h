/* Internal pieces of the sass module shared by its source files. */
#ifndef ST_SASS_INTERNAL_H
#define ST_SASS_INTERNAL_H

#include "sasstune/sass.h"

#include <stddef.h>
#include <stdint.h>

/* What an opcode is, by its mnemonic (the part before the first '.'). */
enum st_dk { /* how the leading operands become definitions */
	ST_DK_ONE,   /* the first register operand is written (default) */
	ST_DK_NONE,  /* nothing is written through the operand list (stores, branches, ...) */
	ST_DK_TWO,   /* the first two register operands are written (ISETP P, P; SHFL P, R; VOTE R, P) */
	ST_DK_CARRY, /* first operand, then any predicates right after it (IADD3 R, P, P, ...) */
	ST_DK_PFIRST, /* the first operand; the second too when the first is a predicate (SHFL P, R) */
};
struct st_opinfo {
	const char *name;
	uint8_t cls, space, dk;
	uint16_t flags;
};
/* NULL when unknown (the decoder then treats it as ST_CLASS_OTHER, first operand written). */
const struct st_opinfo *st_opinfo_find(const char *mnemonic, size_t len);
size_t st_opinfo_count(void);
const struct st_opinfo *st_opinfo_at(size_t i); /* for tests: the table is sorted */

/* One instruction's text analysed. */
#define ST_MAX_REGS 48
struct st_analysis {
	st_sass_reg defs[ST_MAX_REGS], uses[ST_MAX_REGS];
	unsigned ndefs, nuses;
	size_t opcode_len;         /* text[op_start, op_start + opcode_len) is the opcode */
	size_t op_start, operands; /* offsets in the text */
	int8_t guard;
	uint8_t guard_file, guard_neg;
	uint8_t cls, space, lat_cond;
	uint16_t flags;
	int16_t lat_op;
	const char *label; /* first "`(label)" operand (not NUL-terminated), or NULL */
	size_t label_len;
};
/* lat_cond bits */
#define ST_LC_ARV 1u    /* WARPGROUP.ARRIVE */
#define ST_LC_WAIT 2u   /* WARPGROUP.WAIT */
#define ST_LC_DEPBAR 4u /* WARPGROUP.DEPBAR */
#define ST_LC_GSB0 8u   /* *GMMA ..., gsb0 */

/* word: the instruction's 16 bytes (for operands nvdisasm does not print), or NULL. */
st_status st_sass_analyze(int sm, const char *text, const uint8_t *word, struct st_analysis *a, st_error *err);
/* Hidden register groups (groups.c): registers of the nth bracket operand of a UTMA* or UBLKCP
 * opcode (0: not one), of STSM's data operand (0: not STSM).  opc: the opcode with modifiers, n bytes. */
unsigned st_sass_tma_group(const char *opc, size_t n, unsigned nth);
unsigned st_sass_stsm_regs(const char *opc, size_t n);

/* nvdisasm: find it (explicit path, SASSTUNE_NVDISASM, ptxas_dir, TRITON_PTXAS_PATH's folder,
 * CUDA_HOME/bin, Triton's bundled one, PATH: nvdisasm_find.c), run it
 * on cubin bytes (args before the file name), collect stdout.  *out is malloc'ed, NUL-ended. */
st_status st_nvdisasm_find(const char *explicit_path, const char *ptxas_dir, char **out, st_error *err);
st_status st_nvdisasm_run(const char *tool, const char *const *args, const uint8_t *cubin, size_t size,
			  int timeout_ms, char **out, size_t *outlen, st_error *err);

#endif
