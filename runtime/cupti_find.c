/* Finding libcupti for the worker (docs/profile.md): an explicit $SASSTUNE_CUPTI, the CUDA
 * toolkit ($CUDA_HOME, /usr/local/cuda), the pip wheels (cu13: nvidia/cu13/lib, cu12:
 * nvidia/cuda_cupti/lib) and Triton's bundled copy under a python prefix, then the sonames. */
#include "cupti.h"

#include <dlfcn.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const wheel_pats[] = {
	"lib/python3*/site-packages/nvidia/cu13/lib/libcupti.so*",
	"lib/python3*/site-packages/nvidia/cuda_cupti/lib/libcupti.so*",
	"lib/python3*/site-packages/triton/backends/nvidia/lib/cupti/libcupti.so*",
	"local/lib/python3*/dist-packages/nvidia/cu13/lib/libcupti.so*",
	"local/lib/python3*/dist-packages/nvidia/cuda_cupti/lib/libcupti.so*",
	"versions/*/lib/python3*/site-packages/nvidia/cu13/lib/libcupti.so*",
	"versions/*/lib/python3*/site-packages/nvidia/cuda_cupti/lib/libcupti.so*",
	"versions/*/lib/python3*/site-packages/triton/backends/nvidia/lib/cupti/libcupti.so*",
};

/* dlopen the first match of pattern (sorted); *lib and *path set when one loads. */
static void try_pattern(const char *pat, void **lib, char **path)
{
	glob_t g;
	if (glob(pat, 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc && !*lib; i++) {
			*lib = dlopen(g.gl_pathv[i], RTLD_NOW | RTLD_LOCAL);
			if (*lib && !(*path = strdup(g.gl_pathv[i]))) {
				dlclose(*lib);
				*lib = NULL;
			}
		}
	}
	globfree(&g);
}

static void try_prefix(const char *prefix, size_t len, void **lib, char **path)
{
	for (size_t i = 0; i < sizeof wheel_pats / sizeof *wheel_pats && !*lib; i++) {
		char pat[4300];
		int w = snprintf(pat, sizeof pat, "%.*s/%s", (int)len, prefix, wheel_pats[i]);
		if (w < 0 || (size_t)w >= sizeof pat)
			return; /* a prefix this long holds no wheel we could name */
		try_pattern(pat, lib, path);
	}
}

/* Prefixes of python installs: the active venv/conda env, each PATH folder's parent, ~/.local. */
static void try_pythons(void **lib, char **path)
{
	const char *envs[] = {getenv("VIRTUAL_ENV"), getenv("CONDA_PREFIX")};
	for (size_t i = 0; i < 2 && !*lib; i++)
		if (envs[i] && *envs[i])
			try_prefix(envs[i], strlen(envs[i]), lib, path);
	const char *p = getenv("PATH");
	while (p && *p && !*lib) {
		const char *colon = strchr(p, ':');
		size_t len = colon ? (size_t)(colon - p) : strlen(p);
		while (len > 1 && p[len - 1] == '/')
			len--;
		size_t plen = len;
		while (plen > 0 && p[plen - 1] != '/')
			plen--; /* <prefix>/bin -> <prefix> */
		if (plen > 1)
			try_prefix(p, plen - 1, lib, path);
		p = colon ? colon + 1 : NULL;
	}
	const char *home = getenv("HOME");
	if (home && *home && !*lib) {
		char local[4200];
		snprintf(local, sizeof local, "%s/.local", home);
		try_prefix(local, strlen(local), lib, path);
	}
}

st_status st_cupti_find_and_open(void **lib, char **path, st_error *err)
{
	*lib = NULL;
	*path = NULL;
	const char *env = getenv("SASSTUNE_CUPTI");
	if (env && *env) {
		if (!(*lib = dlopen(env, RTLD_NOW | RTLD_LOCAL))) {
			const char *why = dlerror();
			return st_error_set(err, ST_ENOTFOUND, "cannot load CUPTI %s (from SASSTUNE_CUPTI): %s", env,
					    why ? why : "unknown error");
		}
		*path = strdup(env);
		return *path ? ST_OK : st_error_set(err, ST_ENOMEM, "out of memory");
	}
	const char *homes[] = {getenv("CUDA_HOME"), "/usr/local/cuda"};
	for (size_t i = 0; i < 2 && !*lib; i++) {
		if (!homes[i] || !*homes[i])
			continue;
		const char *subs[] = {"extras/CUPTI/lib64", "lib64", "lib"};
		for (size_t j = 0; j < 3 && !*lib; j++) {
			char pat[4300];
			snprintf(pat, sizeof pat, "%.4000s/%s/libcupti.so*", homes[i], subs[j]);
			try_pattern(pat, lib, path);
		}
	}
	if (!*lib)
		try_pythons(lib, path);
	const char *sonames[] = {"libcupti.so", "libcupti.so.13", "libcupti.so.12"};
	for (size_t i = 0; i < 3 && !*lib; i++)
		if ((*lib = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL)) && !(*path = strdup(sonames[i]))) {
			dlclose(*lib);
			*lib = NULL;
		}
	if (*lib)
		return ST_OK;
	return st_error_set(err, ST_ENOTFOUND,
			    "cannot find CUPTI (libcupti.so) for PC sampling: looked at SASSTUNE_CUPTI, CUDA_HOME and "
			    "/usr/local/cuda (extras/CUPTI/lib64), the pip wheel nvidia-cuda-cupti, Triton's copy and "
			    "the loader path; set SASSTUNE_CUPTI to the library");
}
