/* sasstune-cc: LLVM IR -> PTX through the LLVM C API and its NVPTX target.
 *
 * Built against Debian's LLVM 19 (llvm-19-dev): its NVPTX back end knows
 * sm_90/sm_90a and PTX 7.8/8.x, which is what Hopper needs.  Every LLVM object
 * made here is disposed before returning, so LeakSanitizer stays quiet. */
#include "cc.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/ErrorHandling.h>
#include <llvm-c/IRReader.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CC_NVPTX_TRIPLE "nvptx64-nvidia-cuda"

/* Architectures sasstune-cc compiles for: what LLVM 19's NVPTX target and
 * ptxas 12.x both know, from Volta on.  sasstune itself rewrites sm_90 (and
 * reads sm_80/86); the pass leaves other cubins unchanged and says so. */
static const char *const cc_archs[] = {"sm_70", "sm_72", "sm_75", "sm_80", "sm_86",
				       "sm_87", "sm_89", "sm_90", "sm_90a"};

bool cc_arch_supported(const char *arch)
{
	for (size_t i = 0; i < sizeof cc_archs / sizeof cc_archs[0]; i++)
		if (!strcmp(arch, cc_archs[i]))
			return true;
	return false;
}

const char *cc_arch_list(void)
{
	return "sm_70, sm_72, sm_75, sm_80, sm_86, sm_87, sm_89, sm_90, sm_90a";
}

void cc_llvm_version(char *out, size_t max)
{
	unsigned maj = 0, min = 0, patch = 0;
	LLVMGetVersion(&maj, &min, &patch);
	snprintf(out, max, "%u.%u.%u", maj, min, patch);
}

void cc_ptx_free(cc_ptx *p)
{
	free(p->ptx);
	for (size_t i = 0; i < p->n_kernels; i++)
		free(p->kernels[i]);
	free(p->kernels);
	memset(p, 0, sizeof *p);
}

/* ---- diagnostics ------------------------------------------------------------ */

/* LLVM reports some codegen problems through report_fatal_error, which ends
 * the process after calling this handler; say which file failed, one line. */
static const char *fatal_path = "input";
static int result_fd = -1; /* the child's pipe to the parent */

static void send_result(st_status status, const char *msg, const cc_ptx *p);

static void on_fatal(const char *reason)
{
	char line[300], msg[ST_ERROR_MSG_MAX + 64];
	cc_first_line(reason, line, sizeof line);
	snprintf(msg, sizeof msg, "%.180s: LLVM cannot compile it: %s", fatal_path, line);
	send_result(ST_ETOOL, msg, NULL);
	_exit(CC_EXIT_FAIL);
}

struct diag_ctx {
	const char *path;
	char first_error[512];
	int errors;
};

static void on_diagnostic(LLVMDiagnosticInfoRef di, void *opaque)
{
	struct diag_ctx *ctx = opaque;
	char *desc = LLVMGetDiagInfoDescription(di);
	char line[512];
	cc_first_line(desc, line, sizeof line);
	LLVMDisposeMessage(desc);
	switch (LLVMGetDiagInfoSeverity(di)) {
	case LLVMDSError:
		if (!ctx->errors++)
			snprintf(ctx->first_error, sizeof ctx->first_error, "%s", line);
		break;
	case LLVMDSWarning:
		cc_msg("%s: warning: %s", ctx->path, line);
		break;
	default:
		break;
	}
}

/* ---- kernels --------------------------------------------------------------- */

static st_status add_kernel(cc_ptx *out, const char *name, size_t len, st_error *err)
{
	for (size_t i = 0; i < out->n_kernels; i++)
		if (strlen(out->kernels[i]) == len && !memcmp(out->kernels[i], name, len))
			return ST_OK;
	char **k = realloc(out->kernels, (out->n_kernels + 1) * sizeof *k);
	if (!k)
		return st_error_set(err, ST_ENOMEM, "out of memory");
	out->kernels = k;
	char *s = malloc(len + 1);
	if (!s)
		return st_error_set(err, ST_ENOMEM, "out of memory");
	memcpy(s, name, len);
	s[len] = 0;
	out->kernels[out->n_kernels++] = s;
	return ST_OK;
}

