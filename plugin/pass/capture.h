/* Captured launches for "tune later" (internal to the pass and the sasstune command).
 *
 * The Triton adapter in mode capture writes one folder per kernel (python/sasstune/_capture_mode.py):
 * cubin (the stock cubin), launch.json (its launch spec), buffer files, and capture.json, which says
 * under which key fields the kernel was met:
 *   {"v": 1, "kernel": K, "arch": "sm_90", "ptxas_version": "12.8.93", "gpu_name": G,
 *    "compute_capability": "9.0", "driver_version": D, "device": "0", "key": 64 hex,
 *    "gpu_uuid": "b3c6e1e4-...", ...}
 * capture.json is outside input: every field is checked, unknown ones are ignored.  The folder's
 * tuning goes through the pass's own run() (sasstune_plugin_info), so it is stored under exactly the
 * key a later compile looks up. */
#ifndef ST_PASS_CAPTURE_H
#define ST_PASS_CAPTURE_H

#include "sasstune/error.h"

#include <stddef.h>
#include <stdint.h>

typedef struct st_capture_meta {
	char *kernel;                                         /* required, non-empty */
	char *arch, *ptxas_version;                           /* NULL when absent or null */
	char *gpu_name, *compute_capability, *driver_version; /* the GPU facts of the key; NULL: unknown */
	char *device;                                         /* CUDA ordinal as text; NULL: "0" */
	char key[65];                                         /* as recorded; "" when absent */
	char gpu_uuid[65];                                    /* [0-9a-z-], names the GPU lock; "" when absent */
} st_capture_meta;

/* Parse capture.json text (v 1; strings printable and at most 1024 bytes; key 64 hex digits). */
st_status st_capture_meta_parse(const char *json, size_t len, st_capture_meta *out, st_error *err);
void st_capture_meta_free(st_capture_meta *m);

/* The schedule-cache key of the captured kernel: st_cache_key over the cubin's SHA-256 and m's fields,
 * the fields run() keys on. */
st_status st_capture_key(const st_capture_meta *m, const uint8_t *cubin, size_t size, char key[65], st_error *err);

/* "<cache_dir>/locks/gpu-<uuid>.lock", the Triton adapter's GPU lock (python/sasstune/_gpulock.py);
 * ST_ENOTFOUND when the capture names no GPU. */
st_status st_capture_lock_path(const st_capture_meta *m, const char *cache_dir, char *out, size_t size,
			       st_error *err);

/* options_json for run() in mode tune: budget, the GPU facts, device, and cache_dir when not NULL.
 * *out is malloc'ed. */
st_status st_capture_options(const st_capture_meta *m, const char *budget, const char *cache_dir, char **out,
			     st_error *err);

#endif
