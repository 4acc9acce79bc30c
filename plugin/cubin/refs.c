/* Code references of a kernel: everything in the file that names one of its instruction
 * offsets (SASS.md §1.5, §3.3, §3.4), found once per kernel, and the refusals for anything
 * that may hold a code offset but is not understood. */
#include "cubin_internal.h"
#include "util/util.h"

#include <gelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OP_MOV 0x802
#define OP_LEPC_REG 0x34e
#define OP_LEPC_LABEL 0x94e
#define OP_CALL_ABS_REG 0x343
#define OP_CALL_ABS_IMM 0x943
#define OP_CALL_REL 0x944
#define OP_BRX 0x949
#define OP_RET 0x950
#define OP_WARPSYNC 0x348
#define OP_WARPSYNC_ALL 0x948
#define RET_BACK_WINDOW 32 /* slots searched before a CALL for its return-address literal */
#define LEPC_FWD_WINDOW 16 /* slots searched after an LEPC for the literal of its own offset */

void st_refs_free(st_refs *r)
{
	free(r->items);
	free(r->func_start);
	memset(r, 0, sizeof *r);
}

static void refuse(st_refs *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void refuse(st_refs *r, const char *fmt, ...)
{
	if (r->status)
		return;
	r->status = ST_EUNSUPPORTED;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof r->msg, fmt, ap);
	va_end(ap);
}

static st_ref_item *add(st_refs *r, st_ref_kind kind, const char *what, long slot, uint32_t target, st_patch how)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 64;
		st_ref_item *p = realloc(r->items, cap * sizeof *p);
		if (!p) {
			if (r->status != ST_ENOMEM) {
				r->status = ST_ENOMEM;
				snprintf(r->msg, sizeof r->msg, "out of memory");
			}
			return NULL;
		}
		r->items = p;
		r->cap = cap;
	}
	st_ref_item *it = &r->items[r->n++];
	memset(it, 0, sizeof *it);
	it->pub.kind = kind;
	it->pub.what = what;
	it->pub.slot = slot;
	it->pub.target = target;
	it->how = how;
	return it;
}

/* ---- .nv.info attributes ---- */

typedef enum { A_SAFE, A_LIST, A_MBAR, A_IBT, A_PAIRS, A_REFUSE } attr_class;

static attr_class classify(unsigned attr)
{
	switch (attr) {
	case 0x1c: case 0x1d: case 0x25: case 0x27: case 0x28: case 0x2d: case 0x31:
	case 0x46: case 0x47: case 0x57: case 0x59: case 0x65:
		return A_LIST; /* u32 lists of instruction offsets */
	case 0x39:
		return A_MBAR;
	case 0x34:
		return A_IBT;
	case 0x55:
		/* ANNOTATIONS: (kind, instruction offset) u32 pairs; kind 1 marks the spill and fill
		 * instructions (STL/LDL) ptxas wrote, seen whenever a kernel spills (docs/cubin.md) */
		return A_PAIRS;
	case 0x01: case 0x02: case 0x04: case 0x05: case 0x06: case 0x07: case 0x08: case 0x09:
	case 0x0a: case 0x0b: case 0x0c: case 0x0d: case 0x0e: case 0x0f: case 0x10: case 0x11:
	case 0x12: case 0x13: case 0x15: case 0x16: case 0x17: case 0x18: case 0x19: case 0x1b:
	case 0x1e: case 0x1f: case 0x20: case 0x21: case 0x22: case 0x23: case 0x24: case 0x26:
	case 0x29: case 0x2a: case 0x2b: case 0x2c: case 0x2f: case 0x30: case 0x32: case 0x35:
	case 0x36: case 0x37: case 0x38: case 0x3b: case 0x3d: case 0x3e: case 0x3f: case 0x41:
	case 0x42: case 0x45: case 0x48: case 0x49: case 0x4a: case 0x4c: case 0x4d: case 0x50:
	case 0x51: case 0x52: case 0x53: case 0x54: case 0x58: case 0x5f:
		return A_SAFE; /* no code offsets (SASS.md §3.3) */
	case 0x66: case 0x6b: case 0x6d:
		/* ptxas 13.x (seen in 13.5 output, named by cuobjdump 13.x): LANGUAGE (u32, 3 = PTX),
		 * NVSAL_SW_WAR (u16 flag), PREEXIT_USED (u8 flag); scalars, no code offsets. */
		return A_SAFE;
	default:
		return A_REFUSE; /* offsets of unknown layout (0x03, 0x2e, 0x3a, 0x40, 0x44, ...) or unknown id */
	}
}

