/* sasstune profile: where a kernel's warps wait, per instruction (CUPTI PC sampling in the
 * worker, or a recorded samples file), printed as the annotated listing (docs/profile.md). */
#include "cli.h"
#include "profile_report.h"
#include "sasstune/cubin.h"
#include "sasstune/profile.h"
#include "sasstune/runtime.h"
#include "util/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LAUNCHES 2000 /* CUPTI serializes the launches and costs time on each */

static void usage(FILE *out)
{
	fprintf(out,
		"usage: sasstune profile CUBIN --launch L.json [--kernel K] [--json] [--top N]\n"
		"                        [--samples-in FILE] [--samples-out FILE] [options]\n\n"
		"Sample the warps' program counters while the kernel runs on the GPU (CUPTI's PC\n"
		"sampling, in the worker process) and print the kernel's listing annotated with the\n"
		"samples at each instruction per stall reason (long_sb, short_sb, wait, barrier,\n"
		"mio_throttle, lg_throttle, math_pipe, not_selected, selected, ...), after a summary:\n"
		"the share of each reason and the hottest instructions.  CUPTI is loaded at run time\n"
		"(docs/profile.md says where from); without it the command says so and exits 1.\n\n"
		"options:\n"
		"  --launch FILE      launch spec (docs/runtime.md); required unless --samples-in\n"
		"  --kernel K         the kernel to annotate (default: the launch spec's, else the\n"
		"                     samples file's, else the cubin's only kernel)\n"
		"  --samples-in F     read recorded samples (schema sasstune-samples-1) instead of sampling\n"
		"  --samples-out F    write the samples there (the same schema)\n"
		"  --listing F        CUBIN's `nvdisasm -hex -c` listing (default: run nvdisasm)\n"
		"  --top N            hot instructions in the summary (default 10)\n"
		"  --ms T             sample about T ms of GPU time (default 100; at most 2000 launches)\n"
		"  --period P         sampling period 2^P cycles, 5..31 (default: CUPTI's)\n"
		"  --device N         CUDA device ordinal (default 0)\n"
		"  --timeout S        watchdog slack in seconds (default 5)\n"
		"  --json             {kernel, device, launches, total_samples, kernel_samples, unmatched,\n"
		"                     cost_ms, reasons: {reason: share}, top: [offset], instructions:\n"
		"                     [{offset, text, opcode, samples, share, stalls: {reason: n}}]}\n"
		"  -h, --help\n\n"
		"environment:\n"
		"  SASSTUNE_CUPTI     the CUPTI library (libcupti.so)\n"
		"  SASSTUNE_WORKER, SASSTUNE_LIBCUDA  as for run\n\n"
		"exit status: 0 profiled, 1 failure (no GPU, no CUPTI, bad input), 2 usage error\n");
}

typedef struct popts {
	const char *path, *launch, *kernel, *samples_in, *samples_out, *listing;
	int json;
	unsigned long long top, period, device;
	double ms, timeout;
} popts;

static int num_opt(const char *cmd, const char *name, const char *v, double lo, double hi, bool integer,
		   double *out)
{
	char *end;
	errno = 0;
	double d = strtod(v, &end);
	if (end == v || *end || errno || !(d >= lo && d <= hi) || (integer && d != floor(d))) {
		st_cli_error(cmd, "%s: expected %s from %g to %g, not '%s'", name, integer ? "an integer" : "a number", lo,
			     hi, v);
		return 1;
	}
	*out = d;
	return 0;
}

#define UINT_OPT(fn, name, lo, hi)                                                     \
	static int fn(const char *cmd, const char *v, void *dst)                       \
	{                                                                              \
		double d;                                                              \
		if (num_opt(cmd, name, v, lo, hi, true, &d))                           \
			return 1;                                                      \
		*(unsigned long long *)dst = (unsigned long long)d;                    \
		return 0;                                                              \
	}
UINT_OPT(top_opt, "--top", 0, 100000)
UINT_OPT(device_opt, "--device", 0, 1024)
static int period_opt(const char *cmd, const char *v, void *dst)
{
	double d;
	if (num_opt(cmd, "--period", v, 5, 31, true, &d))
		return 1;
	*(unsigned long long *)dst = (unsigned long long)d;
	return 0;
}
static int ms_opt(const char *cmd, const char *v, void *dst) { return num_opt(cmd, "--ms", v, 0, 1e5, false, dst); }
static int timeout_opt(const char *cmd, const char *v, void *dst)
{
	return num_opt(cmd, "--timeout", v, 0.001, 1e5, false, dst);
}

