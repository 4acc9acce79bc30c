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
	size_t *reloc_entry; /* file offset of each relocation entry */
	st_const_bank *consts;
	size_t nconsts;
	struct st_refs *refs; /* per kernel, computed on demand */
} st_cubin_view;

/* The original bytes stay untouched; the current image is always rebuilt from them and the
 * cumulative permutation of each kernel (cum[k][new slot] = original slot, NULL = identity). */
struct st_cubin {
	char *name;
	uint8_t *orig, *image;
	size_t size;
	unsigned sm, osabi;
	uint32_t eflags;
	st_cubin_view ov; /* parsed from orig */
	st_cubin_view v;  /* parsed from image (aliases ov's content while nothing moved) */
	uint32_t **cum;
	uint8_t **ins; /* per kernel, per original slot: 1 when st_cubin_insert wrote it (insert.c) */
};

/* Parse image into a fresh view (ok only if the whole file is consistent). */
st_status st_cubin_parse(const char *name, const uint8_t *image, size_t size, unsigned *sm, unsigned *osabi,
			 uint32_t *eflags, st_cubin_view *v, st_error *err);
void st_cubin_view_free(st_cubin_view *v);

typedef enum st_branch_field {
	ST_BF_NONE,
	ST_BF_WIDE, /* BRA / BRA.DIV / CALL.REL / BRX / RET.REL */
	ST_BF_BSSY, /* 30-bit at 34 */
} st_branch_field;

/* Per-kernel references (plugin/cubin/refs.c). */
typedef enum st_patch {
	ST_P_BRANCH,  /* PC-relative immediate of the word at slot */
	ST_P_SELF,    /* self-cancelling immediate of the word at slot */
	ST_P_LEPC,    /* LEPC label: byte offset from the next instruction in bits 24..31 (0..127) */
	ST_P_MOVLIT,  /* 32-bit literal at bits 32..63 of the word at slot */
	ST_P_U32,     /* u32 at file_off (.nv.info payload, jump table) */
	ST_P_ROFF,    /* r_offset of the relocation entry at file_off */
	ST_P_RADDEND, /* r_addend of the RELA entry at file_off (code offset = symval + addend) */
	ST_P_SYMVAL,  /* st_value of the symbol entry at file_off */
} st_patch;

typedef struct st_ref_item {
	st_code_ref pub; /* first: st_cubin_ref returns &item.pub */
	st_patch how;
	st_branch_field bf;
	bool ret;           /* return-point semantics: target = slot after call_slot */
	uint32_t call_slot;
	size_t file_off;
	int64_t symval;     /* ST_P_RADDEND */
} st_ref_item;

typedef struct st_refs {
	bool done;
	st_ref_item *items;
	size_t n, cap;
	st_status status; /* of the analysis: ST_EUNSUPPORTED with msg when not rewritable */
	char msg[ST_ERROR_MSG_MAX];
	uint32_t *func_start; /* slot where the function holding each slot starts (UINT32_MAX: none) */
} st_refs;
void st_refs_free(st_refs *r);
/* Analyse kernel k of (image, view) once; results cached in view->refs[k]. */
const st_refs *st_refs_get(const uint8_t *image, st_cubin_view *v, unsigned sm, size_t k);

/* Rewrite .debug_line and .nv_debug_line_sass in img (whose code has been permuted by cum:
 * per kernel, NULL = unmoved) from their original bytes in orig, so that every instruction keeps
 * its line; a table that cannot be rewritten in its own bytes is dropped (plugin/cubin/lines_rewrite.c). */
void st_lines_rewrite(uint8_t *img, const uint8_t *orig, const st_cubin_view *v, const uint32_t *const *cum);

/* Instruction-word helpers (plugin/cubin/insn.c). */
typedef struct st_word {
	uint64_t lo, hi;
} st_word;
st_word st_word_load(const uint8_t *p);
void st_word_store(uint8_t *p, st_word w);
unsigned st_word_opcode(st_word w); /* {bit 91, bits 11..0} */

st_branch_field st_branch_kind(unsigned opcode, const char **name);
/* Signed immediate of a PC-relative branch, in 4-byte units. */
int64_t st_branch_imm(st_word w, unsigned sm, st_branch_field f);
/* Store imm (4-byte units); false if it does not fit the field. */
bool st_branch_set_imm(st_word *w, unsigned sm, st_branch_field f, int64_t imm);

/* Kernel k's slot: its info, its word in the current image and in the original bytes the image
 * is rebuilt from (ctrl.c; the control and register-field edits write both). */
st_status cubin_slot_words(st_cubin *c, size_t k, size_t slot, const st_kernel_info **ki, uint8_t **cur,
			   uint8_t **orig, st_error *err);
/* A field edit of kernel k's slot (ctrl.c): `word` may differ from the current word only in the bits
 * set in mask[16], else ST_EINVAL "... changes bits outside <fields>"; those bits (and only those:
 * a moved branch's image holds a patched immediate) go into the current image and the original
 * bytes, so the edit stays with its instruction through later st_cubin_permute() calls. */
st_status cubin_set_masked(st_cubin *c, size_t k, size_t slot, const uint8_t word[16], const uint8_t mask[16],
			   const char *fields, st_error *err);
#endif
