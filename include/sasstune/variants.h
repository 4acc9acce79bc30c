/* sasstune variants: the same PTX through other ptxas binaries and options, each
 * verified bit for bit and timed against the stock cubin; the confirmed winner
 * (or stock) is what the SASS search then tunes.  docs/variants.md.
 *
 * Two stages, so that the CPU work runs without a GPU:
 *   st_variants_compile  CPU: find binaries, compile every (binary, options) in
 *                        parallel under a time limit, drop failures and
 *                        duplicates (same kernel code bytes), check that the
 *                        PTX matches the stock cubin.
 *   st_variants_measure  GPU: verify each survivor on the launch, time it
 *                        paired against stock, confirm the best (>= 200 pairs,
 *                        interval above confirm_min).
 * A bad ptxas (crash, hang, errors), a variant with other outputs, or a PTX that
 * does not match the cubin is a rejected variant with its reason, never an error
 * of the caller's compile. */
#ifndef SASSTUNE_VARIANTS_H
#define SASSTUNE_VARIANTS_H
#include "sasstune/error.h"
#include "sasstune/runtime.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One candidate compile.  Index 0 of a set is always stock (the cubin given). */
typedef struct st_variant {
	char ptxas[1024];         /* binary path ("" for stock when unknown) */
	char ptxas_version[32];   /* "13.5.37", "unknown" */
	char options[256];        /* extra options beyond the base ones, "" for none */
	char label[320];          /* "13.5.37", "13.5.37 --register-usage-level 0", "stock" */
	bool stock;               /* the cubin that came in */
	bool compiled;            /* ptxas succeeded (stock: true) */
	double compile_s;         /* wall time of its ptxas run */
	size_t code_bytes;        /* bytes of the kernel's .text section */
	int regs;                 /* registers per thread from the cubin (-1 unknown) */
	int duplicate_of;         /* index of an earlier variant with the same code, else -1 */
	int verified;             /* 1 bit-identical, 0 rejected, -1 not run (no GPU / not reached) */
	st_timing timing;         /* time(stock)/time(variant) is 1/timing.ratio; n == 0: not timed */
	double speedup, speedup_lo, speedup_hi; /* stock time / variant time, 95 % interval; 0: not timed */
	bool confirmed;           /* passed the confirmation bar; at most one per set */
	char reason[256];         /* why it was rejected or not timed, "" otherwise */
	uint8_t *cubin;           /* owned by the set */
	size_t cubin_size;
} st_variant;

typedef void (*st_variants_progress)(void *user, const char *line);

#define ST_VARIANTS_OPTS_VERSION 1
typedef struct st_variants_opts {
	unsigned version;
	const char *const *ptxas;    /* extra binaries to try (n_ptxas of them) */
	size_t n_ptxas;
	bool discover;               /* also $SASSTUNE_PTXAS (a ':' list), the newest nvidia-cuda-nvcc
	                                wheel's ptxas and Triton's bundled ones (default true) */
	const char *stock_ptxas;     /* the binary that made the stock cubin (NULL: unknown) */
	const char *base_options;    /* options that made the stock cubin (NULL: "-lineinfo", Triton's) */
	const char *arch;            /* "sm_90a" when base_options names none (default from the cubin:
	                                sm_NN, with "a" from sm_90 on; sm_90a without a stock cubin) */
	unsigned block_threads;      /* threads per block for the --maxrregcount choice (0 unknown: none;
	                                none either when the entry has .reqntid/.maxntid, which make
	                                ptxas 12.8..13.5 ignore --maxrregcount) */
	double compile_timeout_s;    /* per ptxas run (default 120) */
	unsigned jobs;               /* parallel compiles (default: online CPUs) */
	unsigned pairs;              /* quick paired timing per variant (default 100) */
	unsigned confirm_pairs;      /* confirmation of the best (default 200, at least 200) */
	double confirm_min;          /* the interval's low end must exceed this (default 1.005) */
	st_runtime_options runtime;  /* the session on the stock cubin */
	st_variants_progress progress; void *progress_user; /* one line per step, may be NULL */
	const char *probe_dir;       /* remember each binary's version and knobs here, keyed by its real
	                                path, size, mtime and inode (NULL: ask every binary every time,
	                                two runs of ~100 ms each); the pass uses <cache dir>/ptxas-probes */
	const char *const *controls; /* ptxas advanced-controls files: one more variant per (file, binary
	                                whose --help lists --apply-controls), "--apply-controls=FILE";
	                                a binary without it gets a rejected row (n_controls of them) */
	size_t n_controls;
} st_variants_opts;
void st_variants_opts_init(st_variants_opts *o);

typedef struct st_variants st_variants;

/* CPU stage.  kernel: the entry to compare (NULL: the cubin's only entry).  stock NULL: the
 * stock cubin is the PTX through o->stock_ptxas with the base options (ST_ETOOL when that
 * compile fails or there is no stock_ptxas).  Errors only for bad arguments, unreadable
 * stock cubins, no memory or no temporary folder; every ptxas problem is a variant's reason. */
st_status st_variants_compile(const char *ptx, size_t ptx_len, const uint8_t *stock, size_t stock_size,
			      const char *kernel, const st_variants_opts *o, st_variants **out, st_error *err);
/* GPU stage; ST_EDEVICE (set untouched but for its note) when there is no GPU.  A candidate is
 * a variant that compiled, is no duplicate and has no reason yet. */
st_status st_variants_measure(st_variants *v, const st_launch *launch, const st_variants_opts *o, st_error *err);

size_t st_variants_count(const st_variants *v);
const st_variant *st_variants_get(const st_variants *v, size_t i);
/* Index of the confirmed winner, 0 (stock) when none. */
size_t st_variants_best(const st_variants *v);
/* The kernel compared (the entry's name). */
const char *st_variants_kernel(const st_variants *v);
/* Why the GPU steps did not run ("GPU steps skipped: ..."), "" once measured. */
const char *st_variants_note(const st_variants *v);
/* The table as JSON (schema "sasstune-variants-1"; docs/variants.md), malloc'ed. */
char *st_variants_json(const st_variants *v);
void st_variants_free(st_variants *v);
#endif
