/* The GPU worker: owns one CUDA context, the input sets, the reference
 * outputs and a small cache of loaded modules; answers INIT, VERIFY, TIME,
 * PROFILE and CHECK requests.  After a kernel faults the context is unusable, so the worker
 * replies and exits; the caller starts a new one. */
#include "cuda.h"
#include "cupti.h"
#include "rt.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GUARD_BYTES (64u << 10) /* poisoned bytes on each side of every buffer */
#define GUARD_BYTE 0xA5
#define MAX_MODS 8
#define MAX_REPS 100000u
#define FLUSH_BYTES (256ull << 20)
#define HOT_MS 100.0 /* the GPU counts as warm this long after it was last busy */

typedef struct wmod {
	uint8_t *bytes;
	size_t size;
	uint64_t hash;
	CUmodule mod;
	CUfunction fn;
	int regs, local;
	unsigned long last_use;
	CUgraphExec sample; /* `reps` launches as one CUDA graph, made on first use */
} wmod;

/* A device buffer (a ptr param, or one of the spec's hidden "buffers"; see
 * slot_param): [base, ptr) guard, [ptr, ptr + bytes) data, then poison up to
 * ptr + padded (padded = bytes rounded up to 4) and another guard. */
typedef struct wbuf {
	CUdeviceptr base, ptr;
	uint64_t padded;
	CUdeviceptr *inputs;  /* one per input set */
	uint8_t **ref;        /* reference outputs on the host, one per input set */
	CUdeviceptr *ref_dev; /* the same on the device (padded bytes, poison included) */
} wbuf;

/* Compares two arrays of 32-bit words on the GPU and atomically keeps the
 * lowest index where they differ (res starts at ~0).  JIT-compiled by the
 * driver; if that fails, outputs are compared on the host instead. */
static const char cmp_ptx[] =
	".version 7.0\n.target sm_52\n.address_size 64\n"
	".visible .entry st_cmp32(.param .u64 p_a, .param .u64 p_b, .param .u64 p_n, .param .u64 p_res)\n{\n"
	"\t.reg .pred %p<3>;\n\t.reg .b32 %r<7>;\n\t.reg .b64 %rd<13>;\n"
	"\tld.param.u64 %rd1, [p_a];\n\tld.param.u64 %rd2, [p_b];\n"
	"\tld.param.u64 %rd3, [p_n];\n\tld.param.u64 %rd4, [p_res];\n"
	"\tcvta.to.global.u64 %rd1, %rd1;\n\tcvta.to.global.u64 %rd2, %rd2;\n\tcvta.to.global.u64 %rd4, %rd4;\n"
	"\tmov.u32 %r1, %ctaid.x;\n\tmov.u32 %r2, %ntid.x;\n\tmov.u32 %r3, %tid.x;\n\tmov.u32 %r4, %nctaid.x;\n"
	"\tmul.wide.u32 %rd5, %r1, %r2;\n\tcvt.u64.u32 %rd6, %r3;\n\tadd.u64 %rd5, %rd5, %rd6;\n"
	"\tmul.wide.u32 %rd7, %r4, %r2;\n"
	"$LOOP:\n\tsetp.ge.u64 %p1, %rd5, %rd3;\n\t@%p1 bra $END;\n"
	"\tshl.b64 %rd8, %rd5, 2;\n\tadd.u64 %rd9, %rd1, %rd8;\n\tadd.u64 %rd10, %rd2, %rd8;\n"
	"\tld.global.u32 %r5, [%rd9];\n\tld.global.u32 %r6, [%rd10];\n"
	"\tsetp.ne.u32 %p2, %r5, %r6;\n\t@%p2 bra $FOUND;\n"
	"\tadd.u64 %rd5, %rd5, %rd7;\n\tbra.uni $LOOP;\n"
	"$FOUND:\n\tatom.global.min.u64 %rd11, [%rd4], %rd5;\n"
	"$END:\n\tret;\n}\n";

typedef struct worker {
	int out_fd;
	st_cuda cu;
	CUdevice dev;
	CUcontext ctx;
	CUstream stream;
	st_launch *spec;
	unsigned sets, reps;
	uint64_t seed;
	bool flush, deterministic, fatal;
	double sample_us, warmup_ms, tol, kernel_ms;
	wbuf *bufs;          /* one per buffer slot: params, then the spec's hidden buffers */
	uint8_t *args_store; /* 64-byte aligned slot per param */
	void **args;
	uint8_t *host, *guard_host; /* pinned staging */
	uint64_t max_bytes;
	CUdeviceptr flushbuf;
	wmod mods[MAX_MODS];
	unsigned long clock;
	CUevent *events;
	size_t nevents;
	size_t nparams_kernel; /* from cuFuncGetParamInfo, 0 if unknown */
	size_t *param_sizes;
	int optin_shared;
	CUmodule cmp_mod;    /* the comparison kernel, NULL: compare on the host */
	CUfunction cmp_fn;
	CUdeviceptr results; /* 3 u64 per buffer slot: data, front guard, back guard */
	CUdeviceptr pattern; /* GUARD_BYTES of GUARD_BYTE */
	uint64_t *results_host;
	bool no_graphs;      /* graphs failed once: time with plain launches */
	double idle_since;   /* host time when the GPU last went idle (0: never busy) */
	st_cupti *cupti;     /* loaded at the first PROFILE request */
} worker;

/* ---- replies ---- */
static void reply(worker *w, st_status status, const char *msg, const st_rt_writer *extra)
{
	st_rt_writer r = {0};
	st_rt_put_u32(&r, (uint32_t)status);
	st_rt_put_str(&r, msg ? msg : "");
	if (extra && extra->b.len)
		st_rt_put_raw(&r, extra->b.data, extra->b.len);
	if (st_rt_msg_send(w->out_fd, ST_MSG_REPLY, &r, NULL) != ST_OK)
		w->fatal = true;
	st_buf_free(&r.b);
}

/* Tell the caller's watchdog how much GPU time is still to come. */
static void progress(worker *w, double remaining_ms)
{
	st_rt_writer r = {0};
	st_rt_put_f64(&r, remaining_ms);
	if (st_rt_msg_send(w->out_fd, ST_MSG_PROGRESS, &r, NULL) != ST_OK)
		w->fatal = true;
	st_buf_free(&r.b);
}

