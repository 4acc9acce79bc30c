/* sasstune noise: the timing noise floor of a cubin (A/A). */
#include "cli.h"
#include "cmd_run.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static void help(void)
{
	printf("usage: sasstune noise CUBIN --launch L.json [--repeat R] [options]\n\n"
	       "Time CUBIN against a second, separately loaded copy of itself, exactly as\n"
	       "`sasstune compare` times two different cubins, and print the median A/A ratio\n"
	       "with its bootstrap 95%% interval.  Anything compare reports inside this band is\n"
	       "noise.  With --repeat R the measurement is made R times and the widest\n"
	       "deviation from 1 is reported.\n\n"
	       "options:\n"
	       "  --repeat R        measure R times (default 1)\n%s"
	       "exit status: 0 when measured, 1 on failure, 2 for a wrong command line.\n",
	       st_rtcli_options_help);
}

int st_cmd_noise(int argc, char **argv)
{
	const char *cmd = argv[0];
	st_rtcli o;
	st_rtcli_session rs;
	int code = st_rtcli_start(cmd, argc, argv, "repeat", help, 1, "expected one cubin", &o, &rs);
	if (code >= 0)
		return code;
	st_session *s = rs.s;
	st_session_info info;
	st_session_get_info(s, &info);
	if (!o.json)
		printf("device: %s\n%s: %.5f ms per launch\n", info.device, o.files[0], info.kernel_ms);
	cJSON *runs = cJSON_CreateArray();
	double worst = 0, worst_ci = 0;
	st_status rc = ST_OK;
	st_error err = {0};
	for (unsigned r = 0; r < o.repeat && rc == ST_OK; r++) {
		st_timing t;
		rc = st_session_noise(s, NULL, 0, 0, &t, &err);
		if (rc != ST_OK) {
			st_cli_error(cmd, "%s: %s", st_rtcli_verdict(rc), err.msg);
			break;
		}
		double dev = fabs(t.ratio - 1), dev_ci = fmax(fabs(t.ci_lo - 1), fabs(t.ci_hi - 1));
		worst = fmax(worst, dev);
		worst_ci = fmax(worst_ci, dev_ci);
		cJSON *j = cJSON_CreateObject();
		st_rtcli_timing_json(j, &t);
		cJSON_AddItemToArray(runs, j);
		if (!o.json)
			printf("A/A = %.4f, 95%% interval [%.4f, %.4f] over %u pairs (%u launches per sample, %.5f ms per launch)\n",
			       t.ratio, t.ci_lo, t.ci_hi, t.n, t.reps, t.a_ms);
	}
	if (rc == ST_OK && o.json) {
		cJSON *root = cJSON_CreateObject();
		cJSON_AddStringToObject(root, "device", info.device);
		cJSON_AddStringToObject(root, "cubin", o.files[0]);
		cJSON_AddNumberToObject(root, "kernel_ms", info.kernel_ms);
		cJSON_AddItemToObject(root, "runs", runs);
		runs = NULL;
		cJSON_AddNumberToObject(root, "max_deviation", worst);
		cJSON_AddNumberToObject(root, "max_interval_deviation", worst_ci);
		st_cli_print_json(root, 1);
		cJSON_Delete(root);
	} else if (rc == ST_OK) {
		printf("noise floor: median within %.2f%% of 1, interval within %.2f%% of 1\n", 100 * worst, 100 * worst_ci);
	}
	cJSON_Delete(runs);
	st_rtcli_end(&rs);
	return rc == ST_OK ? ST_EXIT_OK : ST_EXIT_FAIL;
}
