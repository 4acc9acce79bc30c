/* sasstune rewrite CUBIN --schedule S.json -o OUT: apply a schedule (permutations, adjacent swaps and
 * control edits, or pipe rotations per kernel), patching every code offset, and write the result. */
#include "cli.h"
#include "sasstune/cubin.h"
#include "sasstune/sched.h"
#include "sasstune/schedule.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
	fprintf(out, "usage: sasstune rewrite CUBIN --schedule S.json -o OUT [--listing F] [--unchecked]\n\n"
		     "Apply a schedule to a cubin and write the result to OUT.  The schedule moves the\n"
		     "instruction slots of named kernels (a permutation, or adjacent swaps applied in\n"
		     "order); every branch, call, jump table, .nv.info offset, relocation and symbol\n"
		     "that names a moved instruction is patched so that it names the same instruction.\n"
		     "Kernels with something sasstune does not understand are refused, not guessed at.\n"
		     "An empty schedule gives a byte-identical copy.  Each move is checked by the legality\n"
		     "model (docs/sched.md) and applied with its control-code fix-ups; an illegal move is\n"
		     "refused with the dependence it breaks.  Moves are checked at the wide setting (any\n"
		     "non-fixed instruction may move, as `tune --wide`), so a schedule may swap what\n"
		     "`sasstune moves` (default setting: memory instructions) does not list; `moves --wide`\n"
		     "lists them all.  A permutation is judged as a whole by the independent checker\n"
		     "(sasstune check).  Pipe rotations and prefetches are made and applied as `sasstune\n"
		     "pipe [--form 2] -o` does (rules P1-P10, Q1-Q12, docs/pipeline.md), then judged by the\n"
		     "independent checker (with --unchecked: the rules only).  Printed per kernel: the swaps\n"
		     "and control edits applied, and how many slots hold another instruction than before; or\n"
		     "the rotations or prefetches applied.\n\n"
		     "schedule (docs/cubin.md):\n"
		     "  {\"sasstune_schedule\": 1, \"kernels\": {\"KERNEL\": {\"swaps\": [i, ...]}}}\n"
		     "  {\"sasstune_schedule\": 1, \"kernels\": {\"KERNEL\": {\"permutation\": [old slot for new slot 0, ...]}}}\n"
		     "  {\"sasstune_schedule\": 1, \"kernels\": {\"KERNEL\": {\"moves\": [i, {\"slot\": i, \"stall\": s, \"yield\": y,\n"
		     "     \"wbar\": w, \"rbar\": r, \"wait\": m, \"reuse\": u}, ...]}}}   swaps and control edits (docs/sched.md)\n"
		     "  {\"sasstune_schedule\": 1, \"kernels\": {\"KERNEL\": {\"pipe\": [{\"loop\": OFF, \"loads\": [OFF, ...]}]}}}\n"
		     "     family 3 form 1 rotations, as `sasstune pipe --json` lists them (docs/cubin.md); with\n"
		     "     \"form\": 2, \"regs\": N in an entry, form 2 prefetches using up to N registers\n\n"
		     "options:\n"
		     "  --schedule S.json   the moves to apply\n"
		     "  -o OUT              where to write the rewritten cubin (written atomically)\n"
		     "  --listing F         the cubin's `nvdisasm -hex -c` listing (default: run nvdisasm)\n"
		     "  --unchecked         apply the moves as written, without the legality model (for tests;\n"
		     "                      pipe rewrites still pass their rules, not the checker)\n"
		     "  -h, --help\n\n"
		     "exit status: 0 written, 1 bad input or refused, 2 usage error\n");
}

/* The legality model's rewrite (plugin/sched): replaces *c with the rewritten cubin. */
static st_status rewrite_checked(st_cubin **c, const st_schedule *s, const char *listing, st_error *err)
{
	st_sass_opts o = {0};
	o.listing = listing;
	st_cubin *out = NULL;
	st_status rc = st_sched_rewrite(*c, s, &o, &out, err);
	if (!rc) {
		st_cubin_free(*c);
		*c = out;
	}
	return rc;
}

/* "K: 1 rotation applied (loop 0x150: 2 loads 0x200,0x230) (checked by the pipe rules and the
 * independent checker)"; form 2: "K: 1 prefetch applied (loop 0x150: 2 loads 0x1d0,0x200, up to 64
 * registers) (...)" (st_pipe_apply refuses a kernel that mixes the forms before this prints). */
