/* Finding nvdisasm without Python: an explicit path, SASSTUNE_NVDISASM, the folder of the ptxas that
 * built the cubin, TRITON_PTXAS_PATH's folder, $CUDA_HOME/bin, the nvdisasm Triton bundles in a
 * site-packages folder next to a python on PATH (or in the active venv, conda env, pyenv or
 * ~/.local), then PATH itself.  Each step is a stat() or a glob(); nothing is run (docs/sass.md). */
#include "sass_internal.h"

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TRITON_BIN "triton/backends/nvidia/bin/nvdisasm"

static int is_exec(const char *p)
{
	struct stat st;
	return p && *p && stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}

/* *out = dir/name when that is an executable file.  Returns ST_OK whether found or not
 * (found: *out set), ST_ENOMEM only when out of memory. */
static st_status try_file(const char *dir, size_t dirlen, const char *name, char **out, st_error *err)
{
	size_t n = dirlen + strlen(name) + 2;
	char *p = malloc(n);
	if (!p)
		return st_error_set(err, ST_ENOMEM, "nvdisasm: out of memory");
	snprintf(p, n, "%.*s/%s", (int)dirlen, dir, name);
	if (is_exec(p))
		*out = p;
	else
		free(p);
	return ST_OK;
}

/* The first executable match of each pattern under prefix (sorted, so the choice is stable). */
static st_status try_glob(const char *prefix, size_t plen, char **out, st_error *err)
{
	static const char *const pats[] = {
		"lib/python3*/site-packages/" TRITON_BIN,          "lib/python3*/dist-packages/" TRITON_BIN,
		"local/lib/python3*/dist-packages/" TRITON_BIN,    "versions/*/lib/python3*/site-packages/" TRITON_BIN,
		"lib64/python3*/site-packages/" TRITON_BIN,
	};
	for (size_t i = 0; i < sizeof pats / sizeof *pats && !*out; i++) {
		char pat[4200];
		if (plen + strlen(pats[i]) + 2 > sizeof pat)
			return ST_OK;
		snprintf(pat, sizeof pat, "%.*s/%s", (int)plen, prefix, pats[i]);
		glob_t g;
		if (glob(pat, 0, NULL, &g) == 0) {
			for (size_t j = 0; j < g.gl_pathc && !*out; j++)
				if (is_exec(g.gl_pathv[j]) && !(*out = strdup(g.gl_pathv[j]))) {
					globfree(&g);
					return st_error_set(err, ST_ENOMEM, "nvdisasm: out of memory");
				}
		}
		globfree(&g);
	}
	return ST_OK;
}

/* Triton's bundled nvdisasm: under the active venv/conda env, the prefix of each PATH folder that
 * holds a python3 (a venv's bin/.., /usr/local, pyenv's shims/..), ~/.local and /usr. */
static st_status find_triton(char **out, st_error *err)
{
	st_status rc = ST_OK;
	const char *envs[] = {getenv("VIRTUAL_ENV"), getenv("CONDA_PREFIX")};
	for (size_t i = 0; i < 2 && !*out && rc == ST_OK; i++)
		if (envs[i] && *envs[i])
			rc = try_glob(envs[i], strlen(envs[i]), out, err);
	const char *path = getenv("PATH");
	while (path && *path && !*out && rc == ST_OK) {
		const char *colon = strchr(path, ':');
		size_t len = colon ? (size_t)(colon - path) : strlen(path);
		char *py = NULL;
		if (len && (rc = try_file(path, len, "python3", &py, err)) == ST_OK && py) {
			free(py);
			size_t plen = len;
			while (plen > 1 && path[plen - 1] == '/')
				plen--;
			while (plen > 0 && path[plen - 1] != '/')
				plen--; /* dirname: the prefix of <prefix>/bin */
			if (plen > 1)
				plen--;
			if (plen)
				rc = try_glob(path, plen, out, err);
		}
		path = colon ? colon + 1 : NULL;
	}
	const char *home = getenv("HOME");
	if (home && *home && !*out && rc == ST_OK) {
		char local[4200];
		snprintf(local, sizeof local, "%s/.local", home);
		rc = try_glob(local, strlen(local), out, err);
	}
	if (!*out && rc == ST_OK)
		rc = try_glob("/usr", 4, out, err);
	return rc;
}

/* The folder part of a file path (its length), 0 when it has none. */
static size_t dir_len(const char *file)
{
	const char *slash = strrchr(file, '/');
	return slash ? (size_t)(slash - file) + (slash == file) : 0;
}

st_status st_nvdisasm_find(const char *explicit_path, const char *ptxas_dir, char **out, st_error *err)
{
	*out = NULL;
	const char *env = getenv("SASSTUNE_NVDISASM");
	const char *first = explicit_path && *explicit_path ? explicit_path : env && *env ? env : NULL;
	if (first) {
		if (!is_exec(first))
			return st_error_set(err, ST_ENOTFOUND, "nvdisasm: %s is not an executable file%s", first,
					    explicit_path && *explicit_path ? "" : " (from SASSTUNE_NVDISASM)");
		*out = strdup(first);
		return *out ? ST_OK : st_error_set(err, ST_ENOMEM, "nvdisasm: out of memory");
	}
	st_status rc = ST_OK;
	if (ptxas_dir && *ptxas_dir)
		rc = try_file(ptxas_dir, strlen(ptxas_dir), "nvdisasm", out, err);
	const char *tp = getenv("TRITON_PTXAS_PATH");
	if (!*out && rc == ST_OK && tp && dir_len(tp))
		rc = try_file(tp, dir_len(tp), "nvdisasm", out, err);
	const char *cuda = getenv("CUDA_HOME");
	if (!*out && rc == ST_OK && cuda && *cuda) {
		char bin[4200];
		snprintf(bin, sizeof bin, "%s/bin", cuda);
		rc = try_file(bin, strlen(bin), "nvdisasm", out, err);
	}
	if (!*out && rc == ST_OK)
		rc = find_triton(out, err);
	const char *path = getenv("PATH");
	while (path && *path && !*out && rc == ST_OK) {
		const char *colon = strchr(path, ':');
		size_t len = colon ? (size_t)(colon - path) : strlen(path);
		if (len)
			rc = try_file(path, len, "nvdisasm", out, err);
		path = colon ? colon + 1 : NULL;
	}
	if (rc != ST_OK || *out)
		return rc;
	return st_error_set(err, ST_ENOTFOUND,
			    "nvdisasm not found (looked in the ptxas folder, TRITON_PTXAS_PATH, CUDA_HOME, Triton's "
			    "backends/nvidia/bin next to python3, PATH; set SASSTUNE_NVDISASM or pass a listing)");
}