/* Kernels are function definitions with the ptx_kernel calling convention, or
 * named by an !nvvm.annotations entry {ptr @f, !"kernel", i32 1}. */
static st_status find_kernels(LLVMModuleRef m, cc_ptx *out, st_error *err)
{
	for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
		if (LLVMIsDeclaration(f) || LLVMGetFunctionCallConv(f) != LLVMPTXKernelCallConv)
			continue;
		size_t len;
		const char *name = LLVMGetValueName2(f, &len);
		st_status rc = add_kernel(out, name, len, err);
		if (rc != ST_OK)
			return rc;
	}
	unsigned n = LLVMGetNamedMetadataNumOperands(m, "nvvm.annotations");
	if (!n)
		return ST_OK;
	LLVMValueRef *nodes = calloc(n, sizeof *nodes);
	if (!nodes)
		return st_error_set(err, ST_ENOMEM, "out of memory");
	LLVMGetNamedMetadataOperands(m, "nvvm.annotations", nodes);
	st_status rc = ST_OK;
	for (unsigned i = 0; i < n && rc == ST_OK; i++) {
		unsigned nops = LLVMGetMDNodeNumOperands(nodes[i]);
		if (nops < 3)
			continue;
		LLVMValueRef *ops = calloc(nops, sizeof *ops);
		if (!ops) {
			rc = st_error_set(err, ST_ENOMEM, "out of memory");
			break;
		}
		LLVMGetMDNodeOperands(nodes[i], ops);
		/* operands come in (key, value) pairs after the function */
		LLVMValueRef f = ops[0] ? LLVMIsAFunction(ops[0]) : NULL;
		for (unsigned k = 1; f && !LLVMIsDeclaration(f) && k + 1 < nops; k += 2) {
			unsigned klen = 0;
			const char *key = ops[k] ? LLVMGetMDString(ops[k], &klen) : NULL;
			if (!key || klen != 6 || memcmp(key, "kernel", 6))
				continue;
			if (!ops[k + 1] || !LLVMIsAConstantInt(ops[k + 1]) || LLVMConstIntGetZExtValue(ops[k + 1]) != 1)
				continue;
			size_t len;
			const char *name = LLVMGetValueName2(f, &len);
			rc = add_kernel(out, name, len, err);
			break;
		}
		free(ops);
	}
	free(nodes);
	return rc;
}

/* ---- compile ---------------------------------------------------------------- */

static void ptx_version_of(const char *ptx, char *out, size_t max)
{
	out[0] = 0;
	const char *v = strstr(ptx, "\n.version ");
	if (!v)
		return;
	v += strlen("\n.version ");
	size_t n = strspn(v, "0123456789.");
	if (n >= max)
		n = max - 1;
	memcpy(out, v, n);
	out[n] = 0;
}

static bool llvm_initialized;

static void init_nvptx(void)
{
	if (llvm_initialized)
		return;
	LLVMInitializeNVPTXTargetInfo();
	LLVMInitializeNVPTXTarget();
	LLVMInitializeNVPTXTargetMC();
	LLVMInitializeNVPTXAsmPrinter();
	LLVMInstallFatalErrorHandler(on_fatal);
	llvm_initialized = true;
}

