/* The listing of one kernel annotated with its warp stall samples (cmd_profile.c). */
#ifndef ST_PROFILE_REPORT_H
#define ST_PROFILE_REPORT_H

#include "sasstune/profile.h"
#include "sasstune/sass.h"

/* Text: a summary (samples, share of each reason, the top hot instructions), then every
 * instruction with its samples, share and samples per reason. */
void st_profile_report_text(const st_profile *p, const st_sass_kernel *k, unsigned top);
/* JSON on stdout: {kernel, device, launches, total_samples, kernel_samples, unmatched,
 * reasons: {reason: share}, top: [offsets], instructions: [{offset, text, opcode,
 * samples, share, stalls: {reason: samples}}]}.  Nonzero when out of memory. */
int st_profile_report_json(const st_profile *p, const st_sass_kernel *k, unsigned top);

#endif