/* Sections a rewrite understands; anything else may hold code offsets. */
static bool known_section(const st_section *s)
{
	static const char *const exact[] = {"", ".shstrtab", ".strtab", ".symtab", ".debug_frame", ".debug_line",
					    ".nv_debug_line_sass", ".nv_debug_ptx_txt", ".nv.callgraph", ".nv.compat",
					    ".nv.prototype", ".nv.rel.action", ".nv.info"};
	static const char *const prefix[] = {".note.nv.", ".nv.info.", ".nv.constant", ".nv.global", ".nv.shared.",
					     ".nv.local.", ".nv.reservedSmem", ".rel.", ".rela.", ".text."};
	for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
		if (!strcmp(s->name, exact[i]))
			return true;
	for (size_t i = 0; i < sizeof prefix / sizeof prefix[0]; i++)
		if (!strncmp(s->name, prefix[i], strlen(prefix[i])))
			return true;
	return false;
}

static bool is_line_table(const char *name)
{
	return !strcmp(name, ".debug_line") || !strcmp(name, ".nv_debug_line_sass");
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* One BRX's target list from EIATTR_INDIRECT_BRANCH_TARGETS. */
typedef struct ibt {
	uint32_t brx;
	const uint8_t *targets; /* count u32s in the payload */
	uint32_t count;
} ibt;

/* One kernel's analysis in progress: the kernel's code, and the per-slot facts the passes share.
 * is_call marks CALL slots; call_done the CALLs whose return address is found; call_reloc the
 * CALLs a relocation patches; starts[0..nstarts) the sorted function entry slots; ibts the BRX
 * target lists met in .nv.info, for the jump-table search. */
typedef struct kctx {
	const uint8_t *image;
	const st_cubin_view *v;
	unsigned sm;
	size_t k;
	const st_kernel_info *ki;
	const char *kn;
	const uint8_t *code;
	size_t n, size;
	bool *is_call, *call_done, *call_reloc;
	uint32_t *starts;
	size_t nstarts;
	ibt *ibts;
	size_t nibt, ibtcap;
	st_refs *r;
} kctx;

/* Marks the analysis out of memory (overrides any refusal). */
static void oom(st_refs *r)
{
	r->status = ST_ENOMEM;
	snprintf(r->msg, sizeof r->msg, "out of memory");
}

/* Refuses every section a rewrite does not understand. */
static void scan_sections(kctx *kc)
{
	const st_cubin_view *v = kc->v;
	for (size_t i = 0; i < v->nsections; i++)
		if (!known_section(&v->sections[i]))
			refuse(kc->r, "section %s (type 0x%x) is not understood and may hold code offsets",
			       v->sections[i].name, v->sections[i].type);
}

/* Functions defined in this section: their entries stay put, their slots stay inside.
 * Adds a symbol reference per symbol of the section, fills starts and r->func_start. */
static void scan_functions(kctx *kc)
{
	const st_cubin_view *v = kc->v;
	st_refs *r = kc->r;
	uint32_t *starts = kc->starts;
	size_t n = kc->n, size = kc->size, nstarts = 0;
	for (size_t i = 1; i < v->nsymbols; i++) {
		const st_symbol *s = &v->symbols[i];
		if (s->shndx != kc->ki->section)
			continue;
		if (s->type == STT_SECTION && s->value == 0)
			continue;
		if (s->value % 16 || s->value >= size) {
			if (!(s->value == size && s->type != STT_FUNC))
				refuse(r, "symbol %s: value 0x%llx is not an instruction of .text.%s", s->name,
				       (unsigned long long)s->value, kc->kn);
			continue;
		}
		if (s->type == STT_FUNC)
			starts[nstarts++] = (uint32_t)(s->value / 16);
		st_ref_item *it = add(r, ST_REF_SYMBOL, s->name, -1, (uint32_t)s->value, ST_P_SYMVAL);
		if (it)
			it->file_off = v->sections[v->symtab].offset + i * sizeof(Elf64_Sym);
	}
	qsort(starts, nstarts, sizeof *starts, cmp_u32);
	for (size_t s = 0, f = 0; s < n; s++) {
		while (f < nstarts && starts[f] <= s)
			f++;
		r->func_start[s] = f ? starts[f - 1] : UINT32_MAX;
	}
	kc->nstarts = nstarts;
}

/* LEPC Rd, `(label) at slot s: a small forward byte offset in bits 24..31, refused when wider. */
static void scan_lepc_label(kctx *kc, size_t s, st_word w)
{
	st_refs *r = kc->r;
	uint32_t at = (uint32_t)(16 * s);
	/* Seen only as LEPC Rd, `(label) with a small forward byte offset in bits 24..31
	 * (sm_90 printf); anything wider is refused rather than guessed. */
	int64_t t = (int64_t)at + 16 + (int64_t)((w.lo >> 24) & 0xff);
	if ((w.lo >> 31) || (w.hi & 0x3ffff))
		refuse(r, "LEPC at 0x%x: offset encoding is not understood", at);
	else if (t >= (int64_t)kc->size || t % 16)
		refuse(r, "LEPC at 0x%x: target 0x%llx is not an instruction of .text.%s", at, (long long)t, kc->kn);
	else
		add(r, ST_REF_BRANCH, "LEPC", (long)s, (uint32_t)t, ST_P_LEPC);
}

/* A branch-field instruction at slot s: BRX / RET must cancel to 0 (a self reference), any
 * other must name an instruction of the kernel (a branch reference). */
static void scan_branch(kctx *kc, size_t s, st_word w, unsigned op, st_branch_field bf, const char *name)
{
	st_refs *r = kc->r;
	uint32_t at = (uint32_t)(16 * s);
	int64_t imm = st_branch_imm(w, kc->sm, bf);
	int64_t t = (int64_t)at + 16 + 4 * imm;
	if (op == OP_BRX || op == OP_RET) {
		if (t != 0)
			refuse(r, "%s at 0x%x: immediate is not self-cancelling (target 0x%llx)", name, at,
			       (long long)t);
		else {
			st_ref_item *it = add(r, ST_REF_SELF, name, (long)s, 0, ST_P_SELF);
			if (it)
				it->bf = bf;
		}
		return;
	}
	if (t < 0 || t >= (int64_t)kc->size || t % 16) {
		refuse(r, "%s at 0x%x: target 0x%llx is not an instruction of .text.%s", name, at,
		       (long long)t, kc->kn);
		return;
	}
	st_ref_item *it = add(r, ST_REF_BRANCH, name, (long)s, (uint32_t)t, ST_P_BRANCH);
	if (it)
		it->bf = bf;
}

/* Refuses any other branch-unit opcode (0x940..0x95f, 0x340..0x35f) not known to hold no offset. */
static void check_branch_unit(st_refs *r, st_word w, unsigned op, uint32_t at)
{
	unsigned low = op & 0xfff;
	if ((low >= 0x940 && low <= 0x95f) || (low >= 0x340 && low <= 0x35f)) {
		switch (op) {
		case 0x941: /* BSYNC */
		case 0x942: /* BREAK */
		case 0x94d: /* EXIT */
		case OP_CALL_ABS_REG:
		case OP_CALL_ABS_IMM:
		case OP_LEPC_REG:
			break;
		case OP_WARPSYNC_ALL:
			/* WARPSYNC.ALL: full-warp mask, no operand; refuse any set bit where a label or a
			 * mask register could be, rather than guess. */
			if (((w.lo >> 16) & 0xff) || (w.lo >> 34) || (w.hi & 0x3ffff))
				refuse(r, "WARPSYNC.ALL at 0x%x: operand bits are not understood", at);
			break;
		default:
			refuse(r, "instruction at 0x%x: branch-unit opcode 0x%x is not understood", at, op);
		}
	}
}

/* Instruction at slot s: its code offset if it holds one; marks CALLs in is_call. */
static void scan_insn(kctx *kc, size_t s)
{
	st_word w = st_word_load(kc->code + 16 * s);
	unsigned op = st_word_opcode(w);
	const char *name = NULL;
	st_branch_field bf = st_branch_kind(op, &name);
	uint32_t at = (uint32_t)(16 * s);
	if (op == OP_RET && ((w.hi >> 21) & 1))
		return; /* RET.ABS: register only */
	if (op == OP_WARPSYNC) {
		if (!((w.hi >> 22) & 1))
			return; /* WARPSYNC Rx: no label */
		bf = ST_BF_WIDE;
		name = "WARPSYNC.COLLECTIVE";
	}
	if (op == OP_CALL_ABS_REG || op == OP_CALL_ABS_IMM || op == OP_CALL_REL)
		kc->is_call[s] = true;
	if (op == OP_LEPC_LABEL) {
		scan_lepc_label(kc, s, w);
		return;
	}
	if (bf != ST_BF_NONE) {
		scan_branch(kc, s, w, op, bf, name);
		return;
	}
	check_branch_unit(kc->r, w, op, at);
}

/* Relocation i patches this kernel's code: a reference to its place, and (when its symbol is of
 * this section) one to the offset it names, a return address when that follows a CALL. */
static void reloc_in_code(kctx *kc, size_t i, const st_symbol *sym, bool sym_here, const char *tn)
{
	const st_cubin_view *v = kc->v;
	const st_reloc *x = &v->relocs[i];
	st_refs *r = kc->r;
	size_t n = kc->n, size = kc->size;
	const char *kn = kc->kn;
	uint32_t t = (uint32_t)x->offset;
	st_ref_item *it = add(r, ST_REF_RELOC, tn, (long)(t / 16), t, ST_P_ROFF);
	if (it)
		it->file_off = v->reloc_entry[i];
	if (t / 16 < n && kc->is_call[t / 16])
		kc->call_reloc[t / 16] = true;
	if (!sym_here)
		return;
	if (!x->rela) {
		refuse(r, "REL relocation %s at 0x%x of .text.%s names its own code", tn, t, kn);
		return;
	}
	int64_t c = (int64_t)sym->value + x->addend;
	if (c >= 16 && c <= (int64_t)size && c % 16 == 0 && kc->is_call[c / 16 - 1]) {
		it = add(r, ST_REF_RETURN, tn, (long)(t / 16), (uint32_t)c, ST_P_RADDEND);
		if (it) {
			it->ret = true;
			it->call_slot = (uint32_t)(c / 16 - 1);
			it->file_off = v->reloc_entry[i];
			it->symval = (int64_t)sym->value;
		}
		kc->call_done[c / 16 - 1] = true;
	} else if (c >= 0 && c < (int64_t)size && c % 16 == 0) {
		it = add(r, ST_REF_RELOC, tn, (long)(t / 16), (uint32_t)c, ST_P_RADDEND);
		if (it) {
			it->file_off = v->reloc_entry[i];
			it->symval = (int64_t)sym->value;
		}
	} else {
		refuse(r, "relocation %s at 0x%x names offset 0x%llx outside .text.%s", tn, t, (long long)c, kn);
	}
}

/* Relocation x elsewhere names this kernel's code: allowed only at a function entry (line tables
 * aside, which are dropped when code moves). */
static void reloc_to_code(kctx *kc, const st_reloc *x, const st_symbol *sym, const char *tn)
{
	const st_section *ts = &kc->v->sections[x->target];
	st_refs *r = kc->r;
	const char *kn = kc->kn;
	if (is_line_table(ts->name))
		return; /* dropped when code moves */
	int64_t c = (int64_t)sym->value + x->addend;
	bool call_target = (x->type == 58 || x->type == 75 || x->type == 114) && sym->type == STT_FUNC &&
			   (ts->flags & SHF_EXECINSTR);
	if (!x->rela && call_target) {
		c = (int64_t)sym->value; /* a CALL.ABS to a function entry (its field holds 0) */
	} else if (!x->rela) { /* R_CUDA_64 keeps its addend in the patched data */
		if (x->type != 2 || ts->type == SHT_NOBITS || x->offset > ts->size || ts->size - x->offset < 8) {
			refuse(r, "REL relocation %s in %s against .text.%s is not understood", tn, ts->name, kn);
			return;
		}
		c = (int64_t)sym->value + (int64_t)st_le64(kc->image + ts->offset + x->offset);
	}
	bool start = c == 0;
	for (size_t f = 0; f < kc->nstarts && !start; f++)
		start = (int64_t)kc->starts[f] * 16 == c;
	if (!start)
		refuse(r, "relocation %s in %s names offset 0x%llx of .text.%s, which is not a function entry",
		       tn, ts->name, (long long)c, kn);
}

/* Relocations naming this kernel's code. */
static void scan_relocs(kctx *kc)
{
	const st_cubin_view *v = kc->v;
	for (size_t i = 0; i < v->nrelocs; i++) {
		const st_reloc *x = &v->relocs[i];
		const st_symbol *sym = &v->symbols[x->symbol];
		bool sym_here = x->symbol && sym->shndx == kc->ki->section;
		const char *tn = x->type_name ? x->type_name : "relocation";
		if (x->target == kc->ki->section)
			reloc_in_code(kc, i, sym, sym_here, tn);
		else if (sym_here)
			reloc_to_code(kc, x, sym, tn);
	}
}

/* LEPC label as a return address: an LEPC reference naming the slot after a CALL. */
static void lepc_returns(kctx *kc)
{
	st_refs *r = kc->r;
	for (size_t i = 0; i < r->n; i++) {
		st_ref_item *it = &r->items[i];
		if (it->how == ST_P_LEPC && it->pub.target >= 16 && kc->is_call[it->pub.target / 16 - 1]) {
			it->ret = true;
			it->call_slot = it->pub.target / 16 - 1;
			it->pub.kind = ST_REF_RETURN;
			kc->call_done[it->call_slot] = true;
		}
	}
}

/* Return-address literals: MOV Rx, <offset after the CALL> shortly before each CALL whose return
 * address no relocation or LEPC gave; refuses a CALL without one, or a CALL.ABS without relocation. */
static void find_return_literals(kctx *kc)
{
	st_refs *r = kc->r;
	const uint8_t *code = kc->code;
	bool *is_call = kc->is_call, *call_done = kc->call_done;
	for (size_t s = 0; s < kc->n; s++) {
		if (!is_call[s])
			continue;
		st_word cw = st_word_load(code + 16 * s);
		if (st_word_opcode(cw) == OP_CALL_ABS_IMM && !kc->call_reloc[s])
			refuse(r, "CALL.ABS at 0x%zx has no relocation", 16 * s);
		if (call_done[s])
			continue;
		uint32_t ret = (uint32_t)(16 * (s + 1));
		size_t lo = s > RET_BACK_WINDOW ? s - RET_BACK_WINDOW : 0;
		if (r->func_start[s] != UINT32_MAX && r->func_start[s] > lo)
			lo = r->func_start[s];
		for (size_t m = s; m-- > lo;) {
			if (is_call[m])
				break;
			st_word w = st_word_load(code + 16 * m);
			if (st_word_opcode(w) == OP_MOV && (uint32_t)(w.lo >> 32) == ret) {
				st_ref_item *it = add(r, ST_REF_RETURN, "MOV", (long)m, ret, ST_P_MOVLIT);
				if (it) {
					it->ret = true;
					it->call_slot = (uint32_t)s;
				}
				call_done[s] = true;
				break;
			}
		}
		if (!call_done[s])
			refuse(r, "CALL at 0x%zx: its return-address literal (0x%x) was not found", 16 * s, ret);
	}
}

/* LEPC Rx (no label) is followed by MOV Ry, <offset of the LEPC>: PC-relative arithmetic. */
static void find_lepc_literals(kctx *kc)
{
	size_t n = kc->n;
	for (size_t s = 0; s < n; s++) {
		st_word w0 = st_word_load(kc->code + 16 * s);
		if (st_word_opcode(w0) != OP_LEPC_REG)
			continue;
		bool found = false;
		for (size_t m = s + 1; m < n && m <= s + LEPC_FWD_WINDOW && !kc->is_call[m]; m++) {
			st_word w = st_word_load(kc->code + 16 * m);
			if (st_word_opcode(w) == OP_MOV && (uint32_t)(w.lo >> 32) == 16 * s) {
				add(kc->r, ST_REF_LITERAL, "MOV", (long)m, (uint32_t)(16 * s), ST_P_MOVLIT);
				found = true;
				break;
			}
		}
		if (!found)
			refuse(kc->r, "LEPC at 0x%zx: the literal of its own offset was not found", 16 * s);
	}
}

/* The EIATTR_INDIRECT_BRANCH_TARGETS record at word w (BRX offset t, count, targets): a reference
 * per target, its list kept in ibts; *step = its length in words.  Returns 0 to go on, 1 after a
 * refusal (the attribute's scan stops), -1 out of memory. */
static int scan_ibt_record(kctx *kc, const st_nvinfo *a, const char *an, size_t base, size_t w, size_t words,
			   uint32_t t, size_t *step)
{
	st_refs *r = kc->r;
	const char *kn = kc->kn;
	size_t size = kc->size;
	if (words - w < 3 || st_le32(a->payload + 4 * (w + 2)) > words - w - 3) {
		refuse(r, "attribute %s in .nv.info.%s: malformed record at word %zu", an, kn, w);
		return 1;
	}
	uint32_t cnt = st_le32(a->payload + 4 * (w + 2));
	*step = 3 + cnt;
	if (t % 16 || t >= size || st_word_opcode(st_word_load(kc->code + t)) != OP_BRX) {
		refuse(r, "attribute %s in .nv.info.%s: 0x%x is not a BRX of the kernel", an, kn, t);
		return 1;
	}
	for (uint32_t j = 0; j < cnt; j++) {
		uint32_t tj = st_le32(a->payload + 4 * (w + 3 + j));
		if (tj % 16 || tj >= size)
			refuse(r, "attribute %s in .nv.info.%s: target 0x%x is not an instruction", an, kn, tj);
		st_ref_item *it = add(r, ST_REF_ATTR, a->name, -1, tj, ST_P_U32);
		if (it)
			it->file_off = base + 4 * (w + 3 + j);
	}
	if (kc->nibt == kc->ibtcap) {
		kc->ibtcap = kc->ibtcap ? 2 * kc->ibtcap : 4;
		ibt *p = realloc(kc->ibts, kc->ibtcap * sizeof *p);
		if (!p) {
			oom(r);
			return -1;
		}
		kc->ibts = p;
	}
	kc->ibts[kc->nibt++] = (ibt){t, a->payload + 4 * (w + 3), cnt};
	return 0;
}

/* The u32 code offsets of one offset-holding record (A_LIST, A_MBAR: every 4th word, A_IBT)
 * whose payload starts at file offset base; false when out of memory. */
static bool scan_record_words(kctx *kc, const st_nvinfo *a, attr_class cls, const char *an, size_t base,
			      size_t words)
{
	st_refs *r = kc->r;
	for (size_t w = 0; w < words;) {
		size_t step = 1;
		uint32_t t = st_le32(a->payload + 4 * w);
		if (cls == A_IBT) {
			int rc = scan_ibt_record(kc, a, an, base, w, words, t, &step);
			if (rc < 0)
				return false;
			if (rc > 0)
				break;
		} else if (cls == A_MBAR) {
			step = 4;
		} else if (cls == A_PAIRS) { /* (kind, offset): only kind 1 is understood */
			if (t != 1) {
				refuse(r, "attribute %s in .nv.info.%s: annotation kind %u is not understood", an, kc->kn, t);
				break;
			}
			t = st_le32(a->payload + 4 * ++w);
			step = 1;
		}
		if (t % 16 || t >= kc->size) {
			refuse(r, "attribute %s in .nv.info.%s: entry 0x%x is not an instruction of .text.%s", an,
			       kc->kn, t, kc->kn);
			break;
		}
		st_ref_item *it = add(r, ST_REF_ATTR, a->name, -1, t, ST_P_U32);
		if (it)
			it->file_off = base + 4 * w;
		w += step;
	}
	return true;
}

/* One .nv.info record: refused when it may hold code offsets not understood, scanned when it is
 * this kernel's offset list; false when out of memory. */
static bool scan_record(kctx *kc, const st_nvinfo *a)
{
	st_refs *r = kc->r;
	const char *kn = kc->kn;
	attr_class cls = classify(a->attr);
	char idbuf[32];
	const char *an = a->name;
	if (!an) {
		snprintf(idbuf, sizeof idbuf, "0x%02x", a->attr);
		an = idbuf;
	}
	if (a->kernel == ST_CUBIN_NONE) {
		if (cls != A_SAFE)
			refuse(r, "attribute %s in .nv.info is not understood and may hold code offsets", an);
		return true;
	}
	if (a->kernel != kc->k)
		return true;
	if (cls == A_SAFE)
		return true;
	if (cls == A_REFUSE) {
		refuse(r, "attribute %s in .nv.info.%s is not understood and may hold code offsets", an, kn);
		return true;
	}
	size_t base = kc->v->sections[a->section].offset + a->offset + 4;
	if (a->format != 4 || a->size % 4) {
		refuse(r, "attribute %s in .nv.info.%s: unexpected format %u / size %zu", an, kn, a->format, a->size);
		return true;
	}
	size_t words = a->size / 4;
	if (cls == A_PAIRS && words % 2) {
		refuse(r, "attribute %s in .nv.info.%s: size %zu is not a multiple of 8", an, kn, a->size);
		return true;
	}
	if (cls == A_MBAR && words % 4) {
		refuse(r, "attribute %s in .nv.info.%s: size %zu is not a multiple of 16", an, kn, a->size);
		return true;
	}
	return scan_record_words(kc, a, cls, an, base, words);
}

/* Jump tables: the u32 runs of .nv.constant2.<kernel> equal to each BRX's target list, each run
 * claimed once; refuses a list without its run, or a bank with relocations. */
static void find_jump_tables(kctx *kc)
{
	const st_cubin_view *v = kc->v;
	st_refs *r = kc->r;
	const st_const_bank *bank = NULL;
	for (size_t i = 0; i < v->nconsts; i++)
		if (v->consts[i].bank == 2 && v->consts[i].kernel == kc->k && v->consts[i].data)
			bank = &v->consts[i];
	for (size_t i = 0; bank && i < v->nrelocs; i++)
		if (v->relocs[i].target == bank->section)
			refuse(r, "%s has relocations", bank->section_name);
	size_t words = bank ? bank->size / 4 : 0;
	bool *claimed = calloc(words ? words : 1, sizeof *claimed);
	if (!claimed) {
		oom(r);
		return;
	}
	for (size_t b = 0; b < kc->nibt; b++) {
		const ibt *t = &kc->ibts[b];
		bool found = false;
		for (size_t w = 0; t->count && w + t->count <= words && !found; w++) {
			if (claimed[w] || memcmp(bank->data + 4 * w, t->targets, 4 * (size_t)t->count))
				continue;
			found = true;
			for (uint32_t j = 0; j < t->count; j++) {
				claimed[w + j] = true;
				st_ref_item *it = add(r, ST_REF_JUMP_TABLE, bank->section_name, -1,
						      st_le32(bank->data + 4 * (w + j)), ST_P_U32);
				if (it)
					it->file_off = v->sections[bank->section].offset + 4 * (w + j);
			}
		}
		if (!found && t->count)
			refuse(r, "jump table of BRX at 0x%x (%u targets) not found in .nv.constant2.%s", t->brx,
			       t->count, kc->kn);
	}
	free(claimed);
}

/* Every code reference of kernel k, in a fixed order (symbols, instructions, relocations, return
 * and LEPC literals, .nv.info, jump tables), and the first refusal; out of memory stops it. */
static void analyse(const uint8_t *image, const st_cubin_view *v, unsigned sm, size_t k, st_refs *r)
{
	const st_kernel_info *ki = &v->kernels[k];
	kctx kc = {.image = image, .v = v, .sm = sm, .k = k, .ki = ki, .kn = ki->name,
		   .code = image + ki->file_offset, .n = ki->insn_count, .size = ki->size, .r = r};
	size_t n = kc.n;
	kc.is_call = calloc(n ? n : 1, sizeof *kc.is_call);
	kc.call_done = calloc(n ? n : 1, sizeof *kc.call_done);
	kc.call_reloc = calloc(n ? n : 1, sizeof *kc.call_reloc);
	kc.starts = calloc(v->nsymbols + 1, sizeof *kc.starts);
	r->func_start = malloc((n ? n : 1) * sizeof *r->func_start);
	if (!kc.is_call || !kc.call_done || !kc.call_reloc || !kc.starts || !r->func_start) {
		oom(r);
		goto out;
	}
	scan_sections(&kc);
	scan_functions(&kc);
	for (size_t s = 0; s < n; s++)
		scan_insn(&kc, s);
	scan_relocs(&kc);
	lepc_returns(&kc);
	find_return_literals(&kc);
	find_lepc_literals(&kc);
	for (size_t i = 0; i < v->nnvinfo; i++)
		if (!scan_record(&kc, &v->nvinfo[i]))
			goto out;
	if (kc.nibt)
		find_jump_tables(&kc);
out:
	free(kc.is_call);
	free(kc.call_done);
	free(kc.call_reloc);
	free(kc.starts);
	free(kc.ibts);
}

const st_refs *st_refs_get(const uint8_t *image, st_cubin_view *v, unsigned sm, size_t k)
{
	st_refs *r = &v->refs[k];
	if (!r->done) {
		analyse(image, v, sm, k, r);
		r->done = true;
	}
	return r;
}

size_t st_cubin_ref_count(const st_cubin *c, size_t k)
{
	if (k >= c->v.nkernels)
		return 0;
	return st_refs_get(c->image, (st_cubin_view *)&c->v, c->sm, k)->n;
}

const st_code_ref *st_cubin_ref(const st_cubin *c, size_t k, size_t i)
{
	if (k >= c->v.nkernels)
		return NULL;
	const st_refs *r = st_refs_get(c->image, (st_cubin_view *)&c->v, c->sm, k);
	return i < r->n ? &r->items[i].pub : NULL;
}

st_status st_cubin_check_rewritable(const st_cubin *c, size_t k, st_error *err)
{
	if (k >= c->v.nkernels)
		return st_error_set(err, ST_EINVAL, "%s: kernel index %zu out of range", c->name, k);
	const st_refs *r = st_refs_get(c->image, (st_cubin_view *)&c->v, c->sm, k);
	if (r->status)
		return st_error_set(err, r->status, "%s: .text.%s: %s", c->name, c->v.kernels[k].name, r->msg);
	return ST_OK;
}
