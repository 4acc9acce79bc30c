/* sasstune-cc: loading libsasstune.so the way a foreign flow would (dlopen +
 * dlsym of sasstune_plugin_info), never by linking to it. */
#include "cc.h"
#include "sasstune/plugin.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CC_PLUGIN_SO "libsasstune.so"
#define CC_PLUGIN_ENTRY "sasstune_plugin_info"

static void dl_error_line(char *out, size_t max)
{
	const char *e = dlerror();
	cc_first_line(e ? e : "unknown dlopen error", out, max);
}

/* The folder holding this executable, from /proc/self/exe. */
static bool exe_dir(char *out, size_t max)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
	if (n <= 0)
		return false;
	buf[n] = 0;
	char *slash = strrchr(buf, '/');
	if (!slash)
		return false;
	*slash = 0;
	int w = snprintf(out, max, "%s", buf[0] ? buf : "/");
	return w > 0 && (size_t)w < max;
}

static bool try_open(cc_plugin *pl, const char *path, const char *found_by)
{
	size_t n = strlen(path);
	if (n >= sizeof pl->path || access(path, F_OK) != 0)
		return false;
	memcpy(pl->path, path, n + 1);
	pl->found_by = found_by;
	pl->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	return true; /* found: the caller reports a dlopen failure rather than searching on */
}

static st_status open_library(cc_plugin *pl, st_error *err)
{
	char line[300];
	const char *env = getenv("SASSTUNE_PLUGIN");
	if (env && *env) {
		snprintf(pl->path, sizeof pl->path, "%s", env);
		pl->found_by = "SASSTUNE_PLUGIN";
		pl->handle = dlopen(env, RTLD_NOW | RTLD_LOCAL);
		if (!pl->handle) {
			dl_error_line(line, sizeof line);
			return st_error_set(err, ST_ENOTFOUND, "cannot load the plugin SASSTUNE_PLUGIN=%s: %s", env, line);
		}
		return ST_OK;
	}
	char dir[PATH_MAX], path[PATH_MAX + 32];
	if (exe_dir(dir, sizeof dir)) {
		snprintf(path, sizeof path, "%s/%s", dir, CC_PLUGIN_SO);
		bool found = try_open(pl, path, "being next to sasstune-cc");
		if (!found) {
			snprintf(path, sizeof path, "%s/../lib/%s", dir, CC_PLUGIN_SO);
			found = try_open(pl, path, "being in ../lib beside sasstune-cc");
		}
		if (found) {
			if (!pl->handle) {
				dl_error_line(line, sizeof line);
				return st_error_set(err, ST_EIO, "cannot load the plugin %s: %s", pl->path, line);
			}
			return ST_OK;
		}
	}
	snprintf(pl->path, sizeof pl->path, "%s", CC_PLUGIN_SO);
	pl->found_by = "the dynamic loader's search path";
	pl->handle = dlopen(CC_PLUGIN_SO, RTLD_NOW | RTLD_LOCAL);
	if (!pl->handle) {
		dl_error_line(line, sizeof line);
		return st_error_set(err, ST_ENOTFOUND,
				    "cannot find the plugin %s (set SASSTUNE_PLUGIN, or install it next to "
				    "sasstune-cc or in ../lib): %s", CC_PLUGIN_SO, line);
	}
	/* Say where the loader found it. */
	struct link_map *lm = NULL;
	if (dlinfo(pl->handle, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && lm->l_name[0])
		snprintf(pl->path, sizeof pl->path, "%s", lm->l_name);
	return ST_OK;
}

st_status cc_plugin_load(cc_plugin *pl, st_error *err)
{
	memset(pl, 0, sizeof *pl);
	st_status rc = open_library(pl, err);
	if (rc != ST_OK)
		return rc;
	cc_log("plugin: %s (found by %s)", pl->path, pl->found_by);
	dlerror();
	const st_plugin_info *(*entry)(void) = NULL;
	void *sym = dlsym(pl->handle, CC_PLUGIN_ENTRY);
	if (!sym) {
		cc_plugin_unload(pl);
		return st_error_set(err, ST_ENOTFOUND, "the plugin %s lacks the entry point %s() (--no-pass skips the pass)",
				    pl->path, CC_PLUGIN_ENTRY);
	}
	/* POSIX: a data pointer from dlsym converts to a function pointer this way */
	memcpy(&entry, &sym, sizeof entry);
	const st_plugin_info *info = entry();
	if (!info) {
		cc_plugin_unload(pl);
		return st_error_set(err, ST_EFORMAT, "the plugin %s: %s() returned NULL", pl->path, CC_PLUGIN_ENTRY);
	}
	if (info->api_version < 1) {
		unsigned v = info->api_version;
		cc_plugin_unload(pl);
		return st_error_set(err, ST_EUNSUPPORTED, "the plugin %s has API version %u, sasstune-cc needs 1 to %u",
				    pl->path, v, (unsigned)ST_PLUGIN_API_VERSION);
	}
	/* run2 exists from API 2 on; an API 1 library's struct ends before it */
	if (!info->run || !info->free_result || (info->api_version >= 2 && !info->run2)) {
		cc_plugin_unload(pl);
		return st_error_set(err, ST_EFORMAT, "the plugin %s has no run() or free_result()", pl->path);
	}
	pl->info = info;
	return ST_OK;
}

void cc_plugin_unload(cc_plugin *pl)
{
	if (pl->handle)
		dlclose(pl->handle);
	pl->handle = NULL;
	pl->info = NULL;
}
