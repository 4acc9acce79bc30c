/* sasstune apply CUBIN --policy P -o OUT: a learned policy, greedily, with no GPU (docs/tune.md). */
#include "tune_cli.h"
#include "util/util.h"

#include <cJSON.h>

static void usage(FILE *out)
{
	fprintf(out,
		"usage: sasstune apply CUBIN --policy P -o OUT [--kernel K] [--listing F] [--max-steps N]\n"
		"                      [--margin M] [--ungated] [--wide] [--no-ctrl] [--schedule-out S.json] [--json]\n\n"
		"Apply a policy written by `sasstune train` (or `tune --policy`) to each entry kernel of CUBIN\n"
		"(or kernel K): take the legal move the policy scores highest while it beats the policy's stop\n"
		"action by M, at most N times, with no GPU.  Then the cost model gates it: only the prefix\n"
		"of those moves it rates best is kept, none if it rates none above the original (--ungated:\n"
		"keep them all, to measure the policy alone).  The independent checker\n"
		"(`sasstune check`) then judges each changed kernel; a kernel it finds a violation in is\n"
		"left as it was, and said so.  The result is UNCONFIRMED: nothing was timed.\n\n"
		"options:\n"
		"  --policy P        the policy file (required)\n"
		"  --kernel K        only kernel K (default: every entry kernel)\n"
		"  --listing F       CUBIN's `nvdisasm -hex -c` listing (default: run nvdisasm)\n"
		"  --max-steps N     moves per kernel at most (default 64)\n"
		"  --margin M        the best move must beat stopping by this score (default 0)\n"
		"  --ungated         keep every policy move, whatever the cost model says\n"
		"  --wide, --no-ctrl the move set, as for tune; use the one the policy was trained with\n"
		"  -o OUT            the output cubin (required)\n"
		"  --schedule-out F  the applied moves as a schedule\n"
		"  --json            {kernel, changed, improved (changed and model_ratio > 1), moves,\n"
		"                    model_ratio, message, output}\n"
		"  -h, --help\n\n"
		"exit status: 0 written, 1 failure (bad input or policy), 2 usage error\n");
}

static int max_steps_opt(const char *cmd, const char *v, void *dst)
{
	if (!st_tcli_u64(v, 1000000, dst)) {
		st_cli_error(cmd, "--max-steps: '%s' is not a count (0..1000000)", v);
		return 1;
	}
	return 0;
}

static int margin_opt(const char *cmd, const char *v, void *dst)
{
	char *end;
	double *margin = dst;
	*margin = strtod(v, &end);
	if (end == v || *end || !(*margin > -1e9 && *margin < 1e9)) {
		st_cli_error(cmd, "--margin: '%s' is not a number", v);
		return 1;
	}
	return 0;
}

/* The summary of an applied policy: JSON ({kernel, changed, improved, ...}) or text lines. */
static void print_result(const st_tune_result *r, const char *path, const char *out, int json)
{
	if (json) {
		cJSON *j = cJSON_CreateObject();
		cJSON_AddStringToObject(j, "kernel", r->kernel);
		/* changed: the output differs; improved: changed and the model predicts a gain (ungated, a
		 * change can be predicted slower) */
		cJSON_AddBoolToObject(j, "changed", r->improved);
		cJSON_AddBoolToObject(j, "improved", r->improved && r->model_ratio > 1.0);
		cJSON_AddBoolToObject(j, "confirmed", 0);
		cJSON_AddNumberToObject(j, "moves", (double)r->steps);
		cJSON_AddNumberToObject(j, "model_ratio", r->model_ratio);
		cJSON_AddStringToObject(j, "message", r->message);
		cJSON_AddStringToObject(j, "output", out);
		st_cli_print_json(j, 0);
		cJSON_Delete(j);
	} else {
		printf("%s: %s\n", path, r->message);
		if (r->improved)
			printf("%s: the cost model predicts %.4fx (unconfirmed%s)\n", r->kernel, r->model_ratio,
			       r->model_ratio > 1.0 ? "" : "; not faster");
		printf("wrote %s (%s)\n", out, r->improved ? "policy applied" : "unchanged");
	}
}

int st_cmd_apply(int argc, char **argv)
{
	const char *path = NULL, *policy_path = NULL, *out = NULL, *kernel = NULL, *listing = NULL;
	const char *sched_out = NULL;
	unsigned long long max_steps = 64;
	double margin = 0;
	unsigned flags = 0;
	int json = 0, ungated = 0;
	const st_cli_opt opts[] = {
		ST_OPT_FLAG("--json", &json), ST_OPT_BIT("--wide", &flags, ST_SCHED_WIDE),
		ST_OPT_BIT("--no-ctrl", &flags, ST_SCHED_NO_CTRL), ST_OPT_FLAG("--ungated", &ungated),
		ST_OPT_STR("--policy", &policy_path), ST_OPT_STR("-o", &out), ST_OPT_STR("--kernel", &kernel),
		ST_OPT_STR("--listing", &listing), ST_OPT_FN("--max-steps", max_steps_opt, &max_steps),
		ST_OPT_FN("--margin", margin_opt, &margin), ST_OPT_STR("--schedule-out", &sched_out), ST_OPT_END,
	};
	const st_cli_need need[] = {{&path, "CUBIN"}, {&policy_path, "--policy P"}, {&out, "-o OUT"}, {0}};
	int code = st_cli_parse(argc, argv, &(st_cli_args){.usage = usage, .opts = opts, .file = &path, .need = need});
	if (code >= 0)
		return code;
	st_error err = {0};
	uint8_t *data = NULL;
	size_t size = 0;
	st_policy *policy = NULL;
	st_tune_result r = {0};
	int rc = ST_EXIT_OK, have_r = 0;
	if (st_read_file(path, &data, &size, &err) || st_policy_load(policy_path, &policy, &err))
		goto fail;
	st_tune_kernel k = {.cubin = data, .size = size, .name = path, .kernel = kernel, .listing = listing};
	if (st_tune_apply_policy(&k, policy, (unsigned)max_steps, margin, flags | (ungated ? 0 : ST_TUNE_MODEL_GATE), &r,
				 &err))
		goto fail;
	have_r = 1;
	if (st_tcli_write_result(&r, out, sched_out, &err))
		goto fail;
	print_result(&r, path, out, json);
	goto done;
fail:
	rc = st_cli_fail(argv[0], &err);
done:
	if (have_r)
		st_tune_result_free(&r);
	st_policy_free(policy);
	free(data);
	return rc;
}
