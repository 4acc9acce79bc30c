/* sasstune moves CUBIN: the legal moves of each kernel in its original state, with counts. */
#include "cli.h"
#include "cli_regs.h"
#include "sasstune/cubin.h"
#include "sasstune/sched.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
	fprintf(out,
		"usage: sasstune moves CUBIN [--listing F] [--kernel K] [--wide] [--no-ctrl] [--families L] [--why]\n"
		"                      [--json] [--threads N] [--shared B] [--allow-occupancy-drop]\n\n"
		"List the moves the legality model allows in each kernel's original state (docs/sched.md):\n"
		"swaps of adjacent instructions in a block, and control-code edits (lower a stall by one, flip\n"
		"a yield bit, set a reuse flag).  By default a swap must involve a global or shared load or\n"
		"store or an async copy (the prototype's set); --wide lets any instruction that is not a fixed\n"
		"point (control flow, barrier, fence, block entry) move.  With the hoist family, one move also\n"
		"carries an instruction 2, 4, 8 or as far as legal (up to 16) slots up (hoist) or down (sink)\n"
		"in its block: the chain of adjacent swaps, each legal in turn; a global/shared/constant load\n"
		"also moves by 2, 4, 8 or far together with the address arithmetic that feeds only it (group\n"
		"hoist/sink, up to 4 producers, relative order kept).  With the wait family, a wait\n"
		"on a scoreboard moves later, to the first instruction of the block that may need it.  With the\n"
		"sb family, a variable-latency producer's write or read scoreboard becomes the lowest one idle\n"
		"near it, waited on where its old one was first waited on after it.  With the xblock family, an\n"
		"ALU instruction moves to the end of the block that falls through into its own (loop-invariant\n"
		"code out of a loop).  With the rename family, the live range of a register defined and read\n"
		"inside one block moves to a register the kernel never names (breaking false WAR/WAW\n"
		"dependences); with --threads it may take registers above the kernel's count, raising the count\n"
		"while the resident blocks per SM stay (occupancy before and after is reported).\n\n"
		"options:\n"
		"  --listing F   the cubin's `nvdisasm -hex -c` listing (default: run nvdisasm)\n"
		"  --kernel K    only kernel K (default: every kernel)\n"
		"  --wide        the wide setting\n"
		"  --no-ctrl     swaps only\n"
		"  --families L  move families, a comma list of swap (required), ctrl, hoist, wait, sb, rename,\n"
		"                xblock, pipe (default swap,ctrl; --no-ctrl is swap alone; pipe's rotations\n"
		"                are no moves: `sasstune pipe` lists them)\n"
		"  --why         also list every refused swap with the dependence it would break, and (hoist\n"
		"                family) where each instruction's (and each load group's) hoist and sink chains\n"
		"                stop and why, (wait family) why each wait cannot move, (sb family) why each\n"
		"                scoreboard cannot be re-assigned, (rename family) why each R def cannot be\n"
		"                renamed, and (xblock family) why each candidate cannot move now\n"
		"  --json        {\"kernels\": [{kernel, instructions, blocks, setting, families, counts: {swap,\n"
		"                stall, yield, reuse, [hoist, hoist_group, wait, sb, rename, xblock,] total},\n"
		"                moves: [{kind, slot, offset, text}], refused: [...], occupancy}]}\n"
		ST_CLI_REGS_HELP
		"  -h, --help\n\n"
		"exit status: 0 listed, 1 the cubin or listing cannot be read, 2 usage error\n");
}

static const char *kind_name(unsigned k)
{
	static const char *const n[] = {"swap", "stall", "yield", "reuse", "ctrl", "hoist", "wait", "sb", "rename", "xblock"};
	return k < 10 ? n[k] : "?";
}

/* One refusal: a string of rj (--json), else a "  refused:" line. */
static void refused(cJSON *rj, const char *msg)
{
	if (rj)
		cJSON_AddItemToArray(rj, cJSON_CreateString(msg));
	else
		printf("  refused: %s\n", msg);
}

/* Every refused adjacent swap, with the dependence it would break. */
static void why_swap(const st_sched *s, cJSON *rj)
{
	for (size_t j = 0; j + 1 < st_sched_count(s); j++) {
		st_move mv = {ST_MOVE_SWAP, 0, (uint32_t)j, {0}};
		st_error e2 = {0};
		if (st_sched_check(s, mv, &e2))
			refused(rj, e2.msg);
	}
}

