/* The pipe checker's own liveness (docs/sched.md "Checker: pipe"): is a register unit read on some
 * path from a block's entry before an unpredicated write?  Conservative: a block ending in anything
 * but BRA / EXIT, or without successors and not ending in EXIT, reads everything. */
#include "check_pipe.h"

#include <stdlib.h>
#include <string.h>

static bool has(const st_sass_reg *r, unsigned n, unsigned file, unsigned idx)
{
	for (unsigned i = 0; i < n; i++)
		if (r[i].file == file && idx >= r[i].index && idx < (unsigned)r[i].index + r[i].count)
			return true;
	return false;
}

/* -1: read first; 1: written first (unpredicated); 0: neither, the path goes on. */
static int scan_block(const cp *p, size_t b, unsigned f, unsigned i, uint32_t *at)
{
	for (uint32_t q = p->bfirst[b]; q < p->bfirst[b] + p->bcount[b]; q++) {
		const st_sass_insn *x = &p->in[q];
		if (has(x->uses, x->nuses, f, i)) {
			*at = q;
			return -1;
		}
		if (x->guard < 0 && has(x->defs, x->ndefs, f, i))
			return 1;
	}
	return 0;
}

static bool opaque_end(const cp *p, size_t b)
{
	const st_sass_insn *x = &p->in[p->bfirst[b] + p->bcount[b] - 1];
	bool exit = !strncmp(x->opcode, "EXIT", 4);
	if (x->flags & ST_F_BRANCH)
		return !(exit || (!strncmp(x->opcode, "BRA", 3) && (x->opcode[3] == 0 || x->opcode[3] == '.') && x->target >= 0));
	return p->bsucc[b][0] < 0 && p->bsucc[b][1] < 0;
}

bool cp_live_into(const cp *p, size_t b0, unsigned f, unsigned i, uint32_t *at)
{
	*at = CP_NONE;
	uint8_t *seen = calloc(p->nb ? p->nb : 1, 1);
	size_t *stack = malloc((p->nb + 1) * sizeof *stack), ns = 0;
	bool live = false;
	if (!seen || !stack) {
		free(seen), free(stack);
		return true;
	}
	stack[ns++] = b0, seen[b0] = 1;
	while (ns && !live) {
		size_t b = stack[--ns];
		int r = scan_block(p, b, f, i, at);
		if (r < 0 || (r == 0 && opaque_end(p, b))) {
			if (r == 0)
				*at = p->bfirst[b] + p->bcount[b] - 1;
			live = true;
			break;
		}
		if (r > 0)
			continue;
		for (int s = 0; s < 2; s++) {
			int32_t nx = p->bsucc[b][s];
			if (nx >= 0 && (size_t)nx < p->nb && !seen[nx])
				seen[nx] = 1, stack[ns++] = (size_t)nx;
		}
	}
	free(seen), free(stack);
	return live;
}