static st_status cuerr(worker *w, st_error *err, CUresult r, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static st_status cuerr(worker *w, st_error *err, CUresult r, const char *fmt, ...)
{
	char what[256], desc[200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	st_cuda_errstr(&w->cu, r, desc, sizeof desc);
	if (st_cuda_is_fault(r)) {
		w->fatal = true;
		return st_error_set(err, ST_ECRASH, "%s: %s", what, desc);
	}
	return st_error_set(err, ST_EDEVICE, "%s: %s", what, desc);
}

#define CU(call, ...)                                                \
	do {                                                         \
		CUresult r_ = (call);                                \
		if (r_ != CUDA_SUCCESS)                              \
			return cuerr(w, err, r_, __VA_ARGS__);       \
	} while (0)

/* ---- buffer slots: slot i < nparams is params[i], slot nparams + j is buffers[j] ---- */
static size_t nslots(const worker *w) { return w->spec->nparams + w->spec->nbuffers; }

static const st_param *slot_param(const worker *w, size_t i)
{
	return i < w->spec->nparams ? &w->spec->params[i] : &w->spec->buffers[i - w->spec->nparams];
}

/* The spec's field name: "params[2]" or "buffers[0]" */
static const char *slot_label(const worker *w, size_t i, char *out, size_t n)
{
	if (i < w->spec->nparams)
		snprintf(out, n, "params[%zu]", i);
	else
		snprintf(out, n, "buffers[%zu]", i - w->spec->nparams);
	return out;
}

/* For messages: the label, and a hidden buffer's name when it has one ("buffers[0] (c)") */
static const char *slot_name(const worker *w, size_t i, char *out, size_t n)
{
	const st_param *p = slot_param(w, i);
	char label[32];
	slot_label(w, i, label, sizeof label);
	if (i >= w->spec->nparams && p->name && p->name[0])
		snprintf(out, n, "%s (%.64s)", label, p->name);
	else
		snprintf(out, n, "%s", label);
	return out;
}

/* ---- modules ---- */
static void unload(worker *w, wmod *m)
{
	if (m->sample)
		w->cu.GraphExecDestroy(m->sample);
	if (m->mod)
		w->cu.ModuleUnload(m->mod);
	free(m->bytes);
	memset(m, 0, sizeof *m);
}

/* Load a cubin and check that its kernel fits the launch spec. */
static st_status load_module(worker *w, const uint8_t *bytes, size_t size, wmod *m, st_error *err)
{
	memset(m, 0, sizeof *m);
	if (!(m->bytes = malloc(size ? size : 1)))
		return st_error_set(err, ST_ENOMEM, "out of memory");
	memcpy(m->bytes, bytes, size);
	m->size = size;
	m->hash = st_rt_hash64(bytes, size, 0);
	CUresult r = w->cu.ModuleLoadData(&m->mod, m->bytes);
	if (r != CUDA_SUCCESS) {
		m->mod = NULL;
		st_status rc = cuerr(w, err, r, "the driver rejected the cubin");
		unload(w, m);
		if (rc == ST_EDEVICE) {
			rc = ST_EFORMAT;
			if (err)
				err->code = rc;
		}
		return rc;
	}
	const char *name = w->spec->kernel;
	r = w->cu.ModuleGetFunction(&m->fn, m->mod, name);
	if (r != CUDA_SUCCESS) {
		unload(w, m);
		return st_error_set(err, ST_ENOTFOUND, "the cubin has no kernel named %s", name);
	}
	int maxthreads = 0, shared_static = 0;
	w->cu.FuncGetAttribute(&m->regs, ST_CU_FUNC_NUM_REGS, m->fn);
	w->cu.FuncGetAttribute(&m->local, ST_CU_FUNC_LOCAL_SIZE_BYTES, m->fn);
	w->cu.FuncGetAttribute(&maxthreads, ST_CU_FUNC_MAX_THREADS_PER_BLOCK, m->fn);
	w->cu.FuncGetAttribute(&shared_static, ST_CU_FUNC_SHARED_SIZE_BYTES, m->fn);
	unsigned threads = w->spec->block[0] * w->spec->block[1] * w->spec->block[2];
	st_status rc = ST_OK;
	if (maxthreads > 0 && threads > (unsigned)maxthreads)
		rc = st_error_set(err, ST_EFORMAT, "kernel %s allows at most %d threads per block, the launch spec asks for %u",
				  name, maxthreads, threads);
	else if (w->optin_shared > 0 && (long)shared_static + w->spec->shared_bytes > w->optin_shared)
		rc = st_error_set(err, ST_EFORMAT, "kernel %s needs %d bytes of static plus %u of dynamic shared memory; the device allows %d",
				  name, shared_static, w->spec->shared_bytes, w->optin_shared);
	else if (w->spec->shared_bytes > 48u * 1024 &&
		 (r = w->cu.FuncSetAttribute(m->fn, ST_CU_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES,
					     (int)w->spec->shared_bytes)) != CUDA_SUCCESS)
		rc = cuerr(w, err, r, "cannot opt kernel %s in to %u bytes of dynamic shared memory", name,
			   w->spec->shared_bytes);
	if (rc == ST_OK && w->cu.FuncGetParamInfo) {
		/* the kernel's parameter list must be the one the spec describes */
		size_t off, sz, n = 0;
		while (n <= w->spec->nparams && w->cu.FuncGetParamInfo(m->fn, n, &off, &sz) == CUDA_SUCCESS) {
			if (n < w->spec->nparams) {
				const st_param *p = &w->spec->params[n];
				size_t want = p->kind == ST_P_PTR ? 8 : p->size;
				if (sz != want) {
					rc = st_error_set(err, ST_EFORMAT, "params[%zu]: kernel %s takes %zu bytes there, the launch spec gives %zu",
							  n, name, sz, want);
					break;
				}
			}
			n++;
		}
		if (rc == ST_OK && n != w->spec->nparams)
			rc = st_error_set(err, ST_EFORMAT, "kernel %s takes %s%zu parameters, the launch spec gives %zu", name,
					  n > w->spec->nparams ? "more than " : "", n, w->spec->nparams);
	}
	if (rc != ST_OK)
		unload(w, m);
	return rc;
}

/* The module for these bytes (NULL/0: the reference, kept in slot 0). */
static st_status get_module(worker *w, const uint8_t *bytes, size_t size, wmod **out, double *load_ms,
			    st_error *err)
{
	*load_ms = 0;
	if (!size) {
		*out = &w->mods[0];
		return ST_OK;
	}
	uint64_t h = st_rt_hash64(bytes, size, 0);
	for (int i = 0; i < MAX_MODS; i++) {
		wmod *m = &w->mods[i];
		if (m->mod && m->hash == h && m->size == size && !memcmp(m->bytes, bytes, size)) {
			m->last_use = ++w->clock;
			*out = m;
			return ST_OK;
		}
	}
	int slot = -1;
	for (int i = 1; i < MAX_MODS; i++)
		if (!w->mods[i].mod) {
			slot = i;
			break;
		}
	if (slot < 0) {
		slot = 1;
		for (int i = 2; i < MAX_MODS; i++)
			if (w->mods[i].last_use < w->mods[slot].last_use)
				slot = i;
		unload(w, &w->mods[slot]);
	}
	double t0 = st_rt_now_ms();
	st_status rc = load_module(w, bytes, size, &w->mods[slot], err);
	*load_ms = st_rt_now_ms() - t0;
	if (rc != ST_OK)
		return rc;
	w->mods[slot].last_use = ++w->clock;
	*out = &w->mods[slot];
	return ST_OK;
}

/* ---- running ---- */
static st_status launch(worker *w, const wmod *m, st_error *err)
{
	const st_launch *l = w->spec;
	CU(w->cu.LaunchKernel(m->fn, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2],
			      l->shared_bytes, w->stream, w->args, NULL),
	   "launching %s", l->kernel);
	return ST_OK;
}

/* Put input set k into the working buffers and poison the guards. */
static st_status reset_buffers(worker *w, unsigned k, st_error *err)
{
	for (size_t i = 0; i < nslots(w); i++) {
		const st_param *p = slot_param(w, i);
		if (p->kind != ST_P_PTR || !p->bytes)
			continue;
		wbuf *b = &w->bufs[i];
		CU(w->cu.MemsetD8Async(b->base, GUARD_BYTE, GUARD_BYTES, w->stream), "poisoning guard bytes");
		CU(w->cu.MemsetD8Async(b->ptr + p->bytes, GUARD_BYTE, b->padded - p->bytes + GUARD_BYTES, w->stream),
		   "poisoning guard bytes");
		CU(w->cu.MemcpyDtoDAsync(b->ptr, b->inputs[k], p->bytes, w->stream), "copying input set %u", k);
	}
	return ST_OK;
}

static st_status check_guards(worker *w, size_t i, st_error *err)
{
	const st_param *p = slot_param(w, i);
	wbuf *b = &w->bufs[i];
	size_t back = b->padded - p->bytes + GUARD_BYTES;
	CU(w->cu.MemcpyDtoH(w->guard_host, b->base, GUARD_BYTES), "reading guard bytes");
	CU(w->cu.MemcpyDtoH(w->guard_host + GUARD_BYTES, b->ptr + p->bytes, back), "reading guard bytes");
	for (size_t j = 0; j < GUARD_BYTES + back; j++)
		if (w->guard_host[j] != GUARD_BYTE) {
			long off = j < GUARD_BYTES ? -(long)(GUARD_BYTES - j) : (long)(p->bytes + (j - GUARD_BYTES));
			char name[128];
			return st_error_set(err, ST_EMISMATCH, "%s: the kernel wrote outside the buffer (byte offset %ld)",
					    slot_name(w, i, name, sizeof name), off);
		}
	return ST_OK;
}

/* Run module m on input set k and wait for it. */
static st_status run_set(worker *w, const wmod *m, unsigned k, st_error *err)
{
	st_status rc = reset_buffers(w, k, err);
	if (rc == ST_OK)
		rc = launch(w, m, err);
	if (rc != ST_OK)
		return rc;
	CU(w->cu.StreamSynchronize(w->stream), "kernel %s on input set %u", w->spec->kernel, k);
	w->idle_since = st_rt_now_ms();
	return ST_OK;
}

static st_status launch_cmp(worker *w, CUdeviceptr a, CUdeviceptr b, uint64_t words, CUdeviceptr res, st_error *err)
{
	if (!words)
		return ST_OK;
	void *args[] = {&a, &b, &words, &res};
	uint64_t blocks = (words + 255) / 256;
	if (blocks > 1056)
		blocks = 1056;
	CU(w->cu.LaunchKernel(w->cmp_fn, (unsigned)blocks, 1, 1, 256, 1, 1, 0, w->stream, args, NULL),
	   "launching the comparison kernel");
	return ST_OK;
}

/* Bit-exact check of every buffer and guard against reference set k on the
 * GPU; only a buffer that differs is read back, to describe the difference. */
static st_status check_outputs_device(worker *w, unsigned k, st_error *err)
{
	size_t n = nslots(w);
	CU(w->cu.MemsetD32Async(w->results, 0xffffffffu, 6 * n, w->stream), "clearing comparison results");
	for (size_t i = 0; i < n; i++) {
		const st_param *p = slot_param(w, i);
		if (p->kind != ST_P_PTR || !p->bytes)
			continue;
		wbuf *b = &w->bufs[i];
		CUdeviceptr r = w->results + 24 * i;
		st_status rc = launch_cmp(w, b->base, w->pattern, GUARD_BYTES / 4, r + 8, err);
		if (rc == ST_OK)
			rc = launch_cmp(w, b->ptr + b->padded, w->pattern, GUARD_BYTES / 4, r + 16, err);
		if (rc == ST_OK)
			rc = launch_cmp(w, b->ptr, b->ref_dev[k], b->padded / 4, r, err);
		if (rc != ST_OK)
			return rc;
	}
	CU(w->cu.StreamSynchronize(w->stream), "comparing outputs");
	CU(w->cu.MemcpyDtoH(w->results_host, w->results, 24 * n), "reading comparison results");
	for (size_t i = 0; i < n; i++) {
		const st_param *p = slot_param(w, i);
		if (p->kind != ST_P_PTR || !p->bytes)
			continue;
		const uint64_t *r = &w->results_host[3 * i], none = ~0ull;
		char name[128];
		slot_name(w, i, name, sizeof name);
		if (r[1] != none || r[2] != none) /* word granularity, like the host check's first byte */
			return st_error_set(err, ST_EMISMATCH, "%s: the kernel wrote outside the buffer (byte offset %ld)", name,
					    r[1] != none ? -(long)(GUARD_BYTES - 4 * r[1]) : (long)(w->bufs[i].padded + 4 * r[2]));
		bool tail = r[0] != none && 4 * r[0] + 4 > p->bytes; /* the word holding the poisoned tail */
		if (r[0] == none || (!p->verify && !tail))
			continue;
		/* read it back: describe the difference, or find the write past the end */
		CU(w->cu.MemcpyDtoH(w->host, w->bufs[i].ptr, p->bytes), "reading %s", name);
		char why[300];
		bool same = st_rt_buffers_match(w->bufs[i].ref[k], w->host, p->bytes, p->dtype, true, 0, why, sizeof why);
		if (same && !tail) /* the host's reference agrees: the device's copy was written to */
			return st_error_set(err, ST_EMISMATCH, "input set %u: %s: the device copy of the reference changed "
					    "(byte offset %llu): a stray write", k, name, (unsigned long long)(4 * r[0]));
		if (same)
			return st_error_set(err, ST_EMISMATCH, "%s: the kernel wrote outside the buffer (byte offset %llu)",
					    name, (unsigned long long)p->bytes);
		if (p->verify)
			return st_error_set(err, ST_EMISMATCH, "input set %u: %s: %s", k, name, why);
	}
	return ST_OK;
}

/* Compare the working buffers with reference set k (or store them there). */
static st_status check_outputs(worker *w, unsigned k, bool store, bool exact, st_error *err)
{
	if (!store && exact && w->cmp_fn)
		return check_outputs_device(w, k, err);
	for (size_t i = 0; i < nslots(w); i++) {
		const st_param *p = slot_param(w, i);
		if (p->kind != ST_P_PTR || !p->bytes)
			continue;
		st_status rc = check_guards(w, i, err);
		if (rc != ST_OK)
			return rc;
		if (!p->verify && !store)
			continue;
		wbuf *b = &w->bufs[i];
		char name[128];
		slot_name(w, i, name, sizeof name);
		CU(w->cu.MemcpyDtoH(w->host, b->ptr, p->bytes), "reading %s", name);
		if (store) {
			memcpy(b->ref[k], w->host, p->bytes);
			if (w->cmp_fn) /* with the poisoned tail, as the comparison expects */
				CU(w->cu.MemcpyDtoDAsync(b->ref_dev[k], b->ptr, b->padded, w->stream), "keeping the reference");
			continue;
		}
		char why[300];
		if (!st_rt_buffers_match(b->ref[k], w->host, p->bytes, p->dtype, exact, w->tol, why, sizeof why))
			return st_error_set(err, ST_EMISMATCH, "input set %u: %s: %s", k, name, why);
	}
	return ST_OK;
}

static st_status ensure_events(worker *w, size_t n, st_error *err)
{
	if (w->nevents >= n)
		return ST_OK;
	CUevent *e = realloc(w->events, n * sizeof *e);
	if (!e)
		return st_error_set(err, ST_ENOMEM, "out of memory");
	w->events = e;
	while (w->nevents < n) {
		CU(w->cu.EventCreate(&w->events[w->nevents], 0), "creating an event");
		w->nevents++;
	}
	return ST_OK;
}

/* Capture m's `reps` launches as a CUDA graph, so that a timed sample costs
 * the CPU one launch: tiny kernels are then not paced by the CPU's launch
 * rate.  Where graphs are missing or fail, samples are plain launches. */
static void make_graph(worker *w, wmod *m)
{
	if (m->sample || w->no_graphs || w->reps <= 1)
		return;
	st_cuda *cu = &w->cu;
	CUgraph g = NULL;
	bool ok = cu->StreamBeginCapture && cu->StreamEndCapture && cu->GraphInstantiate && cu->GraphLaunch &&
		  cu->GraphExecDestroy && cu->GraphDestroy && cu->StreamBeginCapture(w->stream, 1 /* thread-local */) == CUDA_SUCCESS;
	if (ok) {
		const st_launch *l = w->spec;
		for (unsigned r = 0; ok && r < w->reps; r++)
			ok = cu->LaunchKernel(m->fn, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2],
					      l->shared_bytes, w->stream, w->args, NULL) == CUDA_SUCCESS;
		ok = cu->StreamEndCapture(w->stream, &g) == CUDA_SUCCESS && ok;
		ok = ok && g && cu->GraphInstantiate(&m->sample, g, 0) == CUDA_SUCCESS;
		if (g)
			cu->GraphDestroy(g);
	}
	if (!ok) {
		m->sample = NULL;
		w->no_graphs = true;
	}
}

