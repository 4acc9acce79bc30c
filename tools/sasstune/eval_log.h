/* sasstune tune --log-evals F.jsonl: one JSON line per evaluation the search makes (docs/tune.md,
 * "The evaluation log"), the training data of a learned cost model (bench/transfer.py). */
#ifndef ST_EVAL_LOG_H
#define ST_EVAL_LOG_H
#include "sasstune/search.h"
#include <stdio.h>

typedef struct st_evlog {
	FILE *f;
	const char *cubin, *kernel, *method; /* borrowed; the kernel may be filled in late */
	unsigned long long seed;
	unsigned long long lines;
	int failed;                          /* a write failed (reported once at the end) */
} st_evlog;

/* st_search_opts.on_eval: appends one line for the note. */
void st_evlog_note(const st_search_eval_note *n, void *data);
#endif