static void pipe_summary(const st_schedule *s, size_t i, int unchecked)
{
	size_t np = st_schedule_pipe_count(s, i);
	unsigned form = 1, regs = 0;
	st_schedule_pipe_form(s, i, 0, &form, &regs);
	printf("%s: %zu %s applied (", st_schedule_kernel_name(s, i), np,
	       form == 2 ? (np == 1 ? "prefetch" : "prefetches") : (np == 1 ? "rotation" : "rotations"));
	for (size_t j = 0; j < np; j++) {
		uint32_t h, loads[8];
		size_t n = 0;
		st_schedule_pipe_at(s, i, j, &h, loads, &n);
		st_schedule_pipe_form(s, i, j, &form, &regs);
		printf("%sloop 0x%x: %zu load%s ", j ? "; " : "", h, n, n == 1 ? "" : "s");
		for (size_t m = 0; m < n; m++)
			printf("%s0x%x", m ? "," : "", loads[m]);
		if (form == 2 && regs)
			printf(", up to %u registers", regs);
		else if (form == 2)
			printf(", at the kernel's register count");
	}
	printf(") (%s)\n", unchecked ? "checked by the pipe rules only: --unchecked skips the independent checker"
				      : "checked by the pipe rules and the independent checker");
}

/* "K: 2 swaps and 1 control edit applied (checked at the wide setting); 2 of 56 slots moved" */
static void summary(const st_schedule *s, size_t i, const st_cubin *c, int unchecked)
{
	if (st_schedule_pipe_count(s, i)) {
		pipe_summary(s, i, unchecked);
		return;
	}
	const char *name = st_schedule_kernel_name(s, i);
	const st_kernel_info *k = st_cubin_kernel(c, st_cubin_find_kernel(c, name));
	uint32_t *perm = malloc((k->insn_count ? k->insn_count : 1) * sizeof *perm);
	size_t moved = 0, swaps = 0, edits = 0;
	st_error err = {0};
	if (perm && !st_schedule_permutation(s, i, k->insn_count, perm, &err))
		for (size_t j = 0; j < k->insn_count; j++)
			moved += perm[j] != j;
	free(perm);
	const char *how = unchecked ? "unchecked" : "checked at the wide setting";
	if (st_schedule_is_permutation(s, i)) {
		printf("%s: a permutation applied (%s); %zu of %zu slots moved\n", name,
		       unchecked ? "unchecked" : "judged by the checker", moved, k->insn_count);
		return;
	}
	for (size_t j = 0; j < st_schedule_move_count(s, i); j++) {
		if (st_schedule_move_at(s, i, j).is_ctrl) /* control, rename and register-field edits */
			edits++;
		else
			swaps++;
	}
	printf("%s: %zu swap%s and %zu control edit%s applied (%s); %zu of %zu slots moved\n", name, swaps,
	       swaps == 1 ? "" : "s", edits, edits == 1 ? "" : "s", how, moved, k->insn_count);
}

int st_cmd_rewrite(int argc, char **argv)
{
	const char *path = NULL, *sched_path = NULL, *out_path = NULL, *listing = NULL;
	int unchecked = 0;
	const st_cli_opt opts[] = {
		ST_OPT_STR("--schedule", &sched_path), ST_OPT_STR("-o", &out_path),
		ST_OPT_FLAG("--unchecked", &unchecked), ST_OPT_STR("--listing", &listing), ST_OPT_END,
	};
	const st_cli_need need[] = {{&path, "CUBIN"}, {&sched_path, "--schedule S.json"}, {&out_path, "-o OUT"}, {0}};
	int code = st_cli_parse(argc, argv, &(st_cli_args){.usage = usage, .opts = opts, .file = &path, .need = need});
	if (code >= 0)
		return code;
	st_error err = {0};
	st_schedule *s = NULL;
	st_cubin *c = NULL;
	int rc = ST_EXIT_OK;
	if (st_schedule_load(sched_path, &s, &err) || st_cubin_open_file(path, &c, &err) ||
	    (unchecked ? st_schedule_apply(s, c, &err) : rewrite_checked(&c, s, listing, &err)) ||
	    st_cubin_write_file(c, out_path, &err)) {
		rc = st_cli_fail(argv[0], &err);
	} else {
		for (size_t i = 0; i < st_schedule_kernel_count(s); i++)
			summary(s, i, c, unchecked);
		printf("wrote %s\n", out_path);
	}
	st_cubin_free(c);
	st_schedule_free(s);
	return rc;
}