/* Hoist family: where each instruction's hoist and sink chains stop. */
static void why_hoist(const st_sched *s, cJSON *rj)
{
	for (size_t j = 0; j < st_sched_count(s); j++)
		for (unsigned a = 0; a < 16; a += 4) {
			/* the longest variant refused: names the swap that stops the chain (a >= 8:
			 * the group form, only for a load that has a group) */
			st_move mv = {ST_MOVE_HOIST, (uint8_t)(a + 3), (uint32_t)j, {0}};
			st_error e2 = {0};
			if (!st_sched_check(s, mv, &e2) || strstr(e2.msg, ": 0 swaps") || strstr(e2.msg, ": not a global"))
				continue;
			refused(rj, e2.msg);
		}
}

/* Wait family: why each wait on a scoreboard cannot move. */
static void why_wait(const st_sched *s, cJSON *rj)
{
	for (size_t j = 0; j < st_sched_count(s); j++)
		for (uint8_t b = 0; b < 6; b++) {
			st_move mv = {ST_MOVE_WAIT, b, (uint32_t)j, {0}};
			st_error e2 = {0};
			if ((st_sched_ctrl(s, j).wait >> b & 1) && st_sched_check(s, mv, &e2))
				refused(rj, e2.msg);
		}
}

/* Sb family: a producer's scoreboard that no free one can replace (the first refusal's reason). */
static void why_sb(const st_sched *s, cJSON *rj)
{
	for (size_t j = 0; j < st_sched_count(s); j++)
		for (uint8_t rd = 0; rd < 2; rd++) {
			st_ctrl cj = st_sched_ctrl(s, j);
			unsigned old = rd ? cj.rbar : cj.wbar;
			st_error e2 = {0}, e3 = {0};
			int legal = old > 5, refusals = 0;
			for (uint8_t to = 0; to < 6 && !legal; to++) {
				st_move mv = {ST_MOVE_SB, (uint8_t)(8 * rd + to), (uint32_t)j, {0}};
				if (to != old && !(legal = !st_sched_check(s, mv, refusals ? &e3 : &e2)))
					refusals = 1;
			}
			if (!legal && refusals)
				refused(rj, e2.msg);
		}
}

/* Xblock family: every candidate of the static rules whose move is refused now. */
static void why_xblock(const st_sched *s, cJSON *rj)
{
	for (size_t j = 0; j < st_sched_count(s); j++) {
		st_move mv = {ST_MOVE_XBLOCK, 0, (uint32_t)j, {0}};
		st_error e2 = {0};
		if (st_sched_check(s, mv, &e2) && !strstr(e2.msg, "not a candidate"))
			refused(rj, e2.msg);
	}
}

/* Rename family: every R def that cannot be renamed (to the lowest free register; its reason). */
static void why_rename(const st_sched *s, cJSON *rj)
{
	size_t nm = st_sched_move_count(s);
	for (size_t j = 0; j < st_sched_count(s); j++) {
		st_move mv = {ST_MOVE_RENAME, 0, (uint32_t)j, {0}};
		st_error e2 = {0};
		for (size_t i = 0; i < nm && !mv.arg; i++)
			if (st_sched_move(s, i).kind == ST_MOVE_RENAME)
				mv.arg = st_sched_move(s, i).arg;
		if (st_sched_check(s, mv, &e2) && !strstr(e2.msg, "not an unpredicated"))
			refused(rj, e2.msg);
	}
}

/* --why: the refusals of every family in flags, in this order. */
static void why_all(const st_sched *s, unsigned flags, cJSON *rj)
{
	why_swap(s, rj);
	if (flags & ST_SCHED_HOIST)
		why_hoist(s, rj);
	if (flags & ST_SCHED_WAIT)
		why_wait(s, rj);
	if (flags & ST_SCHED_SB)
		why_sb(s, rj);
	if (flags & ST_SCHED_XBLOCK)
		why_xblock(s, rj);
	if (flags & ST_SCHED_RENAME)
		why_rename(s, rj);
}

