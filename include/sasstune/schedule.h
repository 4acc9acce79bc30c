/* sasstune schedules: which instruction moves to apply to which kernels of a cubin.
 *
 * JSON, version 1 (docs/cubin.md):
 *   {"sasstune_schedule": 1,
 *    "kernels": {"KERNEL": {"swaps": [i, ...]},               swap slots i and i+1, in order
 *                "OTHER":  {"permutation": [p0, p1, ...]},   new slot j takes old slot p_j
 *                "THIRD":  {"moves": [i, {"slot": i, "stall": s, "yield": y, "wbar": w,
 *                                          "rbar": r, "wait": m, "reuse": u},
 *                                     {"slot": i, "rename": r}, {"slot": j, "field": "a", "reg": r}, ...,
 *                                     {"regcount": n}]},
 *                "FOURTH": {"pipe": [{"loop": 432, "loads": [528, 720]}, ...]}}}   rotations (pipe.h)
 * In "moves" a number swaps slots i and i+1 and an object sets the control fields (bits 105..124,
 * sass.h st_ctrl) of the instruction then in slot i (docs/sched.md).  {"slot", "rename"} is a
 * register rename (the R def of slot i and its live range take register r; checked replays
 * only), always followed by its effect as "field" objects: register field d/a/b/c (bytes 2, 3, 4,
 * 8 of the word) of the instruction then in slot j becomes r (what an unchecked apply writes).
 * {"regcount": n} (last, after renames above the kernel's count): its register count becomes n.
 * "pipe": family 3 rewrites (st_pipe_cand.header/.loads: byte offsets in the original kernel,
 * multiples of 16, 1..8 loads, one entry per loop): form 1 rotations, or with "form": 2, "regs": N
 * prefetches into fresh registers (up to N); a kernel holding them holds nothing else.
 * Every field is checked; unknown keys are errors, so a later form is never half-applied by an
 * older reader. */
#ifndef SASSTUNE_SCHEDULE_H
#define SASSTUNE_SCHEDULE_H

#include "sasstune/cubin.h"
#include "sasstune/error.h"
#include "sasstune/sass.h"

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

/* Kernel i's swaps and control edits in order ("swaps" or "moves"; none for a permutation).
 * is_ctrl: 0 a swap, 1 a control edit (ctrl), ST_SCHEDULE_RENAME a rename to R`reg`,
 * ST_SCHEDULE_FIELD register field `field` (0 d, 1 a, 2 b, 3 c) set to `reg`, ST_SCHEDULE_REGCOUNT
 * the kernel's register count set to `reg` (1..255). */
enum { ST_SCHEDULE_RENAME = 2, ST_SCHEDULE_FIELD = 3, ST_SCHEDULE_REGCOUNT = 4 };
typedef struct st_schedule_move { uint32_t slot; int is_ctrl; st_ctrl ctrl; uint8_t field, reg; } st_schedule_move;
size_t st_schedule_move_count(const st_schedule *s, size_t i);
st_schedule_move st_schedule_move_at(const st_schedule *s, size_t i, size_t j);
int st_schedule_is_permutation(const st_schedule *s, size_t i);
/* Kernel i's rotations: entry j's loop (header), loads[0..*n); ST_EINVAL when i or j is out of range. */
size_t st_schedule_pipe_count(const st_schedule *s, size_t i);
st_status st_schedule_pipe_at(const st_schedule *s, size_t i, size_t j, uint32_t *header, uint32_t loads[8], size_t *n);
/* Its form (1 rotation, 2 prefetch) and, for form 2, its register limit (0: the kernel's count). */
st_status st_schedule_pipe_form(const st_schedule *s, size_t i, size_t j, unsigned *form, unsigned *regs);

/* Building a schedule (a kernel holds swaps and control edits, a permutation, or rotations). */
st_status st_schedule_new(st_schedule **out, st_error *err);
st_status st_schedule_add_swap(st_schedule *s, const char *kernel, uint32_t slot, st_error *err);
st_status st_schedule_add_ctrl(st_schedule *s, const char *kernel, uint32_t slot, st_ctrl c, st_error *err);
st_status st_schedule_add_rename(st_schedule *s, const char *kernel, uint32_t slot, unsigned reg, st_error *err);
st_status st_schedule_add_field(st_schedule *s, const char *kernel, uint32_t slot, unsigned field, unsigned reg,
				st_error *err);
st_status st_schedule_add_regcount(st_schedule *s, const char *kernel, unsigned regs, st_error *err);
st_status st_schedule_set_permutation(st_schedule *s, const char *kernel, const uint32_t *perm, size_t n,
				      st_error *err);
st_status st_schedule_add_pipe(st_schedule *s, const char *kernel, uint32_t header, const uint32_t *loads, size_t n,
			       st_error *err); /* form 1 */
st_status st_schedule_add_pipe_form(st_schedule *s, const char *kernel, unsigned form, unsigned regs, uint32_t header,
				    const uint32_t *loads, size_t n, st_error *err);
/* The schedule as JSON text (malloc'ed, NUL-terminated); NULL when out of memory. */
char *st_schedule_to_json(const st_schedule *s);

/* Apply every kernel's moves to c, unchecked (`rewrite --unchecked`; st_sched_rewrite checks).  All or
 * nothing: unknown kernels and bad moves leave c as it was.  Rotations and prefetches go through
 * st_pipe_make / st_pipe2_make and st_pipe_apply (their rules re-checked), decoding with default
 * st_sass_opts: nvdisasm found at run time. */
st_status st_schedule_apply(const st_schedule *s, st_cubin *c, st_error *err);

#endif