/* Enqueue one timed sample: [flush] start, reps launches, end. */
static st_status sample(worker *w, const wmod *m, CUevent start, CUevent end, st_error *err)
{
	if (w->flush)
		CU(w->cu.MemsetD32Async(w->flushbuf, 0, FLUSH_BYTES / 4, w->stream), "flushing L2");
	CU(w->cu.EventRecord(start, w->stream), "recording an event");
	if (m->sample) {
		CU(w->cu.GraphLaunch(m->sample, w->stream), "launching %s", w->spec->kernel);
	} else {
		for (unsigned r = 0; r < w->reps; r++) {
			st_status rc = launch(w, m, err);
			if (rc != ST_OK)
				return rc;
		}
	}
	CU(w->cu.EventRecord(end, w->stream), "recording an event");
	return ST_OK;
}

/* Alternate A and B for `ms` of GPU time (at least two samples each). */
static st_status warmup(worker *w, const wmod *a, const wmod *b, double ms, st_error *err)
{
	double per = (w->kernel_ms > 0 ? w->kernel_ms : 0.01) * (w->reps ? w->reps : 1);
	unsigned long n = (unsigned long)(ms / per);
	if (n < 4)
		n = 4;
	if (n > 200000)
		n = 200000;
	for (unsigned long i = 0; i < n; i++) {
		const wmod *m = (i & 1) ? b : a;
		st_status rc;
		if (m->sample) {
			CU(w->cu.GraphLaunch(m->sample, w->stream), "launching %s", w->spec->kernel);
			continue;
		}
		for (unsigned r = 0; r < (w->reps ? w->reps : 1); r++)
			if ((rc = launch(w, m, err)) != ST_OK)
				return rc;
	}
	return ST_OK;
}

