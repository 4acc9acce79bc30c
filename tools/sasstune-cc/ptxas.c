/* sasstune-cc: finding and running ptxas (fork/exec, no shell). */
#include "cc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ptxas on a large kernel can take a while; a hang is still a failure. */
#define CC_PTXAS_TIMEOUT_S 600

static bool is_executable_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

static bool set_path(cc_ptxas *px, const char *dir, const char *name)
{
	int n = snprintf(px->path, sizeof px->path, "%s%s%s", dir, dir[0] && dir[strlen(dir) - 1] != '/' ? "/" : "",
			 name);
	return n > 0 && (size_t)n < sizeof px->path && is_executable_file(px->path);
}

static bool search_path(cc_ptxas *px)
{
	const char *env = getenv("PATH");
	if (!env || !*env)
		return false;
	char *copy = strdup(env);
	if (!copy)
		return false;
	bool found = false;
	char *save = NULL;
	for (char *dir = strtok_r(copy, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save))
		found = set_path(px, *dir ? dir : ".", "ptxas");
	free(copy);
	return found;
}

/* "Cuda compilation tools, release 12.8, V12.8.93" -> "12.8.93" */
static void parse_version(const char *text, char *out, size_t max)
{
	out[0] = 0;
	const char *p = text;
	while (p && (p = strstr(p, ", V")) != NULL) {
		p += 3;
		size_t n = strspn(p, "0123456789.");
		if (n > 0) {
			if (n >= max)
				n = max - 1;
			memcpy(out, p, n);
			out[n] = 0;
			return;
		}
	}
}

st_status cc_ptxas_find(cc_ptxas *px, st_error *err)
{
	memset(px, 0, sizeof *px);
	const char *env = getenv("SASSTUNE_PTXAS");
	const char *home = getenv("CUDA_HOME");
	if (env && *env) {
		px->found_by = "SASSTUNE_PTXAS";
		if (strlen(env) >= sizeof px->path)
			return st_error_set(err, ST_EINVAL, "SASSTUNE_PTXAS is too long");
		snprintf(px->path, sizeof px->path, "%s", env);
		if (!is_executable_file(px->path))
			return st_error_set(err, ST_ENOTFOUND, "ptxas not found: SASSTUNE_PTXAS=%s is not an executable file",
					    env);
	} else if (home && *home && set_path(px, home, "bin/ptxas")) {
		px->found_by = "CUDA_HOME";
	} else if (search_path(px)) {
		px->found_by = "PATH";
	} else {
		return st_error_set(err, ST_ENOTFOUND,
				    "ptxas not found: set SASSTUNE_PTXAS or CUDA_HOME, or put ptxas on PATH");
	}

	char *argv[] = {px->path, "--version", NULL};
	cc_proc_result res;
	st_status rc = cc_run_tool(argv, 60, &res, err);
	if (rc != ST_OK)
		return st_error_wrap(err, "ptxas (from %s)", px->found_by), rc;
	if (res.exit_code || res.signal || res.timed_out) {
		char line[300];
		cc_first_line(res.err.len ? (char *)res.err.data : (char *)res.out.data, line, sizeof line);
		rc = st_error_set(err, ST_ETOOL, "%s --version failed (exit %d%s): %s", px->path, res.exit_code,
				  res.signal ? ", killed by a signal" : res.timed_out ? ", timed out" : "", line);
	} else {
		parse_version(res.out.len ? (char *)res.out.data : "", px->version, sizeof px->version);
		if (!px->version[0])
			rc = st_error_set(err, ST_ETOOL, "%s does not look like ptxas: no version in its --version output",
					  px->path);
	}
	cc_proc_result_free(&res);
	return rc;
}

st_status cc_ptxas_run(const cc_ptxas *px, const char *ptx_path, const char *cubin_path,
		       const char *arch, char *const *extra, size_t n_extra, st_error *err)
{
	char arch_opt[64];
	snprintf(arch_opt, sizeof arch_opt, "-arch=%s", arch);
	size_t argc = 0;
	char **argv = calloc(n_extra + 8, sizeof *argv);
	if (!argv)
		return st_error_set(err, ST_ENOMEM, "out of memory");
	argv[argc++] = (char *)px->path;
	argv[argc++] = arch_opt;
	for (size_t i = 0; i < n_extra; i++)
		argv[argc++] = extra[i];
	argv[argc++] = "-o";
	argv[argc++] = (char *)cubin_path;
	argv[argc++] = (char *)ptx_path;
	argv[argc] = NULL;
	if (cc_verbose) {
		fputs("sasstune-cc: run:", stderr);
		for (size_t i = 0; i < argc; i++)
			fprintf(stderr, " %s", argv[i]);
		fputc('\n', stderr);
	}

	cc_proc_result res;
	st_status rc = cc_run_tool(argv, CC_PTXAS_TIMEOUT_S, &res, err);
	free(argv);
	if (rc != ST_OK)
		return rc;
	if (res.err.len && (res.exit_code || res.signal || res.timed_out || cc_verbose)) {
		/* ptxas's own words, as it said them */
		fwrite(res.err.data, 1, res.err.len, stderr);
		if (res.err.data[res.err.len - 1] != '\n')
			fputc('\n', stderr);
	}
	if (res.timed_out)
		rc = st_error_set(err, ST_ETIMEOUT, "ptxas timed out after %d s", CC_PTXAS_TIMEOUT_S);
	else if (res.signal)
		rc = st_error_set(err, ST_ETOOL, "ptxas was killed by signal %d", res.signal);
	else if (res.exit_code) {
		char line[300];
		cc_first_line(res.err.len ? (char *)res.err.data : "", line, sizeof line);
		rc = st_error_set(err, ST_ETOOL, "ptxas failed (exit status %d)%s%s", res.exit_code,
				  line[0] ? ": " : "", line);
	}
	cc_proc_result_free(&res);
	return rc;
}
