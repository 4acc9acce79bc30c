/* sasstune-cc: LLVM IR -> PTX (LLVM's NVPTX back end) -> cubin (ptxas) -> the
 * sasstune pass (libsasstune.so through its plugin ABI).  See docs/sasstune-cc.md. */
#include "cc.h"
#include "sasstune/plugin.h"
#include "sasstune/version.h"

#include <cJSON.h>

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_XPTXAS 64

struct options {
	const char *input;
	const char *output;
	const char *arch;
	const char *launch;
	const char *policy;
	const char *mode;   /* "cache-only" with --cache-only */
	const char *budget;
	bool tune;
	bool emit_ptx;
	bool no_pass;
	int opt_level;      /* -1: none given */
	char *xptxas[MAX_XPTXAS];
	size_t n_xptxas;
};

static void usage(FILE *out)
{
	char llvm[32];
	cc_llvm_version(llvm, sizeof llvm);
	fprintf(out,
		"usage: sasstune-cc KERNEL.ll -o OUT [--arch ARCH] [--tune --launch L.json] [--policy P] [options]\n"
		"\n"
		"Compiles an LLVM IR kernel (text .ll or bitcode .bc) for an NVIDIA GPU: LLVM's NVPTX back end\n"
		"(LLVM %s, through its C API) makes PTX, ptxas makes a cubin, and the sasstune pass\n"
		"(libsasstune.so, loaded with dlopen like any other flow would) reorders its SASS.  Without a\n"
		"GPU the pass applies cached schedules or a policy; tuning needs a GPU.\n"
		"\n"
		"options:\n"
		"  -o OUT           write the cubin (the PTX with --emit-ptx) to OUT; \"-\" is stdout\n"
		"  --arch ARCH      target GPU (default sm_90): %s\n"
		"  --emit-ptx       stop after PTX (no ptxas, no pass)\n"
		"  --no-pass        stop after ptxas (do not load the plugin)\n"
		"  --tune           on a cache miss, search for a faster schedule on the GPU (needs --launch)\n"
		"  --launch L.json  the kernel's launch spec (as for sasstune run --launch), given to the pass\n"
		"  --budget B       the tuning budget, e.g. 5m (with --tune)\n"
		"  --policy P       on a cache miss, apply the learned policy file P (no GPU needed)\n"
		"  --cache-only     only apply a cached schedule: the default unless SASSTUNE_MODE is set\n"
		"  -O0 .. -O3       run LLVM's default<On> IR pipeline and code generation at that level\n"
		"                   (default: the IR as given, code generation at -O2, like llc)\n"
		"  -Xptxas OPT      pass OPT to ptxas (repeatable), e.g. -Xptxas -lineinfo\n"
		"  -v               print each step: LLVM version, ptxas path and version, plugin and its message\n"
		"  -h, --help       this text\n"
		"  --version        sasstune-cc's version\n"
		"\n"
		"environment:\n"
		"  SASSTUNE_PTXAS   the ptxas to run; else $CUDA_HOME/bin/ptxas, else ptxas on PATH\n"
		"  SASSTUNE_PLUGIN  the libsasstune.so to load; else the one next to sasstune-cc (or in\n"
		"                   ../lib), else the dynamic loader's search path\n"
		"  SASSTUNE_CACHE_DIR  the schedule cache the pass uses (see docs/cache.md)\n"
		"  SASSTUNE_MODE    the pass's mode (tune, policy, cache-only) when no flag sets it\n"
		"\n"
		"exit status: 0 done (also when the pass left the cubin unchanged), 1 failure, 2 usage\n",
		llvm, cc_arch_list());
}