/* Interleaved pairs: pair i runs A then B when i is even, B then A when odd. */
static st_status time_pairs(worker *w, wmod *a, wmod *b, unsigned pairs, double *ta, double *tb, st_error *err)
{
	st_status rc = ensure_events(w, 4 * (size_t)pairs, err);
	make_graph(w, a);
	make_graph(w, b);
	if (a->sample && !b->sample) { /* both alike, or neither */
		w->cu.GraphExecDestroy(a->sample);
		a->sample = NULL;
	}
	/* a GPU that was busy moments ago is warm: then two samples of each suffice */
	bool hot = w->idle_since > 0 && st_rt_now_ms() - w->idle_since < HOT_MS;
	if (rc == ST_OK)
		rc = warmup(w, a, b, hot ? 0 : w->warmup_ms, err);
	for (unsigned i = 0; rc == ST_OK && i < pairs; i++) {
		CUevent *e = &w->events[4 * (size_t)i];
		const wmod *first = i % 2 ? b : a, *second = i % 2 ? a : b;
		rc = sample(w, first, e[0], e[1], err);
		if (rc == ST_OK)
			rc = sample(w, second, e[2], e[3], err);
	}
	if (rc != ST_OK)
		return rc;
	CU(w->cu.StreamSynchronize(w->stream), "timing kernel %s", w->spec->kernel);
	w->idle_since = st_rt_now_ms();
	for (unsigned i = 0; i < pairs; i++) {
		CUevent *e = &w->events[4 * (size_t)i];
		float t1, t2;
		CU(w->cu.EventElapsedTime(&t1, e[0], e[1]), "reading an event");
		CU(w->cu.EventElapsedTime(&t2, e[2], e[3]), "reading an event");
		double first = t1 / (double)w->reps, second = t2 / (double)w->reps;
		ta[i] = i % 2 ? second : first;
		tb[i] = i % 2 ? first : second;
	}
	return ST_OK;
}

