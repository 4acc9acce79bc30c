/* CUPTI's PC sampling API, loaded with dlopen inside the worker (internal).  Built
 * against the real cupti_pcsampling.h when CMake found it (ST_HAVE_CUPTI); without it
 * every call says that sasstune was built without CUPTI.  The CUDA context is passed as
 * void * so that this header does not need the worker's driver declarations. */
#ifndef ST_CUPTI_H
#define ST_CUPTI_H

#include "sasstune/error.h"
#include "sasstune/profile.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct st_cupti st_cupti;

/* dlopen CUPTI: $SASSTUNE_CUPTI, $CUDA_HOME and /usr/local/cuda (extras/CUPTI/lib64, lib64),
 * the pip wheels' lib folders (nvidia/cu13/lib, nvidia/cuda_cupti/lib) next to a python3 on
 * PATH or in the active venv, Triton's bundled copy, then the plain sonames.  ST_ENOTFOUND with
 * one line naming where it looked; ST_EUNSUPPORTED when built without the headers. */
st_status st_cupti_open(st_cupti **out, st_error *err);
void st_cupti_close(st_cupti *c);
const char *st_cupti_path(const st_cupti *c);

/* Enable PC sampling on ctx (period: log2 cycles 5..31, 0 = CUPTI's default), in kernel-
 * serialized mode with start/stop control, every stall reason selected.  Modules loaded
 * after this are sampled. */
st_status st_cupti_enable(st_cupti *c, void *ctx, unsigned period, st_error *err);
st_status st_cupti_start(st_cupti *c, st_error *err);
/* Stop, then drain what was sampled into prof (reasons by their short names). */
st_status st_cupti_stop(st_cupti *c, st_profile *prof, st_error *err);
/* Disable; what CUPTI flushes on disable is added to prof (may be NULL). */
void st_cupti_disable(st_cupti *c, st_profile *prof);

/* Where CUPTI may be found, for the search and its message (internal to cupti_find.c). */
st_status st_cupti_find_and_open(void **lib, char **path, st_error *err);

#endif