static int usage_error(const char *fmt, const char *arg)
{
	fputs("sasstune-cc: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs(" (see sasstune-cc --help)\n", stderr);
	return CC_EXIT_USAGE;
}

static int parse_args(int argc, char **argv, struct options *o)
{
	memset(o, 0, sizeof *o);
	o->opt_level = -1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
#define NEED_VALUE()                                                              \
	do {                                                                      \
		if (i + 1 >= argc)                                                \
			return usage_error("%s needs a value", a);                \
	} while (0)
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return -1;
		} else if (!strcmp(a, "--version")) {
			printf("sasstune-cc %s\n", ST_VERSION_STRING);
			return -1;
		} else if (!strcmp(a, "-o")) {
			NEED_VALUE();
			o->output = argv[++i];
		} else if (!strcmp(a, "--arch")) {
			NEED_VALUE();
			o->arch = argv[++i];
		} else if (!strncmp(a, "--arch=", 7)) {
			o->arch = a + 7;
		} else if (!strcmp(a, "--launch")) {
			NEED_VALUE();
			o->launch = argv[++i];
		} else if (!strcmp(a, "--policy")) {
			NEED_VALUE();
			o->policy = argv[++i];
		} else if (!strcmp(a, "--budget")) {
			NEED_VALUE();
			o->budget = argv[++i];
		} else if (!strcmp(a, "--tune")) {
			o->tune = true;
		} else if (!strcmp(a, "--cache-only")) {
			o->mode = "cache-only";
		} else if (!strcmp(a, "--emit-ptx")) {
			o->emit_ptx = true;
		} else if (!strcmp(a, "--no-pass")) {
			o->no_pass = true;
		} else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			cc_verbose = true;
		} else if (a[0] == '-' && a[1] == 'O' && a[2] >= '0' && a[2] <= '3' && !a[3]) {
			o->opt_level = a[2] - '0';
		} else if (!strcmp(a, "-Xptxas")) {
			NEED_VALUE();
			if (o->n_xptxas == MAX_XPTXAS)
				return usage_error("too many -Xptxas options%s", "");
			o->xptxas[o->n_xptxas++] = argv[++i];
		} else if (a[0] == '-' && a[1]) {
			return usage_error("unknown option '%s'", a);
		} else if (o->input) {
			return usage_error("more than one input file ('%s')", a);
		} else {
			o->input = a;
		}
#undef NEED_VALUE
	}
	if (!o->input)
		return usage_error("no input file%s", "");
	if (!o->output)
		return usage_error("no output file: give -o OUT%s", "");
	if (!o->output[0] || !o->input[0])
		return usage_error("empty file name%s", "");
	if (!o->arch)
		o->arch = "sm_90";
	if (!cc_arch_supported(o->arch)) {
		fprintf(stderr, "sasstune-cc: unknown arch '%s' (supported: %s)\n", o->arch, cc_arch_list());
		return CC_EXIT_USAGE;
	}
	if (o->tune && !o->launch)
		return usage_error("--tune needs --launch L.json%s", "");
	if (o->budget && !o->tune)
		return usage_error("--budget only goes with --tune%s", "");
	if (o->tune && o->policy)
		return usage_error("--tune and --policy contradict each other%s", "");
	if (o->tune && o->mode)
		return usage_error("--tune and --cache-only contradict each other%s", "");
	if (o->policy && o->mode)
		return usage_error("--policy and --cache-only contradict each other%s", "");
	if (o->emit_ptx && o->no_pass)
		return usage_error("--emit-ptx already skips the pass: drop --no-pass%s", "");
	if (o->emit_ptx && (o->tune || o->launch || o->policy || o->mode))
		return usage_error("--emit-ptx stops before the pass: it takes no pass options%s", "");
	if (o->no_pass && (o->tune || o->launch || o->policy || o->mode))
		return usage_error("--no-pass skips the pass: it takes no pass options%s", "");
	return 0;
}

/* ---- output ----------------------------------------------------------------- */

static int write_output(const char *path, const void *data, size_t size)
{
	if (!strcmp(path, "-")) {
		if (fwrite(data, 1, size, stdout) != size || fflush(stdout) != 0) {
			cc_msg("cannot write to stdout: %s", strerror(errno));
			return CC_EXIT_FAIL;
		}
		return CC_EXIT_OK;
	}
	st_error err = {0};
	if (st_write_file_atomic(path, data, size, &err) != ST_OK) {
		cc_msg("%s", err.msg);
		return CC_EXIT_FAIL;
	}
	return CC_EXIT_OK;
}

/* ---- temporary folder for ptxas --------------------------------------------- */

