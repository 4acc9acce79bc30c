/* sasstune insert CUBIN -o OUT --slot S [--slot S ...] [--kernel K] [--word LO:HI] [--keep-reuse]: insert
 * instruction slots through the kernel's trailing padding (st_cubin_insert), for experiments. */
#include "cli.h"
#include "sasstune/cubin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SLOTS 64

static void usage(FILE *out)
{
	fprintf(out, "usage: sasstune insert CUBIN -o OUT --slot S [--slot S ...] [--kernel K] [--word LO:HI]\n"
		     "                       [--keep-reuse]\n\n"
		     "Insert one instruction before each named slot of a kernel (slots of CUBIN, counted\n"
		     "from 0; 0x1a is slot 26, not byte offset 0x1a).  Each insertion takes one of the NOPs\n"
		     "that pad the code after its last EXIT / self-branch (never run, named by nothing;\n"
		     "`sasstune inspect` counts them) and moves the code between down by one slot, patching\n"
		     "every branch, attribute, relocation and symbol so that each names the same instruction\n"
		     "as before.  A branch to slot S therefore still lands on the instruction that was at S:\n"
		     "the new one runs only on the fall-through path into S.  For experiments (the price of\n"
		     "an issue slot, docs/pipeline.md); no legality model is run.  The operand-reuse flags of\n"
		     "the instruction before each inserted one are cleared (its next instruction changed).\n\n"
		     "options:\n"
		     "  --slot S       insert before the instruction at slot S (repeatable)\n"
		     "  --kernel K     the kernel (default: the cubin's only kernel)\n"
		     "  --word LO:HI   the inserted word as nvdisasm prints it (two 64-bit hex numbers);\n"
		     "                 default: NOP with stall 1, no scoreboard, no wait (0x7918:0x000fc20000000000)\n"
		     "  --keep-reuse   leave those reuse flags as they are\n"
		     "  -o OUT         where to write the result\n"
		     "  -h, --help\n\n"
		     "exit status: 0 written, 1 bad input or refused, 2 usage error\n");
}

typedef struct slots {
	size_t n;
	unsigned long v[MAX_SLOTS];
} slots;

static int add_slot(const char *cmd, const char *value, void *dst)
{
	slots *s = dst;
	char *end;
	unsigned long v = strtoul(value, &end, 0);
	if (!*value || *end || value[0] == '-') {
		st_cli_error(cmd, "--slot: '%s' is not a slot number", value);
		return 1;
	}
	if (s->n == MAX_SLOTS) {
		st_cli_error(cmd, "--slot: at most %d slots", MAX_SLOTS);
		return 1;
	}
	s->v[s->n++] = v;
	return 0;
}

static int parse_word(const char *cmd, const char *value, void *dst)
{
	uint8_t *w = dst;
	char *end;
	unsigned long long lo = strtoull(value, &end, 16), hi;
	if (*end != ':' || (hi = strtoull(end + 1, &end, 16), *end) || value[0] == ':') {
		st_cli_error(cmd, "--word: '%s' is not LO:HI (two hex numbers)", value);
		return 1;
	}
	for (int i = 0; i < 8; i++) {
		w[i] = (uint8_t)(lo >> (8 * i));
		w[8 + i] = (uint8_t)(hi >> (8 * i));
	}
	w[16] = 1; /* given */
	return 0;
}

/* Clear the operand-reuse flags of the instruction before `slot` (its next instruction is now
 * the inserted one; the sched module clears them wherever an instruction's successor changes). */
static st_status clear_reuse(st_cubin *c, size_t k, size_t slot, size_t *cleared, st_error *err)
{
	uint64_t lo, hi;
	if (!slot)
		return ST_OK;
	st_cubin_insn(c, k, slot - 1, &lo, &hi);
	unsigned stall = (unsigned)(hi >> 41) & 0xf, yield = (unsigned)(hi >> 45) & 1, reuse = (unsigned)(hi >> 58) & 7;
	if (!reuse || !yield || stall < 1 || stall > 11)
		return ST_OK; /* bits 122..124 are no reuse flags then (batch_t) */
	uint8_t w[16];
	hi &= ~((uint64_t)7 << 58);
	for (int i = 0; i < 8; i++)
		w[i] = (uint8_t)(lo >> (8 * i)), w[8 + i] = (uint8_t)(hi >> (8 * i));
	(*cleared)++;
	return st_cubin_set_ctrl(c, k, slot - 1, w, err);
}

static int cmp_desc(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;
	return x < y ? 1 : x > y ? -1 : 0;
}

int st_cmd_insert(int argc, char **argv)
{
	const char *path = NULL, *out = NULL, *kernel = NULL;
	int keep_reuse = 0;
	size_t cleared = 0;
	slots sl = {0};
	uint8_t word[17] = {0};
	const st_cli_opt opts[] = {
		ST_OPT_STR("-o", &out),		  ST_OPT_STR("--kernel", &kernel), ST_OPT_FN("--slot", add_slot, &sl),
		ST_OPT_FN("--word", parse_word, word), ST_OPT_FLAG("--keep-reuse", &keep_reuse), ST_OPT_END,
	};
	const st_cli_need need[] = {{&path, "CUBIN"}, {&out, "-o OUT"}, {0}};
	int code = st_cli_parse(argc, argv, &(st_cli_args){.usage = usage, .opts = opts, .file = &path, .need = need});
	if (code >= 0)
		return code;
	if (!sl.n) {
		st_cli_error(argv[0], "--slot S is required (see sasstune insert --help)");
		return ST_EXIT_USAGE;
	}
	st_error err = {0};
	st_cubin *c = NULL;
	if (st_cubin_open_file(path, &c, &err))
		return st_cli_fail(argv[0], &err);
	int rc = ST_EXIT_OK;
	size_t k = kernel ? st_cubin_find_kernel(c, kernel) : 0;
	if (st_cli_no_kernel(argv[0], c, path, kernel)) {
		rc = ST_EXIT_FAIL;
	} else if (!kernel && st_cubin_kernel_count(c) != 1) {
		st_cli_error(argv[0], "%s: %zu kernels; name one with --kernel", path, st_cubin_kernel_count(c));
		rc = ST_EXIT_USAGE;
	} else {
		qsort(sl.v, sl.n, sizeof sl.v[0], cmp_desc); /* the highest first: lower slots keep their numbers */
		for (size_t i = 0; i < sl.n && rc == ST_EXIT_OK; i++) {
			if (i && sl.v[i] == sl.v[i - 1]) {
				st_cli_error(argv[0], "--slot %lu given twice", sl.v[i]);
				rc = ST_EXIT_USAGE;
			} else if (st_cubin_insert(c, k, sl.v[i], word[16] ? word : NULL, &err) ||
				   (!keep_reuse && clear_reuse(c, k, sl.v[i], &cleared, &err))) {
				rc = st_cli_fail(argv[0], &err);
			}
		}
	}
	if (rc == ST_EXIT_OK && st_cubin_write_file(c, out, &err))
		rc = st_cli_fail(argv[0], &err);
	if (rc == ST_EXIT_OK)
		printf("%s: %zu slot%s inserted, %zu padding slots left; reuse flags cleared on %zu instruction%s\n"
		       "wrote %s\n",
		       st_cubin_kernel(c, k)->name, sl.n, sl.n == 1 ? "" : "s", st_cubin_insertable(c, k), cleared,
		       cleared == 1 ? "" : "s", out);
	st_cubin_free(c);
	return rc;
}