/* Sample on the GPU: a session on CUBIN (one input set), then PROFILE. */
static int sample(const char *cmd, const popts *o, const uint8_t *bytes, size_t size, st_profile **prof)
{
	st_error err = {0};
	st_launch *spec = NULL;
	st_session *s = NULL;
	st_runtime_options opt;
	st_runtime_options_init(&opt);
	opt.verify_sets = 1;
	opt.warmup_ms = 5;
	opt.device = (int)o->device;
	opt.timeout_s = o->timeout;
	st_status rc = st_launch_load(o->launch, &spec, &err);
	if (rc != ST_OK)
		return st_cli_fail(cmd, &err);
	rc = st_session_open(bytes, size, spec, &opt, &s, &err);
	if (rc == ST_OK)
		rc = st_session_profile(s, NULL, 0, (unsigned)o->period, o->ms, MAX_LAUNCHES, prof, &err);
	st_session_close(s);
	st_launch_free(spec);
	if (rc != ST_OK) {
		st_cli_error(cmd, "%s: %s", o->path, err.msg);
		return ST_EXIT_FAIL;
	}
	return 0;
}

/* The kernel to annotate: --kernel, the spec's, the samples', or the only kernel. */
static const char *pick_kernel(const char *cmd, const popts *o, const st_cubin *c, const st_profile *p)
{
	const char *k = o->kernel;
	if (!k && o->launch && !o->samples_in) {
		st_launch *spec = NULL;
		if (st_launch_load(o->launch, &spec, NULL) == ST_OK) {
			size_t i = st_cubin_find_kernel(c, st_launch_kernel(spec));
			k = i != ST_CUBIN_NONE ? st_cubin_kernel(c, i)->name : NULL;
		}
		st_launch_free(spec);
	}
	if (!k && st_profile_get_meta(p)->kernel[0])
		k = st_profile_get_meta(p)->kernel;
	if (!k && st_cubin_kernel_count(c) == 1)
		k = st_cubin_kernel(c, 0)->name;
	if (!k)
		st_cli_error(cmd, "%s: which kernel? (give --kernel K)", o->path);
	else if (st_cli_no_kernel(cmd, c, o->path, k))
		return NULL;
	return k;
}

static int report(const char *cmd, const popts *o, const st_cubin *c, const st_profile *p)
{
	const char *k = pick_kernel(cmd, o, c, p);
	if (!k)
		return ST_EXIT_FAIL;
	st_sass_opts so = {.listing = o->listing};
	st_sass_kernel *sk = NULL;
	st_error err = {0};
	if (st_sass_decode(c, k, &so, &sk, &err) != ST_OK)
		return st_cli_fail(cmd, &err);
	int code = ST_EXIT_OK;
	if (o->json)
		code = st_profile_report_json(p, sk, (unsigned)o->top) ? ST_EXIT_FAIL : ST_EXIT_OK;
	else
		st_profile_report_text(p, sk, (unsigned)o->top);
	st_sass_free(sk);
	return code;
}

int st_cmd_profile(int argc, char **argv)
{
	const char *cmd = argv[0];
	popts o = {.top = 10, .ms = 100, .timeout = 5};
	const st_cli_opt opts[] = {
		ST_OPT_STR("--launch", &o.launch), ST_OPT_STR("--kernel", &o.kernel),
		ST_OPT_STR("--samples-in", &o.samples_in), ST_OPT_STR("--samples-out", &o.samples_out),
		ST_OPT_STR("--listing", &o.listing), ST_OPT_FLAG("--json", &o.json),
		ST_OPT_FN("--top", top_opt, &o.top), ST_OPT_FN("--period", period_opt, &o.period),
		ST_OPT_FN("--device", device_opt, &o.device), ST_OPT_FN("--ms", ms_opt, &o.ms),
		ST_OPT_FN("--timeout", timeout_opt, &o.timeout), ST_OPT_END,
	};
	const st_cli_need need[] = {{&o.path, "CUBIN"}, {0}};
	int code = st_cli_parse(argc, argv, &(st_cli_args){.usage = usage, .opts = opts, .file = &o.path, .need = need});
	if (code >= 0)
		return code;
	if (!o.launch && !o.samples_in) {
		st_cli_error(cmd, "missing --launch FILE (or --samples-in FILE) (see sasstune %s --help)", cmd);
		return ST_EXIT_USAGE;
	}
	st_error err = {0};
	uint8_t *bytes = NULL;
	size_t size = 0;
	st_cubin *c = NULL;
	st_profile *p = NULL;
	if (st_read_file(o.path, &bytes, &size, &err) != ST_OK || st_cubin_open_mem(bytes, size, o.path, &c, &err) != ST_OK)
		code = st_cli_fail(cmd, &err);
	else if (o.samples_in && st_profile_load(o.samples_in, &p, &err) != ST_OK)
		code = st_cli_fail(cmd, &err);
	else if (!o.samples_in)
		code = sample(cmd, &o, bytes, size, &p);
	if (code < 0 || code == 0) {
		char *text = o.samples_out ? st_profile_to_json(p) : NULL;
		if (o.samples_out && (!text || st_write_file_atomic(o.samples_out, text, strlen(text), &err) != ST_OK))
			code = text ? st_cli_fail(cmd, &err) : (st_cli_error(cmd, "out of memory"), ST_EXIT_FAIL);
		else
			code = report(cmd, &o, c, p);
		free(text);
	}
	st_profile_free(p);
	st_cubin_free(c);
	free(bytes);
	return code;
}