struct tmpdir {
	char dir[4096];
	char ptx[4400];
	char cubin[4400];
};

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static st_status tmpdir_make(struct tmpdir *t, const char *input, st_error *err)
{
	memset(t, 0, sizeof *t);
	const char *tmp = getenv("TMPDIR");
	if (!tmp || !*tmp)
		tmp = "/tmp";
	int n = snprintf(t->dir, sizeof t->dir, "%s/sasstune-cc.XXXXXX", tmp);
	if (n < 0 || (size_t)n >= sizeof t->dir)
		return st_error_set(err, ST_EINVAL, "TMPDIR is too long");
	if (!mkdtemp(t->dir)) {
		st_status rc = st_error_set(err, ST_EIO, "cannot create a temporary folder in %s: %s", tmp,
					    strerror(errno));
		t->dir[0] = 0;
		return rc;
	}
	/* name the PTX after the input so that ptxas's messages point at something familiar */
	char stem[256];
	snprintf(stem, sizeof stem, "%s", base_name(input));
	char *dot = strrchr(stem, '.');
	if (dot && dot != stem)
		*dot = 0;
	for (char *p = stem; *p; p++)
		if (*p == '/' || (unsigned char)*p < 0x20)
			*p = '_';
	snprintf(t->ptx, sizeof t->ptx, "%s/%s.ptx", t->dir, stem[0] ? stem : "kernel");
	snprintf(t->cubin, sizeof t->cubin, "%s/%s.cubin", t->dir, stem[0] ? stem : "kernel");
	return ST_OK;
}

static void tmpdir_remove(struct tmpdir *t)
{
	if (!t->dir[0])
		return;
	unlink(t->ptx);
	unlink(t->cubin);
	rmdir(t->dir);
	t->dir[0] = 0;
}

/* ---- the pass ----------------------------------------------------------------- */

static const char *status_name(st_plugin_status s)
{
	switch (s) {
	case ST_PLUGIN_TUNED: return "TUNED";
	case ST_PLUGIN_CACHED: return "CACHED";
	case ST_PLUGIN_POLICY: return "POLICY";
	case ST_PLUGIN_UNCHANGED: return "UNCHANGED";
	case ST_PLUGIN_ERROR: return "ERROR";
	}
	return "?";
}

/* options_json for the pass (keys: see plugin/pass/pass_internal.h): the mode
 * from the command line.  With no mode flag sasstune-cc does not tune (tuning
 * needs --tune and a launch spec): it asks for cache-only, unless SASSTUNE_MODE
 * in the environment says otherwise. */
static char *options_json(const struct options *o)
{
	cJSON *root = cJSON_CreateObject();
	if (!root)
		return NULL;
	const char *env_mode = getenv("SASSTUNE_MODE");
	const char *mode = o->tune ? "tune" : o->policy ? "policy" : o->mode ? o->mode
			 : env_mode && *env_mode ? NULL : "cache-only";
	bool ok = true;
	if (mode)
		ok = ok && cJSON_AddStringToObject(root, "mode", mode);
	if (o->policy)
		ok = ok && cJSON_AddStringToObject(root, "policy", o->policy);
	if (o->budget)
		ok = ok && cJSON_AddStringToObject(root, "budget", o->budget);
	char *text = ok ? cJSON_PrintUnformatted(root) : NULL;
	cJSON_Delete(root);
	return text;
}

/* Is there a CUDA driver at all?  (The pass finds out whether a GPU answers.) */
static bool have_cuda_driver(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
	if (!h)
		return false;
	dlclose(h);
	return true;
}

/* The options ptxas got, as one string: "-arch=ARCH" and every -Xptxas, space-separated. */
static char *ptxas_options(const struct options *o)
{
	size_t n = strlen(o->arch) + 8;
	for (size_t i = 0; i < o->n_xptxas; i++)
		n += strlen(o->xptxas[i]) + 1;
	char *s = malloc(n);
	if (!s)
		return NULL;
	size_t used = (size_t)snprintf(s, n, "-arch=%s", o->arch);
	for (size_t i = 0; i < o->n_xptxas; i++)
		used += (size_t)snprintf(s + used, n - used, " %s", o->xptxas[i]);
	return s;
}

/* One kernel through the pass: run2 (API 2) with how the cubin was made, else run.  The PTX
 * goes only with a single-kernel PTX: a variant recompiles the whole PTX, and the others'
 * kernels would be neither verified nor the ones already tuned. */
