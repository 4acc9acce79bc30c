/* The variants stage for the commands: options, Triton's ptxas, the run and the table. */
#include "variants_cli.h"
#include "util/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char st_vcli_options_help[] =
	"  --ptxas P       another ptxas binary to try (repeatable)\n"
	"  --stock-ptxas P the ptxas that made the stock cubin (default: Triton's bundled ptxas, found\n"
	"                  through $TRITON_PTXAS_PATH or python3; 'none': unknown, no PTX check)\n"
	"  --options \"O\"   the options that made the stock cubin (default \"-lineinfo\"; a --gpu-name\n"
	"                  is added when they name none: sm_90a for an sm_90 cubin)\n"
	"  --controls F    a ptxas advanced-controls file (e.g. from CompileIQ; repeatable): one more\n"
	"                  variant, --apply-controls=F, per binary whose --help lists it (ptxas >= 13.3;\n"
	"                  others get a rejected row; 13.4/13.5 reject 13.3's files: a rejected row)\n"
	"  --no-discover   only --stock-ptxas and --ptxas, not $SASSTUNE_PTXAS nor the binaries next\n"
	"                  to Triton's (ptxas-blackwell, the nvidia-cuda-nvcc wheel's ptxas)\n"
	"  --jobs N        parallel ptxas runs (default: the CPUs)\n"
	"  --timeout S     seconds per ptxas run (default 120)\n"
	"  --pairs N       quick timing pairs per variant (default 100; the best is confirmed with 200)\n";

int st_vcli_ptxas_opt(const char *cmd, const char *v, void *dst)
{
	st_vcli *c = dst;
	if (c->n_ptxas == ST_VCLI_MAX_PTXAS) {
		st_cli_error(cmd, "--ptxas: at most %d binaries", ST_VCLI_MAX_PTXAS);
		return 1;
	}
	c->ptxas[c->n_ptxas++] = v;
	return 0;
}

int st_vcli_controls_opt(const char *cmd, const char *v, void *dst)
{
	st_vcli *c = dst;
	if (c->n_controls == ST_VCLI_MAX_PTXAS) {
		st_cli_error(cmd, "--controls: at most %d files", ST_VCLI_MAX_PTXAS);
		return 1;
	}
	FILE *f = *v ? fopen(v, "rb") : NULL;
	if (!f) {
		st_cli_error(cmd, "--controls: %s: %s", *v ? v : "''", *v ? strerror(errno) : "empty path");
		return 1;
	}
	fclose(f);
	c->controls[c->n_controls++] = v;
	return 0;
}

int st_vcli_count_opt(const char *cmd, const char *v, void *dst)
{
	char *end;
	errno = 0;
	unsigned long n = strtoul(v, &end, 10);
	if (!*v || *v == '-' || *end || errno || n < 1 || n > 1000000) {
		st_cli_error(cmd, "'%s' is not a count (1..1000000)", v);
		return 1;
	}
	*(unsigned *)dst = (unsigned)n;
	return 0;
}

int st_vcli_seconds_opt(const char *cmd, const char *v, void *dst)
{
	char *end;
	double s = strtod(v, &end);
	if (!*v || *end || !(s > 0) || s > 86400) {
		st_cli_error(cmd, "--timeout: '%s' is not a number of seconds (0..86400)", v);
		return 1;
	}
	*(double *)dst = s;
	return 0;
}

/* Triton's bundled ptxas: $TRITON_PTXAS_PATH, else asked of python3 without importing Triton. */
static const char *triton_ptxas(char *buf, size_t n)
{
	const char *env = getenv("TRITON_PTXAS_PATH");
	if (env && *env)
		return env;
	FILE *p = popen("python3 -c \"import importlib.util as u; s = u.find_spec('triton'); "
			"print(s.submodule_search_locations[0] if s else '')\" 2>/dev/null", "r");
	if (!p)
		return NULL;
	char dir[4096] = "";
	if (!fgets(dir, sizeof dir, p))
		dir[0] = 0;
	pclose(p);
	dir[strcspn(dir, "\n")] = 0;
	if (!dir[0])
		return NULL;
	snprintf(buf, n, "%.4000s/backends/nvidia/bin/ptxas", dir);
	return access(buf, X_OK) == 0 ? buf : NULL;
}

static void progress(void *user, const char *line)
{
	fprintf(stderr, "sasstune %s: %s\n", (const char *)user, line);
}

