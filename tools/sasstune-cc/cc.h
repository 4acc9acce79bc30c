/* sasstune-cc: shared pieces of the compiler driver (not library API).
 *
 *   llvm.c    LLVM IR -> PTX through the LLVM C API (NVPTX target), kernel names
 *   ptxas.c   finding ptxas, its version, PTX -> cubin
 *   proc.c    running a tool with fork/exec (no shell), capturing its output
 *   pass.c    loading libsasstune.so with dlopen and running the pass
 *   main.c    the command line
 */
#ifndef ST_CC_H
#define ST_CC_H

#include "sasstune/error.h"
#include "util/util.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
	CC_EXIT_OK = 0,
	CC_EXIT_FAIL = 1,
	CC_EXIT_USAGE = 2,
};

/* Print "sasstune-cc: message" on stderr. */
void cc_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* -o before any work (outpath.c): CC_EXIT_OK, or the exit code after saying why (2: a folder or
 * one of inputs; 1: its folder is missing or not writable). */
int cc_check_output(const char *out, const char *const *inputs, size_t n);

/* Print with -v only. */
extern bool cc_verbose;
void cc_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- proc.c --------------------------------------------------------------- */

typedef struct cc_proc_result {
	st_buf out, err;   /* captured stdout and stderr (NUL-terminated when non-empty) */
	int exit_code;     /* valid when !signaled */
	int signal;        /* non-zero when the tool was killed by a signal */
	bool timed_out;
} cc_proc_result;

/* Run argv[0] (a path, not searched in PATH) with argv, no shell, stdin from
 * /dev/null, capturing stdout and stderr.  Kills it after timeout_s seconds
 * (0: no limit).  Fails only when the tool could not be started. */
st_status cc_run_tool(char *const argv[], unsigned timeout_s, cc_proc_result *res, st_error *err);
void cc_proc_result_free(cc_proc_result *res);

/* Fork and run fn(arg, out_fd) in the child, which then exits with fn's
 * return value; what fn writes to out_fd lands in res->out, its stderr in
 * res->err.  For work that may crash (LLVM on hostile IR). */
typedef int (*cc_child_fn)(void *arg, int out_fd);
st_status cc_run_child(const char *what, cc_child_fn fn, void *arg, unsigned timeout_s, cc_proc_result *res,
		       st_error *err);

/* The first line of text (at most max-1 chars) into out, trailing blanks removed. */
void cc_first_line(const char *text, char *out, size_t max);

/* ---- llvm.c --------------------------------------------------------------- */

typedef struct cc_ptx {
	char *ptx;          /* NUL-terminated PTX text */
	size_t ptx_len;
	char **kernels;     /* entry names found in the IR */
	size_t n_kernels;
	char ptx_version[16];  /* from the PTX's .version line, e.g. "7.8" */
} cc_ptx;

/* Is arch (e.g. "sm_90") one we compile for?  Fills a list of them otherwise. */
bool cc_arch_supported(const char *arch);
const char *cc_arch_list(void);

/* The LLVM library version, e.g. "19.1.7". */
void cc_llvm_version(char *out, size_t max);

/* Parse, verify and compile LLVM IR (text or bitcode) to PTX for arch, in a
 * child process so that an LLVM crash on hostile IR is reported, not shared.
 * opt_level < 0: no IR pipeline, default codegen (like llc);
 * 0..3: run LLVM's default<On> pipeline first and codegen at that level. */
st_status cc_compile_ir(const char *path, const uint8_t *ir, size_t ir_len, const char *arch,
			int opt_level, cc_ptx *out, st_error *err);
void cc_ptx_free(cc_ptx *p);

/* ---- ptxas.c -------------------------------------------------------------- */

typedef struct cc_ptxas {
	char path[4096];
	const char *found_by;   /* "SASSTUNE_PTXAS", "CUDA_HOME", "PATH" */
	char version[32];       /* e.g. "12.8.93" */
} cc_ptxas;

/* Find ptxas (SASSTUNE_PTXAS, else $CUDA_HOME/bin/ptxas, else PATH) and
 * ask it its version. */
st_status cc_ptxas_find(cc_ptxas *px, st_error *err);

/* Assemble ptx_path into a cubin for arch; extra: more ptxas options. */
st_status cc_ptxas_run(const cc_ptxas *px, const char *ptx_path, const char *cubin_path,
		       const char *arch, char *const *extra, size_t n_extra, st_error *err);

/* ---- pass.c --------------------------------------------------------------- */

struct st_plugin_info;
typedef struct cc_plugin {
	void *handle;
	const struct st_plugin_info *info;
	char path[4096];
	const char *found_by;   /* "SASSTUNE_PLUGIN", "next to sasstune-cc", ... */
} cc_plugin;

/* Find and dlopen libsasstune.so, look up sasstune_plugin_info and check it. */
st_status cc_plugin_load(cc_plugin *pl, st_error *err);
void cc_plugin_unload(cc_plugin *pl);

#endif