static int run_one(const cc_plugin *pl, const cc_ptx *ptx, const cc_ptxas *px, const char *opts,
		   const st_plugin_kernel *kin, const uint8_t *cubin, size_t size, st_plugin_result *res)
{
	if (pl->info->api_version < 2)
		return pl->info->run(cubin, size, kin, res);
	st_plugin_kernel2 k2 = {.v1 = *kin, .size = sizeof k2, .ptxas_path = px->path, .ptxas_options = opts,
				.ptx = ptx->n_kernels == 1 ? ptx->ptx : NULL};
	cc_log("pass record: kernel %s, arch %s, ptxas %s (%s), options \"%s\", ptx %s", kin->kernel, kin->arch,
	       px->path, kin->ptxas_version ? kin->ptxas_version : "?", opts ? opts : "",
	       k2.ptx ? "given" : "not given (more than one kernel)");
	return pl->info->run2(cubin, size, &k2, res);
}

static int run_pass(const struct options *o, const cc_ptx *ptx, const cc_ptxas *px, uint8_t **cubin,
		    size_t *cubin_size)
{
	const char *ptxas_version = px->version;
	char *launch = NULL;
	size_t launch_len = 0;
	st_error err = {0};
	if (o->launch) {
		if (st_read_file(o->launch, (uint8_t **)&launch, &launch_len, &err) != ST_OK) {
			cc_msg("cannot read the launch spec: %s", err.msg);
			return CC_EXIT_FAIL;
		}
		cJSON *j = cJSON_ParseWithLength(launch, launch_len);
		bool obj = j && cJSON_IsObject(j);
		cJSON_Delete(j);
		if (!obj) {
			cc_msg("%s: the launch spec is not a JSON object", o->launch);
			free(launch);
			return CC_EXIT_FAIL;
		}
	}
	if (o->policy) {
		struct stat st;
		int e = stat(o->policy, &st) != 0 ? errno : 0;
		if (e || !S_ISREG(st.st_mode) || access(o->policy, R_OK) != 0) {
			cc_msg("%s: cannot read the policy: %s", o->policy,
			       e ? strerror(e) : !S_ISREG(st.st_mode) ? "not a file" : strerror(errno));
			free(launch);
			return CC_EXIT_FAIL;
		}
	}

	cc_plugin pl;
	if (cc_plugin_load(&pl, &err) != ST_OK) {
		cc_msg("%s", err.msg);
		free(launch);
		return CC_EXIT_FAIL;
	}
	cc_log("plugin: %s %s, API %u, stage %s", pl.info->name ? pl.info->name : "?",
	       pl.info->version ? pl.info->version : "?", (unsigned)pl.info->api_version,
	       pl.info->stage ? pl.info->stage : "?");
	if (o->tune && !have_cuda_driver())
		cc_msg("note: no CUDA driver here (libcuda.so.1 is missing): tuning needs a GPU; the pass can only "
		       "apply cached schedules or a policy");

	char *opts = options_json(o), *xopts = ptxas_options(o);
	if (!opts || !xopts) {
		free(opts);
		cc_msg("out of memory");
		cc_plugin_unload(&pl);
		free(launch);
		return CC_EXIT_FAIL;
	}
	cc_log("pass options_json: %s", opts);
	int rc = CC_EXIT_OK;
	/* One run per kernel; each run starts from the previous one's cubin. */
	for (size_t k = 0; k < ptx->n_kernels && rc == CC_EXIT_OK; k++) {
		st_plugin_kernel kin = {
			.kernel = ptx->kernels[k],
			.arch = o->arch,
			.ptxas_version = ptxas_version,
			.launch_json = launch,
			.options_json = opts,
		};
		st_plugin_result res;
		memset(&res, 0, sizeof res);
		if (run_one(&pl, ptx, px, xopts, &kin, *cubin, *cubin_size, &res) != 0) {
			cc_msg("the pass rejected its arguments for kernel %s", ptx->kernels[k]);
			pl.info->free_result(&res);
			rc = CC_EXIT_FAIL;
			break;
		}
		char raw[sizeof res.message + 1], line[sizeof res.message + 1];
		memcpy(raw, res.message, sizeof res.message);
		raw[sizeof res.message] = 0;
		cc_first_line(raw, line, sizeof line);
		const char *name = status_name(res.status);
		if (res.status == ST_PLUGIN_ERROR)
			cc_msg("warning: the pass failed on %s, its cubin is unchanged: %s", ptx->kernels[k], line);
		else if (o->tune && res.status == ST_PLUGIN_UNCHANGED)
			cc_msg("%s not tuned (%s): %s", ptx->kernels[k], name, line);
		else
			cc_log("pass %s: %s: %s", ptx->kernels[k], name, line);

		if (res.cubin && res.cubin_size) {
			uint8_t *copy = malloc(res.cubin_size);
			if (!copy) {
				cc_msg("out of memory");
				rc = CC_EXIT_FAIL;
			} else {
				memcpy(copy, res.cubin, res.cubin_size);
				free(*cubin);
				*cubin = copy;
				*cubin_size = res.cubin_size;
			}
		} else if (res.status != ST_PLUGIN_ERROR) {
			cc_msg("the pass returned no cubin for %s (status %s)", ptx->kernels[k], name);
			rc = CC_EXIT_FAIL;
		}
		pl.info->free_result(&res);
	}
	free(opts);
	free(xopts);
	cc_plugin_unload(&pl);
	free(launch);
	return rc;
}

