/* sasstune runtime: run, verify and time cubins on the GPU.
 *
 * The CUDA driver is loaded only inside a worker process (sasstune-worker,
 * started with fork+exec, its own CUDA context, talking over a socket pair):
 * the caller's own CUDA context is never touched, a candidate that faults
 * kills only the worker, one that hangs is killed by a watchdog, and the next
 * call starts a fresh worker.  The worker is found through $SASSTUNE_WORKER,
 * next to the running executable, next to libsasstune.so, then on $PATH.
 * Launch specs (launch.json) are described in docs/runtime.md.
 */
#ifndef SASSTUNE_RUNTIME_H
#define SASSTUNE_RUNTIME_H

#include "sasstune/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- launch specs ---- */
typedef struct st_launch st_launch;

/* Parse a spec from JSON text; "file" paths are relative to base_dir (NULL: the
 * current folder).  Every malformed field gets an error naming it. */
st_status st_launch_parse(const char *json, size_t len, const char *base_dir, st_launch **out,
			  st_error *err);
st_status st_launch_load(const char *path, st_launch **out, st_error *err);
void st_launch_free(st_launch *spec);
const char *st_launch_kernel(const st_launch *spec);
size_t st_launch_param_count(const st_launch *spec);
void st_launch_dims(const st_launch *spec, unsigned grid[3], unsigned block[3], unsigned *shared_bytes);

/* ---- sessions: one reference cubin + one launch spec, many candidates ---- */
typedef struct st_runtime_options {
	unsigned verify_sets; /* K: fresh input sets a candidate must match on (default 2) */
	unsigned pairs;       /* timed pairs when a call passes 0 (default 100) */
	double warmup_ms;     /* GPU time spent warming up before each timing (default 25) */
	double sample_us;     /* launches are batched until one timed sample lasts this long (default 50) */
	bool flush_l2;        /* flush L2 before every timed launch, one launch per sample (default off) */
	uint64_t seed;        /* input data and bootstrap (default 1) */
	unsigned bootstrap;   /* bootstrap resamples for the 95 % interval (default 2000) */
	double tolerance;     /* relative L2 error allowed if the reference is not deterministic (1e-3) */
	double timeout_s;     /* watchdog slack per call beyond the expected GPU time (default 5) */
	int device;           /* CUDA device ordinal (default 0) */
	const char *worker;   /* sasstune-worker path, NULL: search */
	const char *libcuda;  /* driver library, NULL: $SASSTUNE_LIBCUDA, else "libcuda.so.1" */
	bool check_reference; /* after each OK verification, st_session_check_reference (default off; the
			       * CLI and the pass set it from $SASSTUNE_CHECK_REFERENCE; st_estimate_run always
			       * on): one more reference run per input set for every verified candidate */
} st_runtime_options;

void st_runtime_options_init(st_runtime_options *opt);

typedef struct st_session st_session;

/* Start a worker, load the reference, make the K input sets, run the reference
 * on each (twice, to test determinism) and keep its outputs. */
st_status st_session_open(const uint8_t *cubin, size_t size, const st_launch *spec,
			  const st_runtime_options *opt, st_session **out, st_error *err);
void st_session_close(st_session *s);

/* Verify a candidate: ST_OK (every buffer matches on all K sets), ST_EMISMATCH,
 * ST_ECRASH (it faulted; the worker is restarted on the next call), ST_ETIMEOUT
 * (it hung and was killed), or another error (e.g. the driver rejected it).
 * After a mismatch (and after ST_OK with opt.check_reference) the reference is checked;
 * if contaminated, the candidate is verified again in a fresh worker, where it runs alone:
 * that verdict counts, and a contamination after it there is its own (ST_EMISMATCH,
 * info.last_stray). */
st_status st_session_verify(st_session *s, const uint8_t *cubin, size_t size, st_error *err);

/* Run the reference again on every input set (inputs reset from the worker's pristine copies)
 * and compare every buffer with the stored reference outputs: ST_OK, or ST_ECONTAMINATED when
 * they no longer match (or the reference faults or hangs): some kernel wrote outside its
 * buffers into the worker's inputs or references.  The worker is then stopped; the next call
 * starts a fresh one (inputs and reference regenerated, their digest checked). */
st_status st_session_check_reference(st_session *s, st_error *err);

