/* sasstune variants PTX: the same PTX through other ptxas binaries and options, each verified
 * and timed against the stock cubin (docs/variants.md). */
#include "variants_cli.h"
#include "util/util.h"

#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
	fprintf(out,
		"usage: sasstune variants PTX [--launch L.json] [--cubin STOCK] [--ptxas P]... [--stock-ptxas P]\n"
		"                         [--controls F]... [--options \"...\"] [--kernel K] [--no-discover]\n"
		"                         [--jobs N] [--timeout S] [--pairs N] [-o OUT] [--json] [--quiet]\n\n"
		"Compile PTX with other ptxas binaries and options (no extra options, --register-usage-level 0\n"
		"and 10 where the binary knows it, up to two --maxrregcount values below the stock register\n"
		"count that keep the blocks per SM, --apply-controls=F per --controls F), in parallel, each\n"
		"under a time limit.  A ptxas that crashes, hangs or prints errors, a variant with the same\n"
		"code as an earlier one, and every variant when the stock ptxas does not reproduce the stock\n"
		"kernel's code (\"PTX does not match the cubin\") are rejected rows with their reason.  With\n"
		"--launch and a GPU each remaining variant is verified bit for bit against stock and timed in\n"
		"interleaved pairs; the fastest is confirmed with >= 200 pairs (95 %% interval of\n"
		"stock/variant above 1.005).  Without a GPU the table holds the CPU columns and says that the\n"
		"GPU steps were skipped.\n\n"
		"options:\n"
		"  --launch L      launch spec (docs/runtime.md); without it the GPU steps are skipped\n"
		"  --cubin STOCK   the stock cubin (default: PTX through the stock ptxas)\n"
		"  --kernel K      the kernel (default: the launch spec's, else the only entry)\n"
		"  -o OUT          write the chosen cubin: the confirmed winner, else stock\n"
		"%s"
		"  --json          print the table as JSON (schema sasstune-variants-1)\n"
		"  --quiet         no progress on stderr\n"
		"  -h, --help\n\n"
		"exit status: 0 the table was made (whatever each variant's fate, GPU or not), 1 no table\n"
		"(unreadable PTX or cubin, no stock cubin, kernel not in the cubin), 2 usage error\n",
		st_vcli_options_help);
}

int st_cmd_variants(int argc, char **argv)
{
	const char *path = NULL, *launch_path = NULL, *cubin_path = NULL, *kernel = NULL, *out_path = NULL;
	int json = 0;
	st_vcli c = {0};
	const st_cli_opt opts[] = {
		ST_OPT_FLAG("--json", &json), ST_OPT_FLAG("--quiet", &c.quiet), ST_OPT_FLAG("--no-discover", &c.no_discover),
		ST_OPT_STR("--launch", &launch_path), ST_OPT_STR("--cubin", &cubin_path), ST_OPT_STR("--kernel", &kernel),
		ST_OPT_STR("-o", &out_path),
		ST_OPT_FN("--ptxas", st_vcli_ptxas_opt, &c), ST_OPT_FN("--controls", st_vcli_controls_opt, &c),
		ST_OPT_STR("--stock-ptxas", &c.stock_ptxas),
		ST_OPT_STR("--options", &c.options), ST_OPT_FN("--jobs", st_vcli_count_opt, &c.jobs),
		ST_OPT_FN("--pairs", st_vcli_count_opt, &c.pairs), ST_OPT_FN("--timeout", st_vcli_seconds_opt, &c.timeout_s),
		ST_OPT_END,
	};
	const st_cli_need need[] = {{&path, "PTX"}, {0}};
	int code = st_cli_parse(argc, argv, &(st_cli_args){.usage = usage, .opts = opts, .file = &path, .need = need});
	if (code >= 0)
		return code;
	c.ptx_path = path;
	st_error err = {0};
	uint8_t *stock = NULL;
	size_t size = 0;
	st_launch *spec = NULL;
	st_variants *v = NULL;
	if ((cubin_path && st_read_file(cubin_path, &stock, &size, &err)) ||
	    (launch_path && st_launch_load(launch_path, &spec, &err))) {
		free(stock);
		return st_cli_fail(argv[0], &err);
	}
	if (!kernel && spec)
		kernel = st_launch_kernel(spec);
	code = st_vcli_stage(argv[0], &c, stock, size, kernel, spec, &v);
	if (code == ST_EXIT_OK && out_path) {
		const st_variant *b = st_variants_get(v, st_variants_best(v));
		if (st_write_file_atomic(out_path, b->cubin, b->cubin_size, &err))
			code = st_cli_fail(argv[0], &err);
	}
	if (code == ST_EXIT_OK && json) {
		char *s = st_variants_json(v);
		cJSON *j = s ? cJSON_Parse(s) : NULL;
		if (!j || st_cli_print_json(j, 1))
			code = ST_EXIT_FAIL;
		cJSON_Delete(j);
		free(s);
	} else if (code == ST_EXIT_OK) {
		st_vcli_print(stdout, v);
	}
	st_variants_free(v);
	st_launch_free(spec);
	free(stock);
	return code;
}