/* The legal moves by kind (counts[kind]) and how many hoists are group hoists. */
typedef struct counts {
	size_t total, kind[16], groups;
} counts;

static counts count_moves(const st_sched *s)
{
	counts n = {.total = st_sched_move_count(s)};
	for (size_t i = 0; i < n.total; i++) {
		st_move mv = st_sched_move(s, i);
		n.kind[mv.kind & 15]++;
		n.groups += mv.kind == ST_MOVE_HOIST && mv.arg >= 8;
	}
	return n;
}

/* The families beyond swap and ctrl whose counts are listed, in their order. */
static const struct {
	unsigned flag, kind;
} extra[] = {{ST_SCHED_WAIT, ST_MOVE_WAIT},
	     {ST_SCHED_SB, ST_MOVE_SB},
	     {ST_SCHED_RENAME, ST_MOVE_RENAME},
	     {ST_SCHED_XBLOCK, ST_MOVE_XBLOCK}};

/* The kernel's object, appended to arr: kernel, instructions, blocks, setting, families, counts. */
static cJSON *summary_json(cJSON *arr, const char *name, const st_sass_kernel *sk, const st_sched *s, unsigned flags,
			   const counts *n)
{
	cJSON *kj = cJSON_CreateObject();
	cJSON_AddItemToArray(arr, kj);
	cJSON_AddStringToObject(kj, "kernel", name);
	cJSON_AddNumberToObject(kj, "instructions", (double)st_sched_count(s));
	cJSON_AddNumberToObject(kj, "blocks", (double)st_sass_block_count(sk));
	cJSON_AddStringToObject(kj, "setting", (flags & ST_SCHED_WIDE) ? "wide" : "default");
	char fam[ST_SCHED_FAMILIES_MAX];
	cJSON_AddStringToObject(kj, "families", st_sched_families(flags, fam, sizeof fam));
	cJSON *cj = cJSON_AddObjectToObject(kj, "counts");
	for (int t = 0; t < 4; t++)
		cJSON_AddNumberToObject(cj, kind_name((unsigned)t), (double)n->kind[t]);
	if (flags & ST_SCHED_HOIST) {
		cJSON_AddNumberToObject(cj, "hoist", (double)n->kind[ST_MOVE_HOIST]);
		cJSON_AddNumberToObject(cj, "hoist_group", (double)n->groups);
	}
	for (size_t e = 0; e < sizeof extra / sizeof extra[0]; e++)
		if (flags & extra[e].flag)
			cJSON_AddNumberToObject(cj, kind_name(extra[e].kind), (double)n->kind[extra[e].kind]);
	cJSON_AddNumberToObject(cj, "total", (double)n->total);
	return kj;
}

/* The kernel's line: "kernel K: N instructions, B blocks, S setting: M legal moves (swap .., ...)". */
static void summary_text(const char *name, const st_sass_kernel *sk, const st_sched *s, unsigned flags, const counts *n)
{
	printf("kernel %s: %zu instructions, %zu blocks, %s setting: %zu legal moves (swap %zu, stall %zu, yield %zu, reuse %zu",
	       name, st_sched_count(s), st_sass_block_count(sk), (flags & ST_SCHED_WIDE) ? "wide" : "default", n->total,
	       n->kind[0], n->kind[1], n->kind[2], n->kind[3]);
	if (flags & ST_SCHED_HOIST)
		printf(", hoist %zu (group %zu)", n->kind[ST_MOVE_HOIST], n->groups);
	for (size_t e = 0; e < sizeof extra / sizeof extra[0]; e++)
		if (flags & extra[e].flag)
			printf(", %s %zu", kind_name(extra[e].kind), n->kind[extra[e].kind]);
	printf(")\n");
}

/* Every legal move: an object of mj (--json), else a line with its description. */
static void list_moves(const st_sched *s, cJSON *mj)
{
	for (size_t i = 0; i < st_sched_move_count(s); i++) {
		st_move mv = st_sched_move(s, i);
		char text[256];
		st_sched_describe(s, mv, text, sizeof text);
		if (!mj) {
			printf("  %s\n", text);
			continue;
		}
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "kind", kind_name(mv.kind));
		cJSON_AddNumberToObject(e, "slot", mv.slot);
		cJSON_AddNumberToObject(e, "offset", 16.0 * mv.slot);
		cJSON_AddStringToObject(e, "text", text);
		cJSON_AddItemToArray(mj, e);
	}
}