static st_status compile_in_process(const char *path, const uint8_t *ir, size_t ir_len, const char *arch,
				    int opt_level, cc_ptx *out, st_error *err)
{
	memset(out, 0, sizeof *out);
	init_nvptx();
	fatal_path = path;

	st_status rc = ST_OK;
	char *msg = NULL;
	LLVMModuleRef m = NULL;
	LLVMTargetMachineRef tm = NULL;
	LLVMMemoryBufferRef asm_buf = NULL;
	LLVMTargetDataRef dl = NULL;
	struct diag_ctx diag = {.path = path};

	LLVMContextRef ctx = LLVMContextCreate();
	LLVMContextSetDiagnosticHandler(ctx, on_diagnostic, &diag);

	/* The buffer is copied and NUL-terminated; the parser takes ownership. */
	LLVMMemoryBufferRef in = LLVMCreateMemoryBufferWithMemoryRangeCopy((const char *)ir, ir_len, path);
	if (LLVMParseIRInContext(ctx, in, &m, &msg)) {
		char line[400];
		cc_first_line(msg, line, sizeof line);
		/* LLVM's text parser starts its message with the buffer name already */
		if (!strncmp(line, path, strlen(path)))
			rc = st_error_set(err, ST_EFORMAT, "%s (not valid LLVM IR)", line);
		else
			rc = st_error_set(err, ST_EFORMAT, "%s: not valid LLVM IR: %s", path, line);
		m = NULL;
		goto done;
	}
	if (LLVMVerifyModule(m, LLVMReturnStatusAction, &msg)) {
		char line[400];
		cc_first_line(msg, line, sizeof line);
		rc = st_error_set(err, ST_EFORMAT, "%s: invalid LLVM IR: %s", path, line);
		goto done;
	}
	if (msg) {
		LLVMDisposeMessage(msg);
		msg = NULL;
	}

	const char *triple = LLVMGetTarget(m);
	if (!triple || !*triple) {
		LLVMSetTarget(m, CC_NVPTX_TRIPLE);
	} else if (strncmp(triple, "nvptx", 5)) {
		rc = st_error_set(err, ST_EUNSUPPORTED, "%s: target triple '%s' is not NVPTX (want %s)", path,
				  triple, CC_NVPTX_TRIPLE);
		goto done;
	}
	triple = LLVMGetTarget(m);

	if ((rc = find_kernels(m, out, err)) != ST_OK)
		goto done;
	if (!out->n_kernels) {
		rc = st_error_set(err, ST_ENOTFOUND,
				  "%s: no kernel in the module (define a function with the ptx_kernel calling "
				  "convention or an !nvvm.annotations \"kernel\" entry)", path);
		goto done;
	}

	LLVMTargetRef target;
	if (LLVMGetTargetFromTriple(triple, &target, &msg)) {
		char line[300];
		cc_first_line(msg, line, sizeof line);
		rc = st_error_set(err, ST_EUNSUPPORTED, "%s: no LLVM target for '%s': %s", path, triple, line);
		goto done;
	}
	if (msg) {
		LLVMDisposeMessage(msg);
		msg = NULL;
	}
	LLVMCodeGenOptLevel cg = LLVMCodeGenLevelDefault;
	if (opt_level == 0)
		cg = LLVMCodeGenLevelNone;
	else if (opt_level == 1)
		cg = LLVMCodeGenLevelLess;
	else if (opt_level == 3)
		cg = LLVMCodeGenLevelAggressive;
	/* sm_90a's wgmma/setmaxnreg need PTX 8.0; LLVM picks the minimum PTX for
	 * the others (7.8 for sm_90). */
	const char *features = !strcmp(arch, "sm_90a") ? "+ptx80" : "";
	tm = LLVMCreateTargetMachine(target, triple, arch, features, cg, LLVMRelocDefault, LLVMCodeModelDefault);
	if (!tm) {
		rc = st_error_set(err, ST_EUNSUPPORTED, "%s: LLVM cannot make a target machine for %s %s", path,
				  triple, arch);
		goto done;
	}
	const char *layout = LLVMGetDataLayoutStr(m);
	if (!layout || !*layout) {
		dl = LLVMCreateTargetDataLayout(tm);
		LLVMSetModuleDataLayout(m, dl);
	}

	if (opt_level >= 0) {
		char pipeline[32];
		snprintf(pipeline, sizeof pipeline, "default<O%d>", opt_level);
		LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
		LLVMErrorRef e = LLVMRunPasses(m, pipeline, tm, po);
		LLVMDisposePassBuilderOptions(po);
		if (e) {
			char *em = LLVMGetErrorMessage(e);
			rc = st_error_set(err, ST_ETOOL, "%s: LLVM pipeline %s failed: %s", path, pipeline, em);
			LLVMDisposeErrorMessage(em);
			goto done;
		}
	}

	if (LLVMTargetMachineEmitToMemoryBuffer(tm, m, LLVMAssemblyFile, &msg, &asm_buf)) {
		char line[300];
		cc_first_line(msg, line, sizeof line);
		rc = st_error_set(err, ST_ETOOL, "%s: LLVM cannot emit PTX: %s", path, line);
		asm_buf = NULL;
		goto done;
	}
	if (diag.errors) {
		rc = st_error_set(err, ST_ETOOL, "%s: LLVM cannot compile it: %s", path, diag.first_error);
		goto done;
	}
	size_t len = LLVMGetBufferSize(asm_buf);
	out->ptx = malloc(len + 1);
	if (!out->ptx) {
		rc = st_error_set(err, ST_ENOMEM, "out of memory");
		goto done;
	}
	memcpy(out->ptx, LLVMGetBufferStart(asm_buf), len);
	out->ptx[len] = 0;
	out->ptx_len = len;
	ptx_version_of(out->ptx, out->ptx_version, sizeof out->ptx_version);

done:
	if (msg)
		LLVMDisposeMessage(msg);
	if (asm_buf)
		LLVMDisposeMemoryBuffer(asm_buf);
	if (dl)
		LLVMDisposeTargetData(dl);
	if (tm)
		LLVMDisposeTargetMachine(tm);
	if (m)
		LLVMDisposeModule(m);
	LLVMContextDispose(ctx);
	fatal_path = "input";
	if (rc != ST_OK)
		cc_ptx_free(out);
	return rc;
}