typedef struct st_timing {
	double ratio, ci_lo, ci_hi; /* median of per-pair time(B)/time(A), bootstrap 95 % interval */
	double a_ms, b_ms;          /* median time of one launch of A and of B */
	unsigned n;                 /* pairs */
	unsigned reps;              /* launches per timed sample */
} st_timing;

/* Time B against A in interleaved pairs (A B, B A, ...).  A or B NULL means the
 * reference; pairs 0 means opt.pairs.  Returns ST_ECRASH/ST_ETIMEOUT as verify. */
st_status st_session_compare(st_session *s, const uint8_t *a, size_t a_size, const uint8_t *b,
			     size_t b_size, unsigned pairs, st_timing *out, st_error *err);
/* A/A: A (NULL: the reference) against a second, separately loaded copy of itself. */
st_status st_session_noise(st_session *s, const uint8_t *a, size_t a_size, unsigned pairs,
			   st_timing *out, st_error *err);

/* Sample warp program counters with CUPTI (loaded in the worker; docs/profile.md) while
 * cubin (NULL: the reference) runs for about target_ms of GPU time, at most max_launches
 * launches; period: log2 of the sampling period in cycles, 5..31 (0: CUPTI's default).
 * *out: the samples (st_profile, profile.h), its meta.device set.  ST_ENOTFOUND when CUPTI
 * cannot be found, ST_EUNSUPPORTED when built without it or the GPU cannot sample. */
struct st_profile;
st_status st_session_profile(st_session *s, const uint8_t *cubin, size_t size, unsigned period, double target_ms,
			     unsigned max_launches, struct st_profile **out, st_error *err);

typedef struct st_session_info {
	char device[128];      /* e.g. "NVIDIA H200 (sm_90, driver 13.0)" */
	bool deterministic;    /* the reference gave identical outputs twice */
	bool verify_on_gpu;    /* outputs are compared by a kernel (else read back to the host) */
	double kernel_ms;      /* one launch of the reference */
	unsigned verify_sets;
	unsigned restarts;     /* workers started after the first */
	double start_ms;       /* cost of the first worker start (context, inputs, references) */
	double restart_ms;     /* total cost of the restarts */
	double last_load_ms;   /* module load time of the last verified candidate */
	int regs, local_bytes; /* registers and local memory of the last verified candidate */
	unsigned reference_checks; /* st_session_check_reference calls (own and st_session_verify's) */
	unsigned contaminations;   /* of those, the ones that found the reference contaminated */
	bool last_stray;       /* the last verified candidate wrote outside its buffers (found alone) */
} st_session_info;
void st_session_get_info(const st_session *s, st_session_info *info);

/* The estimate (sasstune compare and the tuner's final estimate; docs/runtime.md "Estimates"):
 * a session opened anew on ref, samples of >= ST_ESTIMATE_SAMPLE_US (the timer's step <= 0.1 %),
 * B verified (unless !verify) and timed against ref in `pairs` pairs (0: opt.pairs), closed.
 * Returns ST_OK when the machinery worked: out->verdict is B's (ST_OK, ST_EMISMATCH, ...),
 * out->stage how far it got, err says why when the verdict is not ST_OK. */
#define ST_ESTIMATE_SAMPLE_US 500.0
typedef enum { ST_ESTIMATE_OPEN, ST_ESTIMATE_VERIFY, ST_ESTIMATE_TIME, ST_ESTIMATE_DONE } st_estimate_stage;
typedef struct st_estimate {
	st_timing t; st_status verdict; st_estimate_stage stage; double sample_us; /* 0: flush_l2 */
	st_session_info info;
} st_estimate;
st_status st_estimate_run(const uint8_t *ref, size_t ref_size, const st_launch *spec, const st_runtime_options *opt,
			  const uint8_t *b, size_t b_size, bool verify, unsigned pairs, st_estimate *out, st_error *err);

/* ---- statistics (deterministic for a given seed) ---- */
double st_median(const double *v, size_t n);
/* Median of v with a bootstrap percentile 95 % interval from `resamples` resamples. */
st_status st_bootstrap_median(const double *v, size_t n, unsigned resamples, uint64_t seed,
			      double *median, double *lo, double *hi, st_error *err);

/* The worker's loop (what sasstune-worker runs): requests on in_fd, replies on out_fd. */
int st_worker_serve(int in_fd, int out_fd);

#ifdef __cplusplus
}
#endif
#endif