/* ---- INIT ---- */
static st_status setup_buffers(worker *w, st_error *err)
{
	const st_launch *l = w->spec;
	size_t n = l->nparams, ns = nslots(w);
	w->bufs = calloc(ns ? ns : 1, sizeof *w->bufs);
	w->args = calloc(n ? n : 1, sizeof *w->args);
	w->args_store = aligned_alloc(64, 64 * (n ? n : 1) + 32768);
	if (!w->bufs || !w->args || !w->args_store)
		return st_error_set(err, ST_ENOMEM, "out of memory");
	memset(w->args_store, 0, 64 * (n ? n : 1) + 32768);
	/* slots: 64-byte aligned, each as large as its param */
	size_t off = 0;
	for (size_t i = 0; i < n; i++) {
		const st_param *p = &l->params[i];
		size_t sz = p->kind == ST_P_PTR ? 8 : p->size;
		w->args[i] = w->args_store + off;
		off += (sz + 63) / 64 * 64;
	}
	for (size_t i = 0; i < ns; i++) {
		const st_param *p = slot_param(w, i);
		if (p->kind == ST_P_PTR && p->bytes > w->max_bytes)
			w->max_bytes = p->bytes;
	}
	CU(w->cu.MemAllocHost((void **)&w->host, w->max_bytes ? w->max_bytes : 1), "allocating %llu bytes of pinned host memory",
	   (unsigned long long)w->max_bytes);
	CU(w->cu.MemAllocHost((void **)&w->guard_host, 2 * GUARD_BYTES + 4), "allocating pinned host memory");
	if (w->cmp_fn) {
		if (!(w->results_host = malloc(24 * (ns ? ns : 1))))
			return st_error_set(err, ST_ENOMEM, "out of memory");
		CU(w->cu.MemAlloc(&w->results, 24 * (ns ? ns : 1)), "allocating comparison results");
		CU(w->cu.MemAlloc(&w->pattern, GUARD_BYTES), "allocating the guard pattern");
		CU(w->cu.MemsetD8Async(w->pattern, GUARD_BYTE, GUARD_BYTES, w->stream), "filling the guard pattern");
	}
	for (size_t i = 0; i < n; i++) { /* by-value params; pointers below */
		const st_param *p = &l->params[i];
		if (p->kind == ST_P_SCALAR || p->kind == ST_P_BYTES)
			memcpy(w->args[i], p->value, p->size);
		if (p->kind == ST_P_PTR) {
			CUdeviceptr zero = 0;
			memcpy(w->args[i], &zero, 8);
		}
	}
	for (size_t i = 0; i < ns; i++) {
		const st_param *p = slot_param(w, i);
		if (p->kind != ST_P_PTR || !p->bytes)
			continue;
		wbuf *b = &w->bufs[i];
		char name[128];
		slot_name(w, i, name, sizeof name);
		if (!(b->inputs = calloc(w->sets, sizeof *b->inputs)) || !(b->ref = calloc(w->sets, sizeof *b->ref)) ||
		    !(b->ref_dev = calloc(w->sets, sizeof *b->ref_dev)))
			return st_error_set(err, ST_ENOMEM, "out of memory");
		b->padded = (p->bytes + 3) / 4 * 4;
		CU(w->cu.MemAlloc(&b->base, b->padded + 2 * (size_t)GUARD_BYTES), "allocating %llu bytes for %s",
		   (unsigned long long)p->bytes, name);
		b->ptr = b->base + GUARD_BYTES;
		for (unsigned k = 0; w->cmp_fn && k < w->sets; k++)
			CU(w->cu.MemAlloc(&b->ref_dev[k], b->padded), "allocating the reference of %s", name);
		if (i < n) /* a hidden buffer is reached only through a tensor map */
			memcpy(w->args[i], &b->ptr, 8);
		char label[32];
		slot_label(w, i, label, sizeof label);
		for (unsigned k = 0; k < w->sets; k++) {
			CU(w->cu.MemAlloc(&b->inputs[k], p->bytes), "allocating input set %u of %s", k, name);
			if (!(b->ref[k] = malloc(p->bytes)))
				return st_error_set(err, ST_ENOMEM, "out of memory for the reference of %s", name);
			/* random stream: the param's index, nparams + j for buffers[j] */
			st_status rc = st_rt_buffer_fill(p, w->seed, k, (unsigned)i, label, w->host, err);
			if (rc != ST_OK)
				return rc;
			CU(w->cu.MemcpyHtoD(b->inputs[k], w->host, p->bytes), "uploading input set %u of %s", k, name);
		}
	}
	for (size_t i = 0; i < n; i++) {
		const st_param *p = &l->params[i];
		if (p->kind != ST_P_TENSORMAP)
			continue;
		if (!w->cu.TensorMapEncodeTiled)
			return st_error_set(err, ST_EUNSUPPORTED, "params[%zu]: the CUDA driver has no cuTensorMapEncodeTiled", i);
		static const int tmap_dtype[] = {
			[ST_DT_U8] = 0, [ST_DT_U16] = 1, [ST_DT_I32] = 3, [ST_DT_U64] = 4, [ST_DT_I64] = 5,
			[ST_DT_F16] = 6, [ST_DT_F32] = 7, [ST_DT_F64] = 8, [ST_DT_BF16] = 9,
		};
		uint64_t dims[ST_TMAP_MAX_RANK], strides[ST_TMAP_MAX_RANK];
		uint32_t box[ST_TMAP_MAX_RANK], es[ST_TMAP_MAX_RANK], r = p->rank, esz = st_rt_dtype_size(p->dtype);
		for (uint32_t d = 0; d < r; d++) { /* the driver wants innermost first */
			dims[d] = p->shape[r - 1 - d];
			strides[d] = p->strides[r - 1 - d] * esz;
			box[d] = p->box[r - 1 - d];
			es[d] = p->elem_strides[r - 1 - d];
		}
		CUtensorMap map;
		CUdeviceptr addr = w->bufs[p->in_buffers ? n + p->tensor : p->tensor].ptr;
		CU(w->cu.TensorMapEncodeTiled(&map, tmap_dtype[p->dtype], r, (void *)(uintptr_t)addr, dims,
					      strides + 1, box, es, (int)p->interleave, (int)p->swizzle,
					      (int)p->l2_promotion, (int)p->oob_fill),
		   "params[%zu]: encoding the tensor map", i);
		memcpy(w->args[i], &map, sizeof map);
	}
	if (w->flush)
		CU(w->cu.MemAlloc(&w->flushbuf, FLUSH_BYTES), "allocating the L2 flush buffer");
	return ST_OK;
}

static st_status measure_kernel(worker *w, st_error *err)
{
	const wmod *m = &w->mods[0];
	double t[11];
	st_status rc = ensure_events(w, 2 * 11, err);
	w->reps = 1;
	/* one launch to estimate, then warm up for warmup_ms, then 11 single launches */
	if (rc == ST_OK)
		rc = sample(w, m, w->events[0], w->events[1], err);
	if (rc != ST_OK)
		return rc;
	CU(w->cu.StreamSynchronize(w->stream), "kernel %s", w->spec->kernel);
	float ms;
	CU(w->cu.EventElapsedTime(&ms, w->events[0], w->events[1]), "reading an event");
	w->kernel_ms = ms > 0 ? ms : 0.001;
	rc = warmup(w, m, m, w->warmup_ms, err);
	for (int i = 0; rc == ST_OK && i < 11; i++)
		rc = sample(w, m, w->events[2 * i], w->events[2 * i + 1], err);
	if (rc != ST_OK)
		return rc;
	CU(w->cu.StreamSynchronize(w->stream), "kernel %s", w->spec->kernel);
	for (int i = 0; i < 11; i++) {
		CU(w->cu.EventElapsedTime(&ms, w->events[2 * i], w->events[2 * i + 1]), "reading an event");
		t[i] = ms;
	}
	w->idle_since = st_rt_now_ms();
	w->kernel_ms = st_median(t, 11);
	if (!(w->kernel_ms > 0))
		w->kernel_ms = 0.001;
	if (w->flush) {
		w->reps = 1;
	} else {
		double r = ceil(w->sample_us / 1000.0 / w->kernel_ms);
		w->reps = r < 1 ? 1 : r > MAX_REPS ? MAX_REPS : (unsigned)r;
	}
	return ST_OK;
}

