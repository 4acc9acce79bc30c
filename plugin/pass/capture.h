/* Captured launches for "tune later" (internal to the pass and the sasstune command).
 *
 * The Triton adapter in mode capture writes one folder per kernel (python/sasstune/_capture_mode.py):
 * cubin (the stock cubin), ptx (the PTX it was made from, when known), launch.json (its launch spec),
 * buffer files, and capture.json, which says under which key fields the kernel was met:
 *   {"v": 1, "kernel": K, "arch": "sm_90", "ptxas_version": "12.8.93", "gpu_name": G,
 *    "compute_capability": "9.0", "driver_version": D, "device": "0", "key": 64 hex,
 *    "gpu_uuid": "b3c6e1e4-...", "ptxas_path": P, "ptxas_options": O, "variants": "auto", ...}
 * capture.json is outside input: every field is checked, unknown ones are ignored.  The folder's
 * tuning goes through the pass's own run2() (sasstune_plugin_info) with the same record and settings
 * the adapter's launch would have given it (PTX, ptxas path and options, SASSTUNE_VARIANTS), and its
 * key is computed by the pass's own code (st_capture_run_key), so it is stored under exactly the key
 * a later compile looks up, the compile-variants fields included.  Note: the batch runs the ptxas
 * binaries capture.json names (the variants stage), as the capturing program would have. */
#ifndef ST_PASS_CAPTURE_H
#define ST_PASS_CAPTURE_H

#include "sasstune/error.h"
#include "sasstune/plugin.h"

#include <stddef.h>
#include <stdint.h>

typedef struct st_capture_meta {
	char *kernel;                                         /* required, non-empty */
	char *arch, *ptxas_version;                           /* NULL when absent or null */
	char *gpu_name, *compute_capability, *driver_version; /* the GPU facts of the key; NULL: unknown */
	char *device;                                         /* CUDA ordinal as text (0..1023); NULL: "0" */
	char *ptxas_path, *ptxas_options;                     /* how the cubin was made; NULL: unknown */
	char *variants;                                       /* on | off | auto; NULL: the environment's */
	char key[65];                                         /* as recorded; "" when absent */
	char gpu_uuid[65];                                    /* [0-9a-z-], names the GPU lock; "" when absent */
} st_capture_meta;

/* Parse capture.json text (v 1; strings printable; ptxas_path at most 4096 bytes, the others at
 * most ST_CACHE_KEY_FIELD_MAX, so that a parsed meta always gives a key; key 64 hex digits). */
st_status st_capture_meta_parse(const char *json, size_t len, st_capture_meta *out, st_error *err);
void st_capture_meta_free(st_capture_meta *m);

/* The run2() record of a capture: m's kernel, arch, ptxas version, path and options, ptx (NULL:
 * none), launch_json and options_json (st_capture_options); everything borrowed. */
void st_capture_record(const st_capture_meta *m, const char *ptx, const char *launch_json, const char *options_json,
		       st_plugin_kernel2 *k);

/* The schedule-cache key run()/run2() computes for cubin and k (the pass's own code: settings from
 * the environment and k's options_json, the variant fields when k has PTX and variants would run).
 * Exported for the Triton adapter (ctypes); k's size says how much of it the caller has. */
st_status st_capture_run_key(const uint8_t *cubin, size_t size, const st_plugin_kernel2 *k, char key[65],
			     st_error *err);

/* "<cache_dir>/locks/gpu-<uuid>.lock", the Triton adapter's GPU lock (python/sasstune/_gpulock.py);
 * ST_ENOTFOUND when the capture names no GPU. */
st_status st_capture_lock_path(const st_capture_meta *m, const char *cache_dir, char *out, size_t size,
			       st_error *err);

/* options_json for run() in mode tune: budget, the GPU facts, device, variants, and cache_dir when not NULL.
 * *out is malloc'ed. */
st_status st_capture_options(const st_capture_meta *m, const char *budget, const char *cache_dir, char **out,
			     st_error *err);

#endif