/* What the command lists, from its options. */
typedef struct moves_args {
	const char *cmd, *listing;
	unsigned flags;
	int why;
	cJSON *kernels; /* --json: the "kernels" array, else NULL (text on stdout) */
	st_cli_regs regs; /* --threads/--shared/--allow-occupancy-drop: the rename family's raise */
} moves_args;

/* One kernel: its summary, its legal moves and (--why) the refusals.  The exit code. */
static int one_kernel(const moves_args *a, const st_cubin *c, size_t k, const char *name)
{
	st_sass_kernel *sk = NULL;
	st_sched *s = NULL;
	st_error err = {0};
	unsigned limit = 0;
	if (st_cli_sched_new(c, name, a->listing, a->flags, &sk, &s, &err) ||
	    st_cli_regs_limit(s, c, k, &a->regs, &limit, &err)) {
		st_sched_free(s);
		st_sass_free(sk);
		return st_cli_fail(a->cmd, &err);
	}
	counts n = count_moves(s);
	cJSON *kj = NULL;
	if (a->kernels)
		kj = summary_json(a->kernels, name, sk, s, a->flags, &n);
	else
		summary_text(name, sk, s, a->flags, &n);
	/* a report on the kernel as a whole: after its summary, before its moves ("after": the count
	 * the raise may reach) */
	if ((a->flags & ST_SCHED_RENAME) || a->regs.threads)
		st_cli_occupancy(kj, c, k, &a->regs, limit, limit);
	cJSON *mj = kj ? cJSON_AddArrayToObject(kj, "moves") : NULL;
	cJSON *rj = kj && a->why ? cJSON_AddArrayToObject(kj, "refused") : NULL;
	list_moves(s, mj);
	if (a->why)
		why_all(s, a->flags, rj);
	st_sched_free(s);
	st_sass_free(sk);
	return ST_EXIT_OK;
}

int st_cmd_moves(int argc, char **argv)
{
	const char *path = NULL, *kernel = NULL, *families = NULL;
	int json = 0;
	moves_args a = {.cmd = argv[0]};
	const st_cli_opt opts[] = {
		ST_CLI_REGS_OPTS(&a.regs),
		ST_OPT_STR("--listing", &a.listing), ST_OPT_STR("--kernel", &kernel),
		ST_OPT_BIT("--wide", &a.flags, ST_SCHED_WIDE), ST_OPT_BIT("--no-ctrl", &a.flags, ST_SCHED_NO_CTRL),
		ST_OPT_STR("--families", &families), ST_OPT_FLAG("--why", &a.why), ST_OPT_FLAG("--json", &json), ST_OPT_END,
	};
	const st_cli_need need[] = {{&path, "CUBIN"}, {0}};
	int code = st_cli_parse(argc, argv, &(st_cli_args){.usage = usage, .opts = opts, .file = &path, .need = need});
	if (code >= 0)
		return code;
	st_error err = {0};
	if (families && st_sched_parse_families(families, &a.flags, &err)) {
		st_cli_error(argv[0], "--%s", err.msg);
		return ST_EXIT_USAGE;
	}
	st_cubin *c = NULL;
	if (st_cubin_open_file(path, &c, &err))
		return st_cli_fail(argv[0], &err);
	if (st_cli_no_kernel(argv[0], c, path, kernel)) {
		st_cubin_free(c);
		return ST_EXIT_FAIL;
	}
	cJSON *root = json ? cJSON_CreateObject() : NULL;
	a.kernels = json ? cJSON_AddArrayToObject(root, "kernels") : NULL;
	int rc = ST_EXIT_OK;
	for (size_t k = 0; k < st_cubin_kernel_count(c) && rc == ST_EXIT_OK; k++) {
		const char *name = st_cubin_kernel(c, k)->name;
		if (!kernel || !strcmp(kernel, name))
			rc = one_kernel(&a, c, k, name);
	}
	if (json && rc == ST_EXIT_OK)
		st_cli_print_json(root, 1);
	cJSON_Delete(root);
	st_cubin_free(c);
	return rc;
}