/* ---- the child process ---------------------------------------------------------
 * LLVM can crash on hostile IR (e.g. fp128 arithmetic makes LLVM 19's NVPTX
 * back end fault).  The compile runs in a forked child, which sends back one
 * record: "STCC1", status, message, PTX, PTX version, kernel names. */

#define RECORD_MAGIC "STCC1"

static bool put_u32(st_buf *b, uint32_t v)
{
	uint8_t le[4];
	st_put_le32(le, v);
	return st_buf_append(b, le, 4) == ST_OK;
}

static bool put_str(st_buf *b, const char *s, size_t len)
{
	return put_u32(b, (uint32_t)len) && (!len || st_buf_append(b, s, len) == ST_OK);
}

static void send_result(st_status status, const char *msg, const cc_ptx *p)
{
	if (result_fd < 0)
		return;
	st_buf b = {0};
	bool ok = st_buf_append(&b, RECORD_MAGIC, 5) == ST_OK && put_u32(&b, (uint32_t)(int32_t)status) &&
		  put_str(&b, msg ? msg : "", msg ? strlen(msg) : 0);
	if (p && ok) {
		ok = put_str(&b, p->ptx, p->ptx_len) && put_str(&b, p->ptx_version, strlen(p->ptx_version)) &&
		     put_u32(&b, (uint32_t)p->n_kernels);
		for (size_t i = 0; ok && i < p->n_kernels; i++)
			ok = put_str(&b, p->kernels[i], strlen(p->kernels[i]));
	} else if (ok) {
		ok = put_str(&b, "", 0) && put_str(&b, "", 0) && put_u32(&b, 0);
	}
	size_t off = 0;
	while (ok && off < b.len) {
		ssize_t w = write(result_fd, b.data + off, b.len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	st_buf_free(&b);
	result_fd = -1; /* one record only */
}

struct child_job {
	const char *path, *arch;
	const uint8_t *ir;
	size_t ir_len;
	int opt_level;
};

static int child_main(void *arg, int fd)
{
	struct child_job *j = arg;
	result_fd = fd;
	cc_ptx p;
	st_error err = {0};
	st_status rc = compile_in_process(j->path, j->ir, j->ir_len, j->arch, j->opt_level, &p, &err);
	send_result(rc, rc == ST_OK ? "" : err.msg, rc == ST_OK ? &p : NULL);
	if (rc == ST_OK)
		cc_ptx_free(&p);
	return 0;
}

struct reader {
	const uint8_t *p;
	size_t left;
};

static bool get_u32(struct reader *r, uint32_t *v)
{
	if (r->left < 4)
		return false;
	*v = st_le32(r->p);
	r->p += 4;
	r->left -= 4;
	return true;
}

static bool get_str(struct reader *r, char **out, size_t *len_out)
{
	uint32_t len;
	if (!get_u32(r, &len) || len > r->left)
		return false;
	char *s = malloc((size_t)len + 1);
	if (!s)
		return false;
	memcpy(s, r->p, len);
	s[len] = 0;
	r->p += len;
	r->left -= len;
	*out = s;
	if (len_out)
		*len_out = len;
	return true;
}

/* Decode the child's record; false when it is missing or cut short. */
static bool parse_record(const st_buf *b, st_status *status, char *msg, size_t msg_max, cc_ptx *out)
{
	struct reader r = {b->data, b->len};
	if (r.left < 5 || memcmp(r.p, RECORD_MAGIC, 5))
		return false;
	r.p += 5;
	r.left -= 5;
	uint32_t st, nk;
	char *m = NULL, *ver = NULL;
	if (!get_u32(&r, &st) || !get_str(&r, &m, NULL))
		return false;
	snprintf(msg, msg_max, "%s", m);
	free(m);
	*status = (st_status)(int32_t)st;
	if (!get_str(&r, &out->ptx, &out->ptx_len) || !get_str(&r, &ver, NULL) || !get_u32(&r, &nk) || nk > r.left) {
		free(ver);
		return false;
	}
	snprintf(out->ptx_version, sizeof out->ptx_version, "%s", ver);
	free(ver);
	out->kernels = calloc(nk ? nk : 1, sizeof *out->kernels);
	if (!out->kernels)
		return false;
	for (uint32_t i = 0; i < nk; i++) {
		if (!get_str(&r, &out->kernels[i], NULL))
			return false;
		out->n_kernels++;
	}
	return r.left == 0;
}

/* LLVM on a big kernel can be slow; a hang is still a failure. */
#define CC_LLVM_TIMEOUT_S 600

st_status cc_compile_ir(const char *path, const uint8_t *ir, size_t ir_len, const char *arch,
			int opt_level, cc_ptx *out, st_error *err)
{
	memset(out, 0, sizeof *out);
	struct child_job job = {.path = path, .arch = arch, .ir = ir, .ir_len = ir_len, .opt_level = opt_level};
	cc_proc_result res;
	st_status rc = cc_run_child("LLVM", child_main, &job, CC_LLVM_TIMEOUT_S, &res, err);
	if (rc != ST_OK)
		return rc;
	st_status status = ST_OK;
	char msg[ST_ERROR_MSG_MAX];
	bool got = parse_record(&res.out, &status, msg, sizeof msg, out);
	const char *child_err = res.err.len ? (const char *)res.err.data : "";
	if (got && !res.signal && !res.timed_out && res.exit_code == 0) {
		/* the child's own warnings */
		fputs(child_err, stderr);
		rc = status == ST_OK ? ST_OK : st_error_set(err, status, "%s", msg);
	} else if (got && status != ST_OK && !res.signal && !res.timed_out) {
		rc = st_error_set(err, status, "%s", msg); /* LLVM's fatal error handler */
	} else {
		if (cc_verbose || got)
			fputs(child_err, stderr); /* a crash report, or the sanitizers' words */
		if (res.timed_out)
			rc = st_error_set(err, ST_ETIMEOUT, "%s: LLVM did not finish within %d s", path, CC_LLVM_TIMEOUT_S);
		else if (got && !res.signal)
			rc = st_error_set(err, ST_ETOOL, "%s: the LLVM child process compiled it but exited with status %d "
					  "(its messages are above)", path, res.exit_code);
		else if (res.signal)
			rc = st_error_set(err, ST_ETOOL, "%s: LLVM crashed on it (signal %d)%s", path, res.signal,
					  cc_verbose ? "" : "; -v shows LLVM's report");
		else
			rc = st_error_set(err, ST_ETOOL, "%s: LLVM crashed on it (exit status %d)%s", path,
					  res.exit_code, cc_verbose ? "" : "; -v shows LLVM's report");
	}
	cc_proc_result_free(&res);
	if (rc != ST_OK)
		cc_ptx_free(out);
	return rc;
}