static st_status do_init(worker *w, st_rt_reader *rd, st_rt_writer *out, st_error *err)
{
	double t0 = st_rt_now_ms();
	uint32_t version = st_rt_get_u32(rd);
	w->sets = st_rt_get_u32(rd);
	w->seed = st_rt_get_u64(rd);
	w->flush = st_rt_get_u32(rd) != 0;
	int device = (int)st_rt_get_u32(rd);
	w->sample_us = st_rt_get_f64(rd);
	w->warmup_ms = st_rt_get_f64(rd);
	w->tol = st_rt_get_f64(rd);
	bool known_nondet = (st_rt_get_u32(rd) & ST_INIT_NONDET) != 0;
	char *libcuda = st_rt_get_str(rd), *text = st_rt_get_str(rd), *base = st_rt_get_str(rd);
	size_t cubin_size;
	const uint8_t *cubin = st_rt_get_blob(rd, &cubin_size);
	st_status rc = ST_OK;
	if (rd->bad || !libcuda || !text || !base)
		rc = st_error_set(err, ST_EFORMAT, "malformed INIT request");
	else if (version != ST_PROTO_VERSION)
		rc = st_error_set(err, ST_EINVAL, "sasstune-worker speaks protocol %d, the library %u: mismatched installation",
				  ST_PROTO_VERSION, version);
	else if (w->sets < 1 || w->sets > 64)
		rc = st_error_set(err, ST_EINVAL, "verify_sets must be 1 to 64");
	if (rc == ST_OK)
		rc = st_launch_parse(text, strlen(text), base[0] ? base : NULL, &w->spec, err);
	if (rc == ST_OK)
		rc = st_cuda_load(&w->cu, libcuda, err);
	free(libcuda);
	free(text);
	free(base);
	if (rc != ST_OK)
		return rc;
	CU(w->cu.Init(0), "cuInit");
	int count = 0, driver = 0;
	CU(w->cu.DeviceGetCount(&count), "counting devices");
	if (device < 0 || device >= count)
		return st_error_set(err, ST_EDEVICE, "no CUDA device %d (this machine has %d)", device, count);
	CU(w->cu.DeviceGet(&w->dev, device), "getting device %d", device);
	CU(w->cu.DriverGetVersion(&driver), "reading the driver version");
	char name[100] = "";
	int ccmaj = 0, ccmin = 0, sms = 0, l2 = 0;
	CU(w->cu.DeviceGetName(name, sizeof name - 1, w->dev), "reading the device name");
	w->cu.DeviceGetAttribute(&ccmaj, ST_CU_DEV_CC_MAJOR, w->dev);
	w->cu.DeviceGetAttribute(&ccmin, ST_CU_DEV_CC_MINOR, w->dev);
	w->cu.DeviceGetAttribute(&sms, ST_CU_DEV_MULTIPROCESSOR_COUNT, w->dev);
	w->cu.DeviceGetAttribute(&l2, ST_CU_DEV_L2_CACHE_SIZE, w->dev);
	w->cu.DeviceGetAttribute(&w->optin_shared, ST_CU_DEV_MAX_SHARED_PER_BLOCK_OPTIN, w->dev);
	CU(w->cu.DevicePrimaryCtxRetain(&w->ctx, w->dev), "creating a CUDA context");
	CU(w->cu.CtxSetCurrent(w->ctx), "making the CUDA context current");
	CU(w->cu.StreamCreate(&w->stream, 1 /* non-blocking */), "creating a stream");
	if (w->cu.ModuleLoadData(&w->cmp_mod, cmp_ptx) != CUDA_SUCCESS ||
	    w->cu.ModuleGetFunction(&w->cmp_fn, w->cmp_mod, "st_cmp32") != CUDA_SUCCESS) {
		if (w->cmp_mod)
			w->cu.ModuleUnload(w->cmp_mod);
		w->cmp_mod = NULL; /* no PTX JIT here: compare on the host */
		w->cmp_fn = NULL;
	}
	w->no_graphs = getenv("SASSTUNE_NO_GRAPHS") && *getenv("SASSTUNE_NO_GRAPHS"); /* for diagnosis */
	if ((rc = setup_buffers(w, err)) != ST_OK)
		return rc;
	if ((rc = load_module(w, cubin, cubin_size, &w->mods[0], err)) != ST_OK)
		return st_error_wrap(err, "reference"), rc;
	/* reference outputs: each set once, then again to see if they repeat;
	 * the first run must end within the caller's timeout, the rest is paced by it */
	progress(w, 0);
	w->deterministic = true;
	for (unsigned k = 0; k < w->sets; k++) {
		double t1 = st_rt_now_ms();
		if ((rc = run_set(w, &w->mods[0], k, err)) != ST_OK ||
		    (rc = check_outputs(w, k, true, true, err)) != ST_OK)
			return st_error_wrap(err, "reference"), rc;
		if (k == 0)
			progress(w, (st_rt_now_ms() - t1) * (2.0 * w->sets + 14) + w->warmup_ms);
	}
	unsigned k;
	for (k = 0; k < w->sets; k++) {
		if (known_nondet) { /* as the first worker found: compare within the tolerance */
			w->deterministic = false;
			k = 0;
			if ((rc = run_set(w, &w->mods[0], k, err)) != ST_OK)
				return st_error_wrap(err, "reference"), rc;
			break;
		}
		if ((rc = run_set(w, &w->mods[0], k, err)) != ST_OK)
			return st_error_wrap(err, "reference"), rc;
		st_error e2 = {0};
		rc = check_outputs(w, k, false, true, &e2);
		if (rc == ST_EMISMATCH) {
			w->deterministic = false;
			break;
		}
		if (rc != ST_OK)
			return st_error_set(err, rc, "reference: %s", e2.msg);
	}
	if (!w->deterministic) { /* the second run must still be within the tolerance */
		st_error e2 = {0};
		if ((rc = check_outputs(w, k, false, false, &e2)) != ST_OK)
			return st_error_set(err, rc, "reference: not deterministic, and two runs differ beyond the tolerance %g: %s",
					    w->tol, e2.msg);
	}
	if ((rc = measure_kernel(w, err)) != ST_OK)
		return st_error_wrap(err, "reference"), rc;
	uint64_t digest = 0;
	for (size_t i = 0; i < nslots(w); i++)
		for (unsigned set = 0; w->bufs[i].ref && set < w->sets; set++)
			digest = st_rt_hash64(w->bufs[i].ref[set], slot_param(w, i)->bytes, digest ^ i);
	char dev[200];
	snprintf(dev, sizeof dev, "%s (sm_%d%d, driver %d.%d)", name, ccmaj, ccmin, driver / 1000, driver % 1000 / 10);
	st_rt_put_str(out, dev);
	st_rt_put_u32(out, (uint32_t)ccmaj);
	st_rt_put_u32(out, (uint32_t)ccmin);
	st_rt_put_u32(out, (uint32_t)driver);
	st_rt_put_u32(out, (uint32_t)sms);
	st_rt_put_u32(out, (uint32_t)l2);
	st_rt_put_u32(out, w->deterministic);
	st_rt_put_f64(out, w->kernel_ms);
	st_rt_put_u32(out, w->reps);
	st_rt_put_u32(out, (uint32_t)w->mods[0].regs);
	st_rt_put_u32(out, (uint32_t)w->mods[0].local);
	st_rt_put_u64(out, digest);
	st_rt_put_f64(out, st_rt_now_ms() - t0);
	st_rt_put_u32(out, w->cmp_fn != NULL);
	return ST_OK;
}

