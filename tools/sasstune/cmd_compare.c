/* sasstune compare: time two cubins against each other (paired, interleaved). */
#include "cli.h"
#include "cmd_run.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>

static void help(void)
{
	printf("usage: sasstune compare A.cubin B.cubin --launch L.json [options]\n\n"
	       "Check that B computes what A computes (every buffer bit for bit on every input\n"
	       "set, as `sasstune run`; then A is run again, and a B after which A's outputs no\n"
	       "longer reproduce wrote outside its buffers: a mismatch), then time them in\n"
	       "interleaved pairs (A B, B A, A B, ...) after a warm-up and print the median of\n"
	       "the per-pair time ratios B/A with a bootstrap 95%% interval: below 1 means B is\n"
	       "faster.  If the interval holds 1 the two are not distinguishable at this many\n"
	       "pairs.  A timed sample lasts at least 500 us here (--sample-us raises it), so the\n"
	       "event timer's step is <= 0.1%%; this is the measurement the tuner's final\n"
	       "estimate makes (docs/runtime.md).\n\n"
	       "options:\n"
	       "  --no-verify       time B without checking its outputs first\n%s"
	       "exit status: 0 when the comparison was made, 1 if B fails verification or a\n"
	       "kernel crashes or hangs, 2 for a wrong command line.\n",
	       st_rtcli_options_help);
}

int st_cmd_compare(int argc, char **argv)
{
	const char *cmd = argv[0];
	st_rtcli o;
	st_rtcli_session rs;
	int code = st_rtcli_start(cmd, argc, argv, "no-verify estimate", help, 2, "expected two cubins, A and B", &o, &rs);
	if (code >= 0)
		return code;
	size_t b_size;
	uint8_t *b = st_rtcli_read(cmd, o.files[1], &b_size);
	st_error err = {0};
	st_status rc = b ? ST_OK : ST_EIO;
	st_estimate e = {0}; /* the same measurement as the tuner's final estimate */
	if (rc == ST_OK && (rc = st_estimate_run(rs.ref, rs.ref_size, rs.spec, &o.opt, b, b_size, !o.no_verify, 0, &e,
						 &err)) != ST_OK && e.stage == ST_ESTIMATE_OPEN)
		st_cli_error(cmd, "%s: %s", rs.ref_path, err.msg);
	else if (rc == ST_OK && (rc = e.verdict) != ST_OK && e.stage == ST_ESTIMATE_VERIFY)
		st_cli_error(cmd, "%s: %s: %s", o.files[1], st_rtcli_verdict(rc), err.msg);
	else if (rc != ST_OK && b)
		st_cli_error(cmd, "%s: %s", st_rtcli_verdict(rc), err.msg);
	const st_timing t = e.t;
	const st_session_info info = e.info;
	if (rc == ST_OK && o.json) {
		cJSON *j = cJSON_CreateObject();
		cJSON_AddStringToObject(j, "device", info.device);
		cJSON_AddStringToObject(j, "a", o.files[0]);
		cJSON_AddStringToObject(j, "b", o.files[1]);
		cJSON_AddBoolToObject(j, "verified", !o.no_verify);
		cJSON_AddBoolToObject(j, "deterministic", info.deterministic);
		st_rtcli_timing_json(j, &t);
		cJSON_AddNumberToObject(j, "sample_us", e.sample_us);
		cJSON_AddStringToObject(j, "estimate", "fresh-session");
		cJSON_AddNumberToObject(j, "contaminations", info.contaminations);
		st_cli_print_json(j, 1);
		cJSON_Delete(j);
	} else if (rc == ST_OK) {
		printf("device: %s\n", info.device);
		if (!o.no_verify)
			printf("B matches A %s on %u input sets\n", info.deterministic ? "bit for bit" : "within the tolerance",
			       info.verify_sets);
		printf("A %.5f ms, B %.5f ms per launch (median; %u launches per sample)\n", t.a_ms, t.b_ms, t.reps);
		printf("B/A = %.4f, 95%% interval [%.4f, %.4f] over %u pairs: ", t.ratio, t.ci_lo, t.ci_hi, t.n);
		if (t.ci_lo > 1)
			printf("B is %.2f%% slower\n", 100 * (t.ratio - 1));
		else if (t.ci_hi < 1)
			printf("B is %.2f%% faster\n", 100 * (1 - t.ratio));
		else
			printf("no difference resolved\n");
	}
	free(b);
	st_rtcli_end(&rs);
	return rc == ST_OK ? ST_EXIT_OK : ST_EXIT_FAIL;
}
