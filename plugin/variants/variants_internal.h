/* The compile-variants stage, inside (not public API).  docs/variants.md. */
#ifndef ST_VARIANTS_INTERNAL_H
#define ST_VARIANTS_INTERNAL_H

#include "sasstune/variants.h"
#include "util/util.h"

#include <sys/types.h>

/* A set: items[0] is stock.  Each item keeps a copy of its kernel's code bytes (for the
 * duplicate test); pub.cubin and code are owned by the set. */
typedef struct st_vr_item {
	st_variant pub;
	uint8_t *code;
} st_vr_item;

struct st_variants {
	st_vr_item *items;
	size_t n, cap;
	char kernel[256];
	bool measured;    /* st_variants_measure ran to the end */
	char gpu[256];    /* why the GPU steps did not run ("" when they did) */
};

/* Append a copy of proto (cubin bytes copied; code from the cubin when it opens). */
st_status st_vr_push(st_variants *s, const st_variant *proto, const uint8_t *cubin, size_t size, st_error *err);
/* Kernel `kernel`'s code bytes (malloc'ed copy) and register count (-1 unknown) in a cubin;
 * kernel NULL: the only entry, whose name is written to name (size namesz). */
st_status st_vr_kernel_code(const uint8_t *cubin, size_t size, const char *kernel, uint8_t **code,
			    size_t *code_len, int *regs, char *name, size_t namesz, st_error *err);

/* ---- running a tool (compile.c) ---- */
typedef struct st_vr_run {
	bool spawned;     /* false: could not start (reason says why) */
	bool timed_out;   /* killed (its whole process group) after the time limit */
	int wstatus;      /* waitpid status when it ended by itself */
	double secs;
	st_buf out;       /* stdout and stderr together (at most 64 KiB kept), NUL-terminated */
} st_vr_run;
/* Run argv[0] (a path) with stdin from /dev/null, in its own process group, for at most
 * timeout_s.  Only fails for no memory / no pipe; a tool that cannot start is r->spawned false. */
st_status st_vr_exec(char *const argv[], double timeout_s, st_vr_run *r, st_error *err);
/* One line: why a run failed ("timed out after 3 s", "crashed (signal 11)", the first error line
 * of its output, "exit status 1"); "" when it succeeded. */
void st_vr_run_reason(const st_vr_run *r, double timeout_s, char *out, size_t outsz);

/* A compile: `ptxas BASE EXTRA -o OUT PTX`.  On success cubin is malloc'ed. */
typedef struct st_vr_job {
	const char *ptxas, *base, *extra, *ptx_path;
	char out_path[4096];
	uint8_t *cubin;
	size_t size;
	double secs;
	char reason[256];
} st_vr_job;
/* Run the jobs with at most `jobs` at a time, each under timeout_s. */
st_status st_vr_compile_all(st_vr_job *jobs, size_t n, unsigned jobs_max, double timeout_s, st_error *err);

/* ---- binaries (discovery.c) ---- */
typedef struct st_vr_binary {
	char path[1024];
	char version[32]; /* "13.5.37", "unknown" */
	bool usage_level; /* knows --register-usage-level */
	bool maxrreg;     /* knows --maxrregcount */
	bool controls;    /* knows --apply-controls (ptxas >= 13.3) */
	char reason[256]; /* it could not be asked (then it yields one rejected variant) */
} st_vr_binary;
/* The binaries to try, stock first (when known), without repeats (same real path or the
 * same known version). */
st_status st_vr_discover(const st_variants_opts *o, st_vr_binary **out, size_t *n, st_error *err);
/* Ask one binary its version and knobs; with memo_dir, a remembered answer for the same file
 * (real path, size, mtime, inode) is used instead, and a new one is written there (probe.c). */
void st_vr_probe(st_vr_binary *b, double timeout_s, const char *memo_dir);
/* The remembered answer for b->path (true when found and valid); st_vr_memo_store saves b's. */
bool st_vr_memo_load(const char *memo_dir, st_vr_binary *b);
void st_vr_memo_store(const char *memo_dir, const st_vr_binary *b);

/* The --maxrregcount values (at most two, descending) for a kernel of `regs` registers in
 * blocks of `threads` threads on sm_90-class SMs; returns how many. */
size_t st_vr_maxrreg_values(int regs, unsigned threads, int out[2]);
/* Threads per block from the PTX's .maxntid / .reqntid of `kernel` (0 when absent). */
unsigned st_vr_ptx_threads(const char *ptx, size_t len, const char *kernel);
/* Whether the PTX names `kernel` as a whole word before '(' or white space (its .entry). */
bool st_vr_ptx_has_entry(const char *ptx, size_t len, const char *kernel);

#endif
