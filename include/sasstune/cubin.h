/* sasstune cubin: read a CUDA cubin (ELF), inspect it, permute the 16-byte instruction slots of
 * a kernel while patching every code offset the file keeps, and write it back.
 *
 * The cubin keeps the original file bytes; every change is patched into that image in place,
 * so an unchanged cubin writes back byte-identical.  Views returned below (st_kernel_info,
 * st_nvinfo, st_reloc, ...) point into the st_cubin and stay valid until the next
 * st_cubin_permute() or st_cubin_free().  See docs/cubin.md. */
#ifndef SASSTUNE_CUBIN_H
#define SASSTUNE_CUBIN_H

#include "sasstune/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct st_cubin st_cubin;

#define ST_CUBIN_NONE ((size_t)-1) /* "no kernel": global .nv.info, other sections */

/* Open a cubin.  open_mem copies the bytes; name (may be NULL) is used in messages. */
st_status st_cubin_open_mem(const void *data, size_t size, const char *name, st_cubin **out, st_error *err);
st_status st_cubin_open_file(const char *path, st_cubin **out, st_error *err);
void st_cubin_free(st_cubin *c);

const char *st_cubin_name(const st_cubin *c);
const uint8_t *st_cubin_data(const st_cubin *c, size_t *size); /* the current image */
st_status st_cubin_write_file(const st_cubin *c, const char *path, st_error *err);

unsigned st_cubin_sm(const st_cubin *c);      /* 80, 86, 90, ... from e_flags */
unsigned st_cubin_osabi(const st_cubin *c);   /* 0x33: CUDA <= 12 ELF, 0x41: CUDA 13 ELF */
uint32_t st_cubin_eflags(const st_cubin *c);

/* Kernels: one per .text.<name> section (entries and separately compiled device functions). */
typedef struct st_kernel_info {
	const char *name;   /* section name without ".text." */
	unsigned section;   /* ELF section index */
	size_t file_offset; /* of the code in the image */
	size_t size;        /* bytes, a multiple of 16 */
	size_t insn_count;  /* size / 16: instruction slots, including the final BRA/NOP padding */
	unsigned symbol;    /* symtab index from the section's sh_info, bits 0..23 (0: none) */
	bool entry;         /* a __global__ entry point (symbol st_other has STO_CUDA_ENTRY) */
} st_kernel_info;
size_t st_cubin_kernel_count(const st_cubin *c);
const st_kernel_info *st_cubin_kernel(const st_cubin *c, size_t k);        /* NULL if out of range */
size_t st_cubin_find_kernel(const st_cubin *c, const char *name);          /* ST_CUBIN_NONE if absent */
const uint8_t *st_cubin_code(const st_cubin *c, size_t k, size_t *size);    /* current code bytes */
void st_cubin_insn(const st_cubin *c, size_t k, size_t slot, uint64_t *lo, uint64_t *hi);

/* .nv.info (kernel == ST_CUBIN_NONE) and .nv.info.<kernel> records, in file order. */
typedef struct st_nvinfo {
	size_t kernel;          /* kernel index or ST_CUBIN_NONE */
	unsigned section;       /* ELF section index */
	size_t offset;          /* of the record within its section */
	unsigned format;        /* 1 NVAL, 2 BVAL, 3 HVAL, 4 SVAL */
	unsigned attr;          /* EIATTR id */
	const char *name;       /* "EIATTR_EXIT_INSTR_OFFSETS"; NULL when the id is unknown */
	uint32_t value;         /* BVAL / HVAL value */
	size_t size;            /* SVAL payload bytes (0 otherwise) */
	const uint8_t *payload; /* SVAL payload inside the image */
} st_nvinfo;
size_t st_cubin_nvinfo_count(const st_cubin *c);
const st_nvinfo *st_cubin_nvinfo(const st_cubin *c, size_t i);
const char *st_eiattr_name(unsigned attr); /* NULL when unknown */

/* ELF symbols (.symtab, index 0 included). */
typedef struct st_symbol {
	const char *name;
	uint64_t value, size;
	unsigned type, bind, other, shndx;
} st_symbol;
size_t st_cubin_symbol_count(const st_cubin *c);
const st_symbol *st_cubin_symbol(const st_cubin *c, size_t i);

/* Relocations of every .rel.* / .rela.* section. */
typedef struct st_reloc {
	unsigned section, target; /* the relocation section and the section it patches */
	size_t kernel;            /* kernel whose code it patches, or ST_CUBIN_NONE */
	uint64_t offset;          /* r_offset within target */
	unsigned type;            /* R_CUDA_* number */
	const char *type_name;    /* "R_CUDA_ABS32_LO_32"; NULL when unknown */
	unsigned symbol;
	const char *symbol_name;
	int64_t addend;           /* 0 for .rel */
	bool rela;
	const char *target_name;  /* name of the section it patches */
} st_reloc;
size_t st_cubin_reloc_count(const st_cubin *c);
const st_reloc *st_cubin_reloc(const st_cubin *c, size_t i);
const char *st_reloc_type_name(unsigned type); /* NULL when unknown */

/* Constant banks: .nv.constantN and .nv.constantN.<kernel>. */
typedef struct st_const_bank {
	const char *section_name;
	unsigned section, bank;
	size_t kernel;       /* ST_CUBIN_NONE for a bank shared by all kernels */
	size_t size;
	const uint8_t *data; /* NULL for NOBITS */
} st_const_bank;
size_t st_cubin_const_count(const st_cubin *c);
const st_const_bank *st_cubin_const(const st_cubin *c, size_t i);