/* ---- VERIFY and TIME ---- */
static st_status do_verify(worker *w, st_rt_reader *rd, st_rt_writer *out, st_error *err)
{
	size_t size;
	const uint8_t *cubin = st_rt_get_blob(rd, &size);
	double load_ms = 0, t0 = st_rt_now_ms();
	wmod *m = NULL;
	st_status rc = rd->bad || !size ? st_error_set(err, ST_EFORMAT, "malformed VERIFY request")
					: get_module(w, cubin, size, &m, &load_ms, err);
	for (unsigned k = 0; rc == ST_OK && k < w->sets; k++) {
		rc = run_set(w, m, k, err);
		if (rc == ST_OK)
			rc = check_outputs(w, k, false, w->deterministic, err);
	}
	st_rt_put_f64(out, load_ms);
	st_rt_put_f64(out, st_rt_now_ms() - t0 - load_ms);
	st_rt_put_u32(out, m ? (uint32_t)m->regs : 0);
	st_rt_put_u32(out, m ? (uint32_t)m->local : 0);
	return rc;
}

/* CHECK: the reference again on every input set, reset from the pristine input copies as for a
 * candidate, compared with the stored reference outputs as a candidate is.  Verification cannot
 * see a write beyond a buffer's guards into the pristine inputs or the stored references (or the
 * reference's code); this can: they no longer reproduce (ST_ECONTAMINATED).  A corrupted input
 * the reference never reads nor keeps is harmless, so no separate digest of the inputs. */
static st_status do_check(worker *w, st_rt_reader *rd, st_rt_writer *out, st_error *err)
{
	double t0 = st_rt_now_ms();
	st_status rc = rd->left ? st_error_set(err, ST_EFORMAT, "malformed CHECK request") : ST_OK;
	for (unsigned k = 0; rc == ST_OK && k < w->sets; k++) {
		rc = run_set(w, &w->mods[0], k, err);
		if (rc == ST_OK)
			rc = check_outputs(w, k, false, w->deterministic, err);
	}
	if (rc == ST_EMISMATCH) {
		st_error_wrap(err, "the reference no longer reproduces");
		rc = ST_ECONTAMINATED;
		if (err)
			err->code = rc;
	}
	st_rt_put_f64(out, st_rt_now_ms() - t0);
	return rc;
}

static st_status do_time(worker *w, st_rt_reader *rd, st_rt_writer *out, st_error *err)
{
	unsigned pairs = st_rt_get_u32(rd), flags = st_rt_get_u32(rd);
	size_t na, nb;
	const uint8_t *a = st_rt_get_blob(rd, &na), *b = st_rt_get_blob(rd, &nb);
	double t0 = st_rt_now_ms(), ms;
	if (rd->bad || pairs < 1 || pairs > 1000000)
		return st_error_set(err, ST_EFORMAT, "malformed TIME request");
	wmod *ma = NULL, *mb = NULL, copy = {0};
	st_status rc = get_module(w, a, na, &ma, &ms, err);
	if (rc == ST_OK && (flags & ST_TIME_B_IS_COPY)) {
		rc = load_module(w, ma->bytes, ma->size, &copy, err);
		mb = &copy;
	} else if (rc == ST_OK) {
		ma->last_use = ++w->clock; /* keep A while B is loaded */
		rc = get_module(w, b, nb, &mb, &ms, err);
	}
	double *ta = calloc(pairs, sizeof *ta), *tb = calloc(pairs, sizeof *tb);
	if (rc == ST_OK && (!ta || !tb))
		rc = st_error_set(err, ST_ENOMEM, "out of memory");
	if (rc == ST_OK)
		rc = time_pairs(w, ma, mb, pairs, ta, tb, err);
	if (copy.mod)
		unload(w, &copy);
	if (rc == ST_OK) {
		st_rt_put_u32(out, pairs);
		st_rt_put_u32(out, w->reps);
		st_rt_put_f64(out, st_rt_now_ms() - t0);
		for (unsigned i = 0; i < pairs; i++)
			st_rt_put_f64(out, ta[i]);
		for (unsigned i = 0; i < pairs; i++)
			st_rt_put_f64(out, tb[i]);
	}
	free(ta);
	free(tb);
	return rc;
}

/* ---- PROFILE: CUPTI PC sampling (docs/profile.md) ---- */
#define PROFILE_CHUNK 20 /* launches per sampling range: CUPTI keeps each serialized launch's PCs until drained */

static st_status profile_run(worker *w, wmod *m, unsigned launches, st_profile *prof, st_error *err)
{
	st_status rc = reset_buffers(w, 0, err);
	for (unsigned done = 0; rc == ST_OK && done < launches; done += PROFILE_CHUNK) {
		rc = st_cupti_start(w->cupti, err);
		for (unsigned i = done; rc == ST_OK && i < launches && i < done + PROFILE_CHUNK; i++)
			rc = launch(w, m, err);
		CUresult r = w->cu.StreamSynchronize(w->stream);
		w->idle_since = st_rt_now_ms();
		if (rc == ST_OK && r != CUDA_SUCCESS)
			rc = cuerr(w, err, r, "kernel %s while sampling", w->spec->kernel);
		if (rc == ST_OK)
			rc = st_cupti_stop(w->cupti, prof, err);
	}
	return rc;
}

/* Sample the warps' program counters while the kernel runs `launches` times (enough for
 * target_ms of GPU time).  The module is loaded again after sampling is enabled, so that
 * CUPTI sees its load; the input set is set 0. */