int st_vcli_stage(const char *cmd, const st_vcli *c, const uint8_t *stock, size_t size, const char *kernel,
		  const st_launch *spec, st_variants **out)
{
	char tbuf[4096];
	uint8_t *ptx = NULL;
	size_t ptx_len = 0;
	st_error err = {0};
	st_variants_opts o;
	st_variants_opts_init(&o);
	st_cli_runtime_env(&o.runtime); /* $SASSTUNE_CHECK_REFERENCE */
	o.ptxas = c->ptxas;
	o.n_ptxas = c->n_ptxas;
	o.controls = c->controls;
	o.n_controls = c->n_controls;
	o.discover = !c->no_discover;
	o.stock_ptxas = c->stock_ptxas ? (strcmp(c->stock_ptxas, "none") ? c->stock_ptxas : NULL) : triton_ptxas(tbuf, sizeof tbuf);
	if (!o.stock_ptxas && !stock && c->n_ptxas)
		o.stock_ptxas = c->ptxas[0]; /* no Triton: the first binary makes stock */
	o.base_options = c->options;
	if (spec) {
		unsigned grid[3], block[3], shared;
		st_launch_dims(spec, grid, block, &shared);
		o.block_threads = block[0] * block[1] * block[2];
	}
	if (c->jobs)
		o.jobs = c->jobs;
	if (c->pairs)
		o.pairs = c->pairs;
	if (c->timeout_s > 0)
		o.compile_timeout_s = c->timeout_s;
	if (!c->quiet) {
		o.progress = progress;
		o.progress_user = (void *)cmd;
	}
	*out = NULL;
	if (st_read_file(c->ptx_path, &ptx, &ptx_len, &err) ||
	    st_variants_compile((const char *)ptx, ptx_len, stock, size, kernel, &o, out, &err)) {
		free(ptx);
		return st_cli_fail(cmd, &err);
	}
	free(ptx);
	if (spec)
		st_variants_measure(*out, spec, &o, &err); /* no GPU: the set's note says so */
	return ST_EXIT_OK;
}

static const char *yes_no(int v)
{
	return v < 0 ? "-" : v ? "yes" : "no";
}

void st_vcli_print(FILE *f, const st_variants *v)
{
	fprintf(f, "%s: %zu variants\n", st_variants_kernel(v), st_variants_count(v));
	fprintf(f, "%-3s %-40s %-8s %8s %8s %5s %-8s %-26s %-9s %s\n", "#", "variant", "compiled", "time", "code",
		"regs", "verified", "speedup [95% interval]", "confirmed", "reason");
	for (size_t i = 0; i < st_variants_count(v); i++) {
		const st_variant *x = st_variants_get(v, i);
		char sp[64] = "-", t[32] = "-", code[32] = "-", regs[16] = "-";
		if (x->speedup > 0)
			snprintf(sp, sizeof sp, "%.4f [%.4f, %.4f]", x->speedup, x->speedup_lo, x->speedup_hi);
		if (x->compile_s > 0)
			snprintf(t, sizeof t, "%.2fs", x->compile_s);
		if (x->code_bytes)
			snprintf(code, sizeof code, "%zu", x->code_bytes);
		if (x->regs >= 0)
			snprintf(regs, sizeof regs, "%d", x->regs);
		fprintf(f, "%-3zu %-40s %-8s %8s %8s %5s %-8s %-26s %-9s %s\n", i, x->label, yes_no(x->compiled), t, code,
			regs, yes_no(x->verified), sp, x->confirmed ? "yes" : "-", x->reason);
	}
	const char *note = st_variants_note(v);
	size_t best = st_variants_best(v);
	if (note[0])
		fprintf(f, "%s\n", note);
	fprintf(f, "chosen: %s%s\n", st_variants_get(v, best)->label,
		best ? " (confirmed faster than stock)" : " (no variant confirmed faster)");
}

int st_vcli_tune_pick(const char *cmd, const st_vcli *c, uint8_t **cubin, size_t *size, const char *kernel,
		      const st_launch *spec, char *label, size_t labelsz)
{
	st_variants *v = NULL;
	int code = st_vcli_stage(cmd, c, *cubin, *size, kernel, spec, &v);
	if (code != ST_EXIT_OK)
		return code;
	if (!c->quiet)
		st_vcli_print(stderr, v);
	const st_variant *best = st_variants_get(v, st_variants_best(v));
	snprintf(label, labelsz, "%s", best->label);
	if (!best->stock) {
		uint8_t *copy = malloc(best->cubin_size);
		if (!copy) {
			st_variants_free(v);
			st_cli_error(cmd, "out of memory");
			return ST_EXIT_FAIL;
		}
		memcpy(copy, best->cubin, best->cubin_size);
		free(*cubin);
		*cubin = copy;
		*size = best->cubin_size;
	}
	st_variants_free(v);
	return ST_EXIT_OK;
}
