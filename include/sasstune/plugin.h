/* sasstune: the pass-plugin ABI.
 *
 * libsasstune.so exports exactly one entry point a foreign flow needs:
 *
 *     const st_plugin_info *sasstune_plugin_info(void);
 *
 * A Triton-like flow (in any language) dlopen()s the library, calls it, checks
 * api_version, and calls run2() (or run()) after ptxas with the cubin bytes and
 * what it knows about the kernel.  It returns the cubin to use: the tuned one,
 * or a copy of the input with a status saying why nothing changed.  Plain C
 * types only, so ctypes/cffi can bind it.  run/run2 keep no state between calls
 * and may be called from several threads at once.
 *
 * Versions.  API 2 appended run2() to st_plugin_info; nothing before it moved,
 * so a caller built for API 1 (it checks api_version >= 1 and calls run()) keeps
 * working unchanged.  run2() takes st_plugin_kernel2: the v1 record first, then
 * a size and the compile's inputs (PTX, the ptxas binary and its options) that
 * the compile-variants stage needs.  Check api_version >= 2 before reading run2;
 * the library never reads a field past what the caller's size says.
 *
 * Settings are read from the environment on every call, and options_json (a
 * JSON object of strings) overrides them key by key:
 *
 *   SASSTUNE_CACHE_DIR  "cache_dir"  cache folder (default $XDG_CACHE_HOME/sasstune, else ~/.cache/sasstune)
 *   SASSTUNE_MODE       "mode"       tune | policy | cache-only | capture (default tune;
 *                                    capture: the flow records launches, run() acts as cache-only)
 *   SASSTUNE_BUDGET     "budget"     tuning budget per kernel, "90s", "5m", "2h" or seconds, >= 1 s (300 s)
 *   SASSTUNE_POLICY     "policy"     policy file for mode policy
 *   SASSTUNE_LOG        "log"        off|error|warn|info|debug (default warn, on stderr), or a file path
 *                                    (lines appended at level info)
 *   SASSTUNE_RETUNE     "retune"     1: tune again kernels cached as "nothing beat stock"
 *   SASSTUNE_VARIANTS   "variants"   on | off | auto: in mode tune, compile the record's PTX with
 *                                    other ptxas binaries/options first (docs/variants.md); auto
 *                                    (default) = on when more than one ptxas binary is found
 *                       "gpu_name", "compute_capability", "driver_version": parts of the cache key,
 *                                    "unknown" when not given
 *                       "device"     CUDA ordinal mode tune runs on (default "0"; CUDA_VISIBLE_DEVICES applies)
 *
 * Unknown keys are ignored with a warning.  See docs/cache.md.
 */
#ifndef SASSTUNE_PLUGIN_H
#define SASSTUNE_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ST_PLUGIN_API_VERSION 2

/* What the flow tells the pass about the kernel being compiled.  Any string
 * may be NULL when unknown. */
typedef struct st_plugin_kernel {
	const char *kernel;       /* entry name, e.g. "matmul_kernel" */
	const char *arch;         /* "sm_90" */
	const char *ptxas_version;/* e.g. "12.8.93" */
	const char *launch_json;  /* a launch spec (see docs/runtime.md), enables GPU tuning */
	const char *options_json; /* per-call overrides of SASSTUNE_* settings, or NULL */
} st_plugin_kernel;

/* A negative result, the kernel is done: tuned (now, and stored, or before: a cache hit, whose
 * message starts with "cached: ") and nothing beat stock.  ST_PLUGIN_UNCHANGED with a message that
 * contains this; any other UNCHANGED means the kernel is still to be tuned. */
#define ST_PLUGIN_NEGATIVE "nothing beat stock"

/* API 2: what the flow knows about how the cubin was made.  size is
 * sizeof(st_plugin_kernel2) as the caller was built; fields that do not fit
 * in it are absent (NULL), so later versions may append fields here.  The
 * strings are NUL-terminated and may be NULL when unknown.  With ptx set, mode
 * tune may compile variants (SASSTUNE_VARIANTS); without it the pass runs as
 * run() does. */
typedef struct st_plugin_kernel2 {
	st_plugin_kernel v1;       /* the API 1 record, unchanged */
	size_t size;               /* sizeof(st_plugin_kernel2) */
	const char *ptx;           /* the PTX text ptxas compiled */
	const char *ptxas_path;    /* the ptxas binary that made the cubin */
	const char *ptxas_options; /* its options as one string, e.g. "-lineinfo --gpu-name=sm_90a" (no -o,
	                              no input file) */
} st_plugin_kernel2;

/* Outcome of one run. */
typedef enum st_plugin_status {
	ST_PLUGIN_TUNED = 0,     /* a new schedule was found, confirmed and applied */
	ST_PLUGIN_CACHED = 1,    /* a cached schedule was applied */
	ST_PLUGIN_POLICY = 2,    /* a learned policy was applied (not yet confirmed on a GPU) */
	ST_PLUGIN_UNCHANGED = 3, /* input returned unchanged; message says why */
	ST_PLUGIN_ERROR = 4,     /* input returned unchanged because of an error; message says what */
} st_plugin_status;

typedef struct st_plugin_result {
	uint8_t *cubin;       /* output cubin, allocated by the plugin; release with free_result.
	                         NULL only with ST_PLUGIN_ERROR: out of memory or invalid arguments */
	size_t cubin_size;
	st_plugin_status status;
	char message[512];    /* one printable line */
} st_plugin_result;

typedef struct st_plugin_info {
	uint32_t api_version;  /* ST_PLUGIN_API_VERSION */
	const char *name;      /* "sasstune" */
	const char *version;   /* library version, e.g. "0.1.0" */
	const char *stage;     /* where the pass runs: "after-ptxas" */
	/* Run the pass.  Returns 0 when result is filled (whatever its status),
	 * non-zero only on invalid arguments. */
	int (*run)(const uint8_t *cubin, size_t size, const st_plugin_kernel *kernel,
		   st_plugin_result *result);
	void (*free_result)(st_plugin_result *result);
	/* API >= 2 only (a v1 library's struct ends before it): run() with the v2
	 * record.  kernel NULL is the same as run() with NULL. */
	int (*run2)(const uint8_t *cubin, size_t size, const st_plugin_kernel2 *kernel,
		    st_plugin_result *result);
} st_plugin_info;

const st_plugin_info *sasstune_plugin_info(void);

#ifdef __cplusplus
}
#endif
#endif
