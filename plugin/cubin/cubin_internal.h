/* Internal state of the cubin module (not public API). */
#ifndef ST_CUBIN_INTERNAL_H
#define ST_CUBIN_INTERNAL_H

#include "sasstune/cubin.h"

#define ST_SHT_CUDA_INFO 0x70000000u
#define ST_EM_CUDA 190
#define ST_STO_CUDA_ENTRY 0x10

/* One ELF section, as located in the image. */
typedef struct st_section {
	const char *name; /* into names (owned by the cubin) */
	uint32_t type, link, info;
	uint64_t flags, offset, size, entsize, addralign;
	size_t kernel; /* kernel whose .text this is, or ST_CUBIN_NONE */
} st_section;

/* Everything parsed from one image.  Rebuilt from scratch after each permutation. */
typedef struct st_cubin_view {
	st_section *sections;
	size_t nsections;
	char *strings; /* copies of section, symbol and kernel names */
	size_t strings_len, strings_cap;
	st_kernel_info *kernels;
	size_t nkernels;
	st_nvinfo *nvinfo;
	size_t nnvinfo;
	st_symbol *symbols;
	size_t nsymbols;
	unsigned symtab; /* section index of .symtab (0: none) */
	st_reloc *relocs;
	size_t nrelocs;
	st_const_bank *consts;
	size_t nconsts;
	struct st_refs *refs; /* per kernel, computed on demand */
} st_cubin_view;

struct st_cubin {
	char *name;
	uint8_t *image;
	size_t size;
	unsigned sm, osabi;
	uint32_t eflags;
	st_cubin_view v;
};

/* Parse image into a fresh view (ok only if the whole file is consistent). */
st_status st_cubin_parse(const char *name, const uint8_t *image, size_t size, unsigned *sm, unsigned *osabi,
			 uint32_t *eflags, st_cubin_view *v, st_error *err);
void st_cubin_view_free(st_cubin_view *v);

/* Per-kernel references (plugin/cubin/refs.c). */
typedef struct st_refs {
	bool done;
	st_code_ref *items;
	size_t n;
	st_status status; /* of the analysis: ST_EUNSUPPORTED with msg when not rewritable */
	char msg[ST_ERROR_MSG_MAX];
} st_refs;
void st_refs_free(st_refs *r);

/* Instruction-word helpers (plugin/cubin/insn.c). */
typedef struct st_word {
	uint64_t lo, hi;
} st_word;
st_word st_word_load(const uint8_t *p);
void st_word_store(uint8_t *p, st_word w);
unsigned st_word_opcode(st_word w); /* {bit 91, bits 11..0} */

typedef enum st_branch_field {
	ST_BF_NONE,
	ST_BF_WIDE, /* BRA / BRA.DIV / CALL.REL / BRX / RET.REL */
	ST_BF_BSSY, /* 30-bit at 34 */
} st_branch_field;
st_branch_field st_branch_kind(unsigned opcode, const char **name);
/* Signed immediate of a PC-relative branch, in 4-byte units. */
int64_t st_branch_imm(st_word w, unsigned sm, st_branch_field f);
/* Store imm (4-byte units); false if it does not fit the field. */
bool st_branch_set_imm(st_word *w, unsigned sm, st_branch_field f, int64_t imm);

#endif