/* Everything in a kernel that names one of its code offsets (what st_cubin_permute patches). */
typedef enum st_ref_kind {
	ST_REF_BRANCH,     /* PC-relative target of BRA/BRA.DIV/CALL.REL/BSSY (slot = the instruction) */
	ST_REF_SELF,       /* BRX / RET.REL immediate that cancels the PC (target is always 0) */
	ST_REF_RETURN,     /* return-address literal before a CALL (slot = the MOV; target = after the CALL) */
	ST_REF_ATTR,       /* an offset in a .nv.info.<kernel> record */
	ST_REF_JUMP_TABLE, /* a BRX target stored in .nv.constant2.<kernel> */
	ST_REF_RELOC,      /* a relocation offset (or a code-offset addend) */
	ST_REF_SYMBOL,     /* the value of a symbol defined in the kernel's section */
	ST_REF_LITERAL,    /* a MOV literal naming an instruction (the offset of an LEPC) */
} st_ref_kind;
typedef struct st_code_ref {
	st_ref_kind kind;
	const char *what; /* "BRA", "EIATTR_EXIT_INSTR_OFFSETS", a symbol or relocation type name */
	long slot;        /* instruction slot holding the reference, -1 when it is outside the code */
	uint32_t target;  /* the code byte offset it names */
} st_code_ref;
size_t st_cubin_ref_count(const st_cubin *c, size_t k);
const st_code_ref *st_cubin_ref(const st_cubin *c, size_t k, size_t i);

/* ST_OK when every place in (and for) kernel k that may hold a code offset is understood;
 * otherwise ST_EUNSUPPORTED naming the attribute, section or instruction. */
st_status st_cubin_check_rewritable(const st_cubin *c, size_t k, st_error *err);

/* Reorder kernel k's slots: new slot j receives old slot perm[j]; n must be the slot count.
 * Every reference moves with the instruction it names; return addresses follow their CALL.
 * All-or-nothing: on failure the cubin is unchanged.  An identity permutation changes nothing. */
st_status st_cubin_permute(st_cubin *c, size_t k, const uint32_t *perm, size_t n, st_error *err);
/* Replace bits 105..124 (control fields) of kernel k's word in slot; any other change is refused.
 * The edit stays with the instruction through later permutations (plugin/cubin/ctrl.c). */
st_status st_cubin_set_ctrl(st_cubin *c, size_t k, size_t slot, const uint8_t word[16], st_error *err);
/* Replace the register fields (bytes 2, 3, 4, 8: Rd, Ra, Rb, Rc) of the instruction now in `slot` with
 * word's; any other difference is refused (the sched rename family, plugin/cubin/regs.c). */
st_status st_cubin_set_regs(st_cubin *c, size_t k, size_t slot, const uint8_t word[16], st_error *err);
/* Predicate fields (plugin/cubin/preds.c, docs/cubin.md "Predicate fields"): the guard [15:12] of the
 * instruction now in `slot`, and on ISETP its op [75:74], destinations [83:81], [86:84] and combining
 * input [90:87], on IADD3/LEA the carry destination [83:81] and input [90:87]; any other change is
 * refused (the sched pipe family).  set_branch: the PC-relative
 * branch now in `slot` names the instruction now in `target` instead (plugin/cubin/branch.c). */
st_status st_cubin_set_preds(st_cubin *c, size_t k, size_t slot, const uint8_t word[16], st_error *err);
st_status st_cubin_set_branch(st_cubin *c, size_t k, size_t slot, size_t target, st_error *err);
/* Insertion (plugin/cubin/insert.c): the trailing NOP padding after the last EXIT / self-branch,
 * named by no reference, gives slots.  insertable: how many.  insert: the last padding NOP moves
 * to `slot` (old slots slot.. move down one; every reference keeps naming its instruction, so a
 * branch to the old `slot` skips the new one) and takes `word` (NULL: NOP, stall 1); all or
 * nothing.  set_word: a new word for an inserted slot only.  Words naming code are refused. */
size_t st_cubin_insertable(const st_cubin *c, size_t k);
st_status st_cubin_insert(st_cubin *c, size_t k, size_t slot, const uint8_t word[16], st_error *err);
st_status st_cubin_set_word(st_cubin *c, size_t k, size_t slot, const uint8_t word[16], st_error *err);
/* Kernel k's register count (its one EIATTR_REGCOUNT record; 0 when there is none or several) and
 * static shared memory (.nv.shared.<kernel> size, 0 without).  set_regcount writes the record
 * (1..255; refused unless there is exactly one, the kernel's EIATTR_MAXREG_COUNT allows the count
 * and sh_info keeps no count; plugin/cubin/regcount.c).  maxregs: the most set_regcount accepts
 * (the kernel's EIATTR_MAXREG_COUNT, 255 without one). */
unsigned st_cubin_regcount(const st_cubin *c, size_t k);
unsigned st_cubin_maxregs(const st_cubin *c, size_t k);
size_t st_cubin_static_shared(const st_cubin *c, size_t k);
st_status st_cubin_set_regcount(st_cubin *c, size_t k, unsigned regs, st_error *err);

#endif
