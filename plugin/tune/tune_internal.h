/* What the files of plugin/tune share (internal). */
#ifndef ST_TUNE_INTERNAL_H
#define ST_TUNE_INTERNAL_H
#include "sasstune/cubin.h"
#include "sasstune/runtime.h"
#include "sasstune/sass.h"
#include "sasstune/search.h"
#include "sasstune/tune.h"

#include <stddef.h>

/* nvdisasm must still decode every word of t (a control edit the model thought legal once gave an
 * encoding it rejects): why[0] is 0 when it does, or when no nvdisasm can be found (then nothing
 * can be said), else why it refused.  Errors: out of memory. */
st_status st_tune_nvdisasm_accepts(const st_cubin *t, const st_sass_opts *so, char *why, size_t n, st_error *err);
/* Candidate bytes b against k's cubin in a fresh session (verified; tune.c).  e->verdict ST_OK only
 * with a usable interval. */
st_status st_tune_fresh_estimate(const st_tune_kernel *k, const st_tune_opts *o, unsigned pairs, const uint8_t *b,
				 size_t b_size, st_estimate *e, st_error *err);
/* A paired timing (time(B)/time(A), interval) as the search's ratio: original / candidate. */
void st_tune_timing_eval(const st_timing *t, st_eval *out);
#endif
