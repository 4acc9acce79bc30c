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
		"                xblock (default swap,ctrl; --no-ctrl is swap alone)\n"
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

int st_cmd_moves(int argc, char **argv)
{
	const char *path = NULL, *listing = NULL, *kernel = NULL, *families = NULL;
	unsigned flags = 0;
	int json = 0, why = 0;
	st_cli_regs regs = {0};
	const st_cli_opt opts[] = {
		ST_CLI_REGS_OPTS(&regs),
		ST_OPT_STR("--listing", &listing), ST_OPT_STR("--kernel", &kernel),
		ST_OPT_BIT("--wide", &flags, ST_SCHED_WIDE), ST_OPT_BIT("--no-ctrl", &flags, ST_SCHED_NO_CTRL),
		ST_OPT_STR("--families", &families), ST_OPT_FLAG("--why", &why), ST_OPT_FLAG("--json", &json), ST_OPT_END,
	};
	const st_cli_need need[] = {{&path, "CUBIN"}, {0}};
	int code = st_cli_parse(argc, argv, &(st_cli_args){.usage = usage, .opts = opts, .file = &path, .need = need});
	if (code >= 0)
		return code;
	st_error err = {0};
	if (families && st_sched_parse_families(families, &flags, &err)) {
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
	cJSON *root = json ? cJSON_CreateObject() : NULL, *arr = json ? cJSON_AddArrayToObject(root, "kernels") : NULL;
	int rc = ST_EXIT_OK;
	for (size_t k = 0; k < st_cubin_kernel_count(c) && rc == ST_EXIT_OK; k++) {
		const char *name = st_cubin_kernel(c, k)->name;
		if (kernel && strcmp(kernel, name))
			continue;
		st_sass_kernel *sk;
		st_sched *s;
		unsigned limit = 0;
		if (st_cli_sched_new(c, name, listing, flags, &sk, &s, &err) || st_cli_regs_limit(s, c, k, &regs, &limit, &err)) {
			rc = st_cli_fail(argv[0], &err);
			st_sched_free(s);
			st_sass_free(sk);
			break;
		}
		size_t nm = st_sched_move_count(s), counts[16] = {0}, groups = 0;
		int hoist = (flags & ST_SCHED_HOIST) != 0, wait = (flags & ST_SCHED_WAIT) != 0, sb = (flags & ST_SCHED_SB) != 0;
		int xblock = (flags & ST_SCHED_XBLOCK) != 0, rename = (flags & ST_SCHED_RENAME) != 0;
		for (size_t i = 0; i < nm; i++)
		{
			st_move mv = st_sched_move(s, i);
			counts[mv.kind & 15]++;
			groups += mv.kind == ST_MOVE_HOIST && mv.arg >= 8;
		}
		const char *setting = (flags & ST_SCHED_WIDE) ? "wide" : "default";
		cJSON *kj = NULL, *mj = NULL, *rj = NULL;
		if (json) {
			kj = cJSON_CreateObject();
			cJSON_AddItemToArray(arr, kj);
			cJSON_AddStringToObject(kj, "kernel", name);
			cJSON_AddNumberToObject(kj, "instructions", (double)st_sched_count(s));
			cJSON_AddNumberToObject(kj, "blocks", (double)st_sass_block_count(sk));
			cJSON_AddStringToObject(kj, "setting", setting);
			cJSON_AddStringToObject(kj, "families", st_sched_families(flags));
			cJSON *cj = cJSON_AddObjectToObject(kj, "counts");
			for (int t = 0; t < 4; t++)
				cJSON_AddNumberToObject(cj, kind_name((unsigned)t), (double)counts[t]);
			if (hoist)
			{
				cJSON_AddNumberToObject(cj, "hoist", (double)counts[ST_MOVE_HOIST]);
				cJSON_AddNumberToObject(cj, "hoist_group", (double)groups);
			}
			if (wait)
				cJSON_AddNumberToObject(cj, "wait", (double)counts[ST_MOVE_WAIT]);
			if (sb)
				cJSON_AddNumberToObject(cj, "sb", (double)counts[ST_MOVE_SB]);
			if (rename)
				cJSON_AddNumberToObject(cj, "rename", (double)counts[ST_MOVE_RENAME]);
			if (xblock)
				cJSON_AddNumberToObject(cj, "xblock", (double)counts[ST_MOVE_XBLOCK]);
			cJSON_AddNumberToObject(cj, "total", (double)nm);
			mj = cJSON_AddArrayToObject(kj, "moves");
			if (why)
				rj = cJSON_AddArrayToObject(kj, "refused");
		} else {
			printf("kernel %s: %zu instructions, %zu blocks, %s setting: %zu legal moves (swap %zu, stall %zu, yield %zu, reuse %zu",
			       name, st_sched_count(s), st_sass_block_count(sk), setting, nm, counts[0], counts[1], counts[2],
			       counts[3]);
			if (hoist)
				printf(", hoist %zu (group %zu)", counts[ST_MOVE_HOIST], groups);
			if (wait)
				printf(", wait %zu", counts[ST_MOVE_WAIT]);
			if (sb)
				printf(", sb %zu", counts[ST_MOVE_SB]);
			if (rename)
				printf(", rename %zu", counts[ST_MOVE_RENAME]);
			if (xblock)
				printf(", xblock %zu", counts[ST_MOVE_XBLOCK]);
			printf(")\n");
		}
		if (rename || regs.threads) /* before the moves; "after": the count the raise may reach */
			st_cli_occupancy(kj, c, k, &regs, limit, limit);
		for (size_t i = 0; i < nm; i++) {
			st_move mv = st_sched_move(s, i);
			char text[256];
			st_sched_describe(s, mv, text, sizeof text);
			if (json) {
				cJSON *e = cJSON_CreateObject();
				cJSON_AddStringToObject(e, "kind", kind_name(mv.kind));
				cJSON_AddNumberToObject(e, "slot", mv.slot);
				cJSON_AddNumberToObject(e, "offset", 16.0 * mv.slot);
				cJSON_AddStringToObject(e, "text", text);
				cJSON_AddItemToArray(mj, e);
			} else {
				printf("  %s\n", text);
			}
		}
		for (size_t j = 0; why && j + 1 < st_sched_count(s); j++) {
			st_move mv = {ST_MOVE_SWAP, 0, (uint32_t)j, {0}};
			st_error e2 = {0};
			if (!st_sched_check(s, mv, &e2))
				continue;
			if (json)
				cJSON_AddItemToArray(rj, cJSON_CreateString(e2.msg));
			else
				printf("  refused: %s\n", e2.msg);
		}
		for (size_t j = 0; why && hoist && j < st_sched_count(s); j++)
			for (unsigned a = 0; a < 16; a += 4) {
				/* the longest variant refused: names the swap that stops the chain (a >= 8:
				 * the group form, only for a load that has a group) */
				st_move mv = {ST_MOVE_HOIST, (uint8_t)(a + 3), (uint32_t)j, {0}};
				st_error e2 = {0};
				if (!st_sched_check(s, mv, &e2) || strstr(e2.msg, ": 0 swaps") || strstr(e2.msg, ": not a global"))
					continue;
				if (json)
					cJSON_AddItemToArray(rj, cJSON_CreateString(e2.msg));
				else
					printf("  refused: %s\n", e2.msg);
			}
		for (size_t j = 0; why && wait && j < st_sched_count(s); j++)
			for (uint8_t b = 0; b < 6; b++) {
				st_move mv = {ST_MOVE_WAIT, b, (uint32_t)j, {0}};
				st_error e2 = {0};
				if (!(st_sched_ctrl(s, j).wait >> b & 1) || !st_sched_check(s, mv, &e2))
					continue;
				if (json)
					cJSON_AddItemToArray(rj, cJSON_CreateString(e2.msg));
				else
					printf("  refused: %s\n", e2.msg);
			}
		for (size_t j = 0; why && sb && j < st_sched_count(s); j++)
			for (uint8_t rd = 0; rd < 2; rd++) { /* a producer's SB that no free SB can replace */
				st_ctrl cj = st_sched_ctrl(s, j);
				unsigned old = rd ? cj.rbar : cj.wbar;
				st_error e2 = {0}, e3 = {0};
				int legal = old > 5, refused = 0;
				for (uint8_t to = 0; to < 6 && !legal; to++) {
					st_move mv = {ST_MOVE_SB, (uint8_t)(8 * rd + to), (uint32_t)j, {0}};
					if (to != old && !(legal = !st_sched_check(s, mv, refused ? &e3 : &e2)))
						refused = 1;
				}
				if (legal || !refused)
					continue;
				if (json)
					cJSON_AddItemToArray(rj, cJSON_CreateString(e2.msg));
				else
					printf("  refused: %s\n", e2.msg);
			}
		for (size_t j = 0; why && xblock && j < st_sched_count(s); j++) {
			/* every instruction the static rules admit (a candidate) whose move is refused now */
			st_move mv = {ST_MOVE_XBLOCK, 0, (uint32_t)j, {0}};
			st_error e2 = {0};
			if (!st_sched_check(s, mv, &e2) || strstr(e2.msg, "not a candidate"))
				continue;
			if (json)
				cJSON_AddItemToArray(rj, cJSON_CreateString(e2.msg));
			else
				printf("  refused: %s\n", e2.msg);
		}
		for (size_t j = 0; why && rename && j < st_sched_count(s); j++) {
			/* every R def that cannot be renamed (to the lowest free register; its reason) */
			st_move mv = {ST_MOVE_RENAME, 0, (uint32_t)j, {0}};
			st_error e2 = {0};
			for (size_t i = 0; i < nm && !mv.arg; i++)
				if (st_sched_move(s, i).kind == ST_MOVE_RENAME)
					mv.arg = st_sched_move(s, i).arg;
			if (!st_sched_check(s, mv, &e2) || strstr(e2.msg, "not an unpredicated"))
				continue;
			if (json)
				cJSON_AddItemToArray(rj, cJSON_CreateString(e2.msg));
			else
				printf("  refused: %s\n", e2.msg);
		}
		st_sched_free(s);
		st_sass_free(sk);
	}
	if (json && rc == ST_EXIT_OK)
		st_cli_print_json(root, 1);
	cJSON_Delete(root);
	st_cubin_free(c);
	return rc;
}
