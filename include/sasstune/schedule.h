/* sasstune schedules: which instruction moves to apply to which kernels of a cubin.
 *
 * JSON, version 1 (docs/cubin.md):
 *   {"sasstune_schedule": 1,
 *    "kernels": {"KERNEL": {"swaps": [i, ...]},               swap slots i and i+1, in order
 *                "OTHER":  {"permutation": [p0, p1, ...]}}}   new slot j takes old slot p_j
 * Every field is checked; unknown keys are errors, so a later version (for example with
 * control-code edits) is never half-applied by an older reader. */
#ifndef SASSTUNE_SCHEDULE_H
#define SASSTUNE_SCHEDULE_H

#include "sasstune/cubin.h"
#include "sasstune/error.h"

#include <stddef.h>
#include <stdint.h>

#define ST_SCHEDULE_VERSION 1

typedef struct st_schedule st_schedule;

/* Parse a schedule; name (may be NULL) is used in messages. */
st_status st_schedule_parse(const char *json, size_t len, const char *name, st_schedule **out, st_error *err);
st_status st_schedule_load(const char *path, st_schedule **out, st_error *err);
void st_schedule_free(st_schedule *s);

size_t st_schedule_kernel_count(const st_schedule *s);
const char *st_schedule_kernel_name(const st_schedule *s, size_t i);

/* Kernel i's moves as a permutation of its n slots (perm[new] = old, n entries). */
st_status st_schedule_permutation(const st_schedule *s, size_t i, size_t n, uint32_t *perm, st_error *err);

/* Building a schedule (a kernel holds either swaps or a permutation). */
st_status st_schedule_new(st_schedule **out, st_error *err);
st_status st_schedule_add_swap(st_schedule *s, const char *kernel, uint32_t slot, st_error *err);
st_status st_schedule_set_permutation(st_schedule *s, const char *kernel, const uint32_t *perm, size_t n,
				      st_error *err);
/* The schedule as JSON text (malloc'ed, NUL-terminated); NULL when out of memory. */
char *st_schedule_to_json(const st_schedule *s);

/* Apply every kernel's moves to c.  All or nothing: unknown kernels and bad moves leave c as it was. */
st_status st_schedule_apply(const st_schedule *s, st_cubin *c, st_error *err);

#endif
