/* The rename family's state (rename.c), shared with its register-count raise and target choice
 * (rename_regs.c).  Internal to plugin/sched. */
#ifndef ST_RENAME_INTERNAL_H
#define ST_RENAME_INTERNAL_H
#include "sched_internal.h"

typedef struct rn_chg { uint32_t idx; uint16_t reg; uint8_t def; uint8_t old; } rn_chg; /* reg: operand */
typedef struct rn_ctl { uint32_t idx; st_ctrl old; } rn_ctl;
typedef struct rn_rec { size_t chg, ctl; } rn_rec; /* where the record's changes begin */

struct sc_rename {
	st_sass_insn *in;       /* the state's instructions (m.in) */
	st_sass_reg *regs;      /* their operands */
	uint8_t (*word)[16];    /* current words (register fields patched), per original index */
	uint64_t (*live)[4];    /* per block: R registers live at its end (original kernel) */
	uint32_t uses[256];     /* operands naming each R register now */
	uint8_t orig[256];      /* named by the original kernel */
	unsigned rmax;          /* highest R register the original names, plus one */
	bool ok;                /* the kernel allows renaming at all (N1) */
	/* register count (rename_regs.c): the kernel's (EIATTR_REGCOUNT; 0 unknown), the registers it
	 * counts above rmax (kept above every target: reserve), the highest count a raise may reach
	 * (count: none), the register banks the target choice avoids (0: the lowest free), and the
	 * most the cubin accepts (EIATTR_MAXREG_COUNT: a spilling kernel's ptxas cap; 255 without) */
	unsigned count, reserve, limit, banks, ceiling;
	rn_chg *chg;
	rn_ctl *ctl;
	rn_rec *rec;
	size_t nchg, nctl, nrec, capchg, capctl, caprec;
};

/* rename_regs.c: the count, reserve, limit and banks of a fresh state (c may be NULL: count
 * unknown, no raise); whether R`v` may be a target now (N3); the lowest register no target
 * reaches (for messages). */
void rn_count_prepare(sc_rename *r, const st_sass_kernel *k, const st_cubin *c);
bool rn_target_ok(const sc_rename *r, unsigned v);
unsigned rn_top(const sc_rename *r);
/* rename.c: the live range of the R def at `slot` (N2, N4, N5): its register, the slot of the
 * redefinition that ends it or its block's last slot + 1. */
st_status rn_live_range(const st_sched *s, uint32_t slot, unsigned *reg, uint32_t *end, st_error *err);
#endif