static st_status do_profile(worker *w, st_rt_reader *rd, st_rt_writer *out, st_error *err)
{
	unsigned period = st_rt_get_u32(rd), max_launches = st_rt_get_u32(rd);
	double target_ms = st_rt_get_f64(rd), t0 = st_rt_now_ms();
	size_t size;
	const uint8_t *cubin = st_rt_get_blob(rd, &size);
	if (rd->bad || (period && (period < 5 || period > 31)) || max_launches < 1 || !(target_ms >= 0))
		return st_error_set(err, ST_EFORMAT, "malformed PROFILE request");
	if (!size) {
		cubin = w->mods[0].bytes;
		size = w->mods[0].size;
	}
	st_status rc = w->cupti ? ST_OK : st_cupti_open(&w->cupti, err);
	st_profile *prof = NULL;
	if (rc == ST_OK)
		rc = st_profile_new(&prof, err);
	if (rc == ST_OK)
		rc = st_cupti_enable(w->cupti, (void *)w->ctx, period, err);
	wmod m = {0};
	if (rc == ST_OK && (rc = load_module(w, cubin, size, &m, err)) == ST_OK) {
		double n = ceil(target_ms / w->kernel_ms);
		unsigned launches = n < 1 ? 1 : n > max_launches ? max_launches : (unsigned)n;
		/* sampling slows the kernel down, and serialized launches cost CUPTI time each */
		progress(w, 20.0 * launches * w->kernel_ms + 5.0 * launches + 30000);
		rc = profile_run(w, &m, launches, prof, err);
		st_profile_meta_of(prof)->launches = launches;
	}
	/* disable (CUPTI flushes what it still holds) while the module is loaded, then unload it */
	if (w->cupti && !w->fatal)
		st_cupti_disable(w->cupti, rc == ST_OK ? prof : NULL);
	if (m.mod && !w->fatal)
		unload(w, &m);
	char *text = NULL;
	if (rc == ST_OK) {
		st_profile_meta *meta = st_profile_meta_of(prof);
		snprintf(meta->kernel, sizeof meta->kernel, "%s", w->spec->kernel);
		meta->period = period;
		meta->cost_ms = st_rt_now_ms() - t0;
		if (!(text = st_profile_to_json(prof)))
			rc = st_error_set(err, ST_ENOMEM, "out of memory");
	}
	if (rc == ST_OK)
		st_rt_put_str(out, text);
	free(text);
	st_profile_free(prof);
	return rc;
}

static void cleanup(worker *w)
{
	st_cupti_close(w->cupti);
	if (w->cu.lib && w->ctx) {
		w->cu.CtxSynchronize();
		for (int i = 0; i < MAX_MODS; i++)
			unload(w, &w->mods[i]);
		for (size_t i = 0; i < w->nevents; i++)
			w->cu.EventDestroy(w->events[i]);
		for (size_t i = 0; w->spec && w->bufs && i < nslots(w); i++) {
			if (w->bufs[i].base)
				w->cu.MemFree(w->bufs[i].base);
			for (unsigned k = 0; w->bufs[i].inputs && k < w->sets; k++)
				if (w->bufs[i].inputs[k])
					w->cu.MemFree(w->bufs[i].inputs[k]);
			for (unsigned k = 0; w->bufs[i].ref_dev && k < w->sets; k++)
				if (w->bufs[i].ref_dev[k])
					w->cu.MemFree(w->bufs[i].ref_dev[k]);
		}
		if (w->results)
			w->cu.MemFree(w->results);
		if (w->pattern)
			w->cu.MemFree(w->pattern);
		if (w->cmp_mod)
			w->cu.ModuleUnload(w->cmp_mod);
		if (w->flushbuf)
			w->cu.MemFree(w->flushbuf);
		if (w->host)
			w->cu.MemFreeHost(w->host);
		if (w->guard_host)
			w->cu.MemFreeHost(w->guard_host);
		if (w->stream)
			w->cu.StreamDestroy(w->stream);
		w->cu.DevicePrimaryCtxRelease(w->dev);
	} else {
		for (int i = 0; i < MAX_MODS; i++)
			free(w->mods[i].bytes);
	}
	for (size_t i = 0; w->spec && w->bufs && i < nslots(w); i++) {
		for (unsigned k = 0; w->bufs[i].ref && k < w->sets; k++)
			free(w->bufs[i].ref[k]);
		free(w->bufs[i].ref);
		free(w->bufs[i].inputs);
		free(w->bufs[i].ref_dev);
	}
	free(w->bufs);
	free(w->args);
	free(w->args_store);
	free(w->events);
	free(w->results_host);
	st_launch_free(w->spec);
	if (w->cu.lib)
		st_cuda_unload(&w->cu);
}

/* If the caller dies without closing the connection (or while a kernel hangs
 * here), exit instead of lingering as an orphan. */
static void *parent_watch(void *arg)
{
	pid_t parent = (pid_t)(intptr_t)arg;
	for (;;) {
		usleep(200 * 1000);
		if (getppid() != parent)
			_exit(4);
	}
	return NULL;
}

int st_worker_serve(int in_fd, int out_fd)
{
	worker w = {.out_fd = out_fd};
	pthread_t th;
	bool watching = pthread_create(&th, NULL, parent_watch, (void *)(intptr_t)getppid()) == 0;
	bool inited = false;
	int code = 0;
	for (;;) {
		uint32_t type;
		uint8_t *payload;
		size_t len;
		st_error err = {0};
		if (st_rt_msg_recv(in_fd, 0, &type, &payload, &len, &err) != ST_OK)
			break; /* the caller went away */
		st_rt_reader rd = {.p = payload, .left = len};
		st_rt_writer out = {0};
		st_status rc;
		if (type == ST_MSG_QUIT) {
			free(payload);
			break;
		} else if (type == ST_MSG_INIT && !inited) {
			rc = do_init(&w, &rd, &out, &err);
			inited = rc == ST_OK;
		} else if (!inited) {
			rc = st_error_set(&err, ST_EINVAL, "the worker got a request before a successful INIT");
		} else if (type == ST_MSG_VERIFY) {
			rc = do_verify(&w, &rd, &out, &err);
		} else if (type == ST_MSG_TIME) {
			rc = do_time(&w, &rd, &out, &err);
		} else if (type == ST_MSG_PROFILE) {
			rc = do_profile(&w, &rd, &out, &err);
		} else if (type == ST_MSG_CHECK) {
			rc = do_check(&w, &rd, &out, &err);
		} else {
			rc = st_error_set(&err, ST_EFORMAT, "unknown request type %u", type);
		}
		free(payload);
		reply(&w, rc, rc == ST_OK ? "" : err.msg, &out);
		st_buf_free(&out.b);
		if (w.fatal || (type == ST_MSG_INIT && rc != ST_OK)) {
			code = w.fatal ? 3 : 1;
			if (w.fatal) /* the context is poisoned: leave without touching it */
				_exit(code);
			break;
		}
	}
	cleanup(&w);
	if (watching) { /* usleep is a cancellation point */
		pthread_cancel(th);
		pthread_join(th, NULL);
	}
	return code;
}