/* ---- main ----------------------------------------------------------------------- */

int main(int argc, char **argv)
{
	struct options o;
	int prc = parse_args(argc, argv, &o);
	if (prc < 0)
		return CC_EXIT_OK;
	if (prc > 0)
		return prc;

	char llvm[32];
	cc_llvm_version(llvm, sizeof llvm);
	cc_log("LLVM %s (NVPTX back end, C API), arch %s", llvm, o.arch);

	st_error err = {0};
	uint8_t *ir = NULL;
	size_t ir_len = 0;
	struct stat st_in;
	if (stat(o.input, &st_in) == 0 && S_ISDIR(st_in.st_mode)) {
		cc_msg("cannot read the input: %s: is a folder", o.input);
		return CC_EXIT_FAIL;
	}
	if (st_read_file(o.input, &ir, &ir_len, &err) != ST_OK) {
		cc_msg("cannot read the input: %s", err.msg);
		return CC_EXIT_FAIL;
	}
	cc_ptx ptx;
	st_status st = cc_compile_ir(o.input, ir, ir_len, o.arch, o.opt_level, &ptx, &err);
	free(ir);
	if (st != ST_OK) {
		cc_msg("%s", err.msg);
		return CC_EXIT_FAIL;
	}
	if (cc_verbose) {
		fprintf(stderr, "sasstune-cc: PTX %s, %zu bytes, kernel%s:", ptx.ptx_version, ptx.ptx_len,
			ptx.n_kernels == 1 ? "" : "s");
		for (size_t i = 0; i < ptx.n_kernels; i++)
			fprintf(stderr, " %s", ptx.kernels[i]);
		fputc('\n', stderr);
	}
	if (o.emit_ptx) {
		int rc = write_output(o.output, ptx.ptx, ptx.ptx_len);
		cc_ptx_free(&ptx);
		return rc;
	}

	cc_ptxas px;
	if (cc_ptxas_find(&px, &err) != ST_OK) {
		cc_msg("%s", err.msg);
		cc_ptx_free(&ptx);
		return CC_EXIT_FAIL;
	}
	cc_log("ptxas: %s (found by %s), version %s", px.path, px.found_by, px.version);

	struct tmpdir t;
	uint8_t *cubin = NULL;
	size_t cubin_size = 0;
	int rc = CC_EXIT_FAIL;
	if (tmpdir_make(&t, o.input, &err) != ST_OK) {
		cc_msg("%s", err.msg);
		goto out;
	}
	if (st_write_file_atomic(t.ptx, ptx.ptx, ptx.ptx_len, &err) != ST_OK) {
		cc_msg("%s", err.msg);
		goto out;
	}
	if (cc_ptxas_run(&px, t.ptx, t.cubin, o.arch, o.xptxas, o.n_xptxas, &err) != ST_OK) {
		cc_msg("%s: %s", o.input, err.msg);
		goto out;
	}
	if (st_read_file(t.cubin, &cubin, &cubin_size, &err) != ST_OK) {
		cc_msg("ptxas wrote no cubin: %s", err.msg);
		goto out;
	}
	cc_log("cubin: %zu bytes", cubin_size);
	if (o.no_pass) {
		cc_log("pass: skipped (--no-pass)");
	} else if ((rc = run_pass(&o, &ptx, &px, &cubin, &cubin_size)) != CC_EXIT_OK) {
		goto out;
	}
	rc = write_output(o.output, cubin, cubin_size);
	if (rc == CC_EXIT_OK)
		cc_log("wrote %s (%zu bytes)", o.output, cubin_size);
out:
	tmpdir_remove(&t);
	free(cubin);
	cc_ptx_free(&ptx);
	return rc;
}
