/* A mock CUDA driver for the runtime's CPU tests (loaded through
 * SASSTUNE_LIBCUDA).  "Device" memory is host memory; a "cubin" is text:
 *
 *   MOCKCUBIN
 *   kernel NAME          entry name
 *   op OP                add (out = x + y over n fp32: params 0, 1, 2, 3), wrong (add, one
 *                        element off), oob (add, and one write past the end), nondet (add, and
 *                        the last bits of out[0] change from launch to launch), fault (the
 *                        launch faults: sticky CUDA_ERROR_ILLEGAL_ADDRESS), hang (never
 *                        finishes), die (the process is killed), stray (add, its outputs right, and on
 *                        its stray_launch-th launch since it was loaded it adds 1000 to element 7 of
 *                        another allocation: the first live one of exactly n fp32 elements holding
 *                        none of its buffers, e.g. a pristine input copy or the stored reference:
 *                        a write beyond the guards, as a wrong kernel on a GPU may do)
 *   stray_launch L       (op stray) which launch writes astray (default 2: the second input set)
 *   time_us T            simulated duration of one launch (default 10)
 *   regs R               registers reported (default 32)
 *   params S S ...       parameter sizes (default: 8 8 8 4 8 8)
 *
 * A real cubin (an ELF64 image for EM_CUDA) loads as op add with the default parameters and answers
 * to any kernel name (so that `sasstune profile` runs on a fixture cubin).
 * Anything after a line "end" is ignored (tests append bytes to make distinct
 * candidates).  The runtime's PTX comparison kernel (st_cmp32) is run on the
 * host.  CUDA graphs are recorded by stream capture and replayed.  Environment:
 * MOCK_CUDA_DEVICES=N (default 1); MOCK_CUDA_ELF_SPREAD=F (see elf_spread); MOCK_CUDA_TIMER_US=Q rounds event times to Q us (a real
 * timer's step, ~0.5 us); MOCK_CUDA_NO_JIT=1 refuses PTX, as a driver
 * without a JIT compiler would; MOCK_CUDA_NO_GRAPHS=1 refuses stream capture.
 * Device 0 is named "Mock GPU", device N > 0 "Mock GPU #N", so a test sees which
 * ordinal the worker opened (cuDeviceGet refuses one past the count). */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

enum { OP_ADD, OP_WRONG, OP_OOB, OP_NONDET, OP_FAULT, OP_HANG, OP_DIE, OP_STRAY, OP_CMP };

typedef struct mock_mod {
	char kernel[128];
	int op, regs;
	unsigned long runs, stray_launch; /* op stray: launches since loaded; the one that strays */
	double time_us;
	size_t nparams, sizes[64];
} mock_mod;

/* CUDA graphs: stream capture records launches, a graph launch replays them */
typedef struct mock_graph {
	size_t n;
	void *fn[4096];
	void **params[4096];
} mock_graph;
static mock_graph *capturing;

static CUresult sticky;      /* a fault poisons the context, as on a real GPU */
static int hang_pending;     /* a hung kernel was launched */
static double gpu_clock_us;  /* simulated time of the stream */
static unsigned long launches;
static uint64_t jitter_state = 0x9e3779b97f4a7c15ull;

static double jitter(void)
{
	jitter_state ^= jitter_state << 13;
	jitter_state ^= jitter_state >> 7;
	jitter_state ^= jitter_state << 17;
	return ((double)(jitter_state >> 11) / 9007199254740992.0 - 0.5) * 0.01; /* +-0.5 % */
}

/* MOCK_CUDA_ELF_SPREAD=F: a real cubin's launch takes 10 us x (1 - F x u), u in [0, 1] a hash of
 * its bytes (up to the end of its section headers), so that rewritten schedules time apart. */
static double elf_spread(const char *t)
{
	const char *e = getenv("MOCK_CUDA_ELF_SPREAD");
	if (!e || !(atof(e) > 0))
		return 0;
	uint64_t shoff, h = 0xcbf29ce484222325ull;
	uint16_t shentsize, shnum;
	memcpy(&shoff, t + 0x28, 8);
	memcpy(&shentsize, t + 0x3a, 2);
	memcpy(&shnum, t + 0x3c, 2);
	for (uint64_t i = 0, n = shoff + (uint64_t)shentsize * shnum; i < n; i++)
		h = (h ^ (unsigned char)t[i]) * 0x100000001b3ull;
	return atof(e) * (double)(h % 1024) / 1023.0;
}

#define API __attribute__((visibility("default")))

API CUresult cuInit(unsigned flags) { (void)flags; return 0; }
API CUresult cuDriverGetVersion(int *v) { *v = 13000; return 0; }
API CUresult cuDeviceGetCount(int *n)
{
	const char *e = getenv("MOCK_CUDA_DEVICES");
	*n = e ? atoi(e) : 1;
	return 0;
}
API CUresult cuDeviceGet(int *d, int ordinal)
{
	int n;
	cuDeviceGetCount(&n);
	if (ordinal < 0 || ordinal >= n)
		return 101; /* CUDA_ERROR_INVALID_DEVICE */
	*d = ordinal;
	return 0;
}
API CUresult cuDeviceGetName(char *name, int len, int dev)
{
	if (dev)
		snprintf(name, (size_t)len, "Mock GPU #%d", dev);
	else
		snprintf(name, (size_t)len, "Mock GPU");
	return 0;
}
API CUresult cuDeviceGetAttribute(int *v, int attr, int dev)
{
	(void)dev;
	switch (attr) {
	case 16: *v = 132; break;        /* SMs */
	case 38: *v = 50 << 20; break;   /* L2 */
	case 75: *v = 9; break;          /* cc major */
	case 76: *v = 0; break;
	case 97: *v = 232448; break;     /* opt-in shared memory */
	default: *v = 0;
	}
	return 0;
}
static int ctx_dummy;
API CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev) { (void)dev; *ctx = &ctx_dummy; return 0; }
API CUresult cuDevicePrimaryCtxRelease_v2(int dev) { (void)dev; return 0; }
API CUresult cuCtxSetCurrent(void *ctx) { (void)ctx; return sticky; }

static CUresult wait_stream(void)
{
	if (hang_pending)
		for (;;)
			pause(); /* until the watchdog kills us */
	return sticky;
}

API CUresult cuCtxSynchronize(void) { return wait_stream(); }

API CUresult cuModuleLoadData(void **mod, const void *image)
{
	const char *t = image;
	if (!strncmp(t, ".version", 8) && strstr(t, ".entry st_cmp32") && !getenv("MOCK_CUDA_NO_JIT")) {
		/* the runtime's PTX comparison kernel: run it on the host */
		mock_mod *m = calloc(1, sizeof *m);
		if (!m)
			return 2;
		snprintf(m->kernel, sizeof m->kernel, "st_cmp32");
		m->op = OP_CMP;
		m->nparams = 4;
		m->sizes[0] = m->sizes[1] = m->sizes[2] = m->sizes[3] = 8;
		*mod = m;
		return 0;
	}
	if (!strncmp(t, "\x7f" "ELF", 4) && t[4] == 2 && (unsigned char)t[18] == 190 && t[19] == 0) {
		/* a real cubin (ELF64, EM_CUDA): op add, any kernel name (for `profile`) */
		mock_mod *m = calloc(1, sizeof *m);
		if (!m)
			return 2;
		size_t defaults[] = {8, 8, 8, 4, 8, 8};
		m->time_us = 10 * (1 - elf_spread(t));
		m->regs = 32;
		m->nparams = 6;
		memcpy(m->sizes, defaults, sizeof defaults);
		*mod = m;
		return 0;
	}
	if (strncmp(t, "MOCKCUBIN\n", 10))
		return t[0] == '.' ? 218 : 200; /* CUDA_ERROR_INVALID_PTX / INVALID_IMAGE */
	mock_mod *m = calloc(1, sizeof *m);
	if (!m)
		return 2;
	m->time_us = 10;
	m->regs = 32;
	m->stray_launch = 2;
	size_t defaults[] = {8, 8, 8, 4, 8, 8};
	m->nparams = 6;
	memcpy(m->sizes, defaults, sizeof defaults);
	const char *line = t + 10;
	while (*line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char buf[512];
		snprintf(buf, sizeof buf, "%.*s", (int)(len < 511 ? len : 511), line);
		if (!strcmp(buf, "end"))
			break;
		char key[32], val[480];
		if (sscanf(buf, "%31s %479[^\n]", key, val) == 2) {
			if (!strcmp(key, "kernel"))
				snprintf(m->kernel, sizeof m->kernel, "%.127s", val);
			else if (!strcmp(key, "time_us"))
				m->time_us = atof(val);
			else if (!strcmp(key, "regs"))
				m->regs = atoi(val);
			else if (!strcmp(key, "stray_launch"))
				m->stray_launch = strtoul(val, NULL, 10);
			else if (!strcmp(key, "op")) {
				static const char *ops[] = {"add", "wrong", "oob", "nondet", "fault", "hang", "die", "stray"};
				for (int i = 0; i < 8; i++)
					if (!strcmp(val, ops[i]))
						m->op = i;
			} else if (!strcmp(key, "params")) {
				m->nparams = 0;
				char *p = val, *end;
				for (long v; m->nparams < 64 && (v = strtol(p, &end, 10), end != p); p = end)
					m->sizes[m->nparams++] = (size_t)v;
			}
		}
		if (!nl)
			break;
		line = nl + 1;
	}
	*mod = m;
	return 0;
}
API CUresult cuModuleUnload(void *mod) { free(mod); return 0; }
API CUresult cuModuleGetFunction(void **fn, void *mod, const char *name)
{
	mock_mod *m = mod;
	if (m->kernel[0] && strcmp(m->kernel, name))
		return 500; /* CUDA_ERROR_NOT_FOUND */
	*fn = m;
	return 0;
}
API CUresult cuFuncGetAttribute(int *v, int attr, void *fn)
{
	mock_mod *m = fn;
	*v = attr == 4 ? m->regs : attr == 0 ? 1024 : 0;
	return 0;
}
API CUresult cuFuncSetAttribute(void *fn, int attr, int v) { (void)fn, (void)attr, (void)v; return 0; }
API CUresult cuFuncGetParamInfo(void *fn, size_t i, size_t *off, size_t *size)
{
	mock_mod *m = fn;
	if (i >= m->nparams)
		return 1;
	*off = 8 * i;
	*size = m->sizes[i];
	return 0;
}

/* live device allocations in allocation order, for op stray */
#define MAX_ALLOCS 4096
typedef struct mock_alloc { CUdeviceptr p; size_t n; } mock_alloc;
static mock_alloc allocs[MAX_ALLOCS];
static size_t nallocs;

API CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
	void *h = malloc(n ? n : 1);
	*p = (CUdeviceptr)(uintptr_t)h;
	if (h && nallocs < MAX_ALLOCS)
		allocs[nallocs++] = (mock_alloc){*p, n};
	return h ? 0 : 2;
}
API CUresult cuMemFree_v2(CUdeviceptr p)
{
	for (size_t i = 0; i < nallocs; i++)
		if (allocs[i].p == p) {
			memmove(&allocs[i], &allocs[i + 1], (nallocs - i - 1) * sizeof allocs[0]);
			nallocs--;
			break;
		}
	free((void *)(uintptr_t)p);
	return 0;
}

/* op stray: element 7 of the first live allocation of exactly n floats that holds none of bufs */
static void stray_write(float *const bufs[3], int n)
{
	for (size_t i = 0; n > 7 && i < nallocs; i++) {
		uintptr_t lo = (uintptr_t)allocs[i].p, hi = lo + allocs[i].n;
		int mine = 0;
		for (int b = 0; b < 3; b++)
			mine |= (uintptr_t)bufs[b] >= lo && (uintptr_t)bufs[b] < hi;
		if (!mine && allocs[i].n == (size_t)n * 4) {
			((float *)lo)[7] += 1000;
			return;
		}
	}
}
API CUresult cuMemAllocHost_v2(void **p, size_t n) { *p = malloc(n ? n : 1); return *p ? 0 : 2; }
API CUresult cuMemFreeHost(void *p) { free(p); return 0; }
API CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n)
{
	if (sticky)
		return sticky;
	memcpy((void *)(uintptr_t)d, s, n);
	return 0;
}
API CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n)
{
	CUresult r = wait_stream();
	if (!r)
		memcpy(d, (void *)(uintptr_t)s, n);
	return r;
}
API CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, void *st)
{
	(void)st;
	if (!sticky)
		memmove((void *)(uintptr_t)d, (void *)(uintptr_t)s, n);
	return sticky;
}
API CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, void *st)
{
	(void)st;
	if (!sticky)
		memset((void *)(uintptr_t)d, v, n);
	return sticky;
}
API CUresult cuMemsetD32Async(CUdeviceptr d, unsigned v, size_t n, void *st)
{
	(void)st;
	uint32_t *p = (uint32_t *)(uintptr_t)d;
	if (n < (1u << 20)) /* the 256 MiB L2 flush is only timed, not written */
		for (size_t i = 0; !sticky && i < n; i++)
			p[i] = v;
	gpu_clock_us += (double)n * 4 / 3.0e6; /* at 3 TB/s */
	return sticky;
}
static int stream_dummy;
API CUresult cuStreamCreate(void **s, unsigned flags) { (void)flags; *s = &stream_dummy; return 0; }
API CUresult cuStreamDestroy_v2(void *s) { (void)s; return 0; }
API CUresult cuStreamSynchronize(void *s) { (void)s; return wait_stream(); }
API CUresult cuEventCreate(void **e, unsigned flags)
{
	(void)flags;
	*e = calloc(1, sizeof(double));
	return *e ? 0 : 2;
}
API CUresult cuEventDestroy_v2(void *e) { free(e); return 0; }
API CUresult cuEventRecord(void *e, void *s)
{
	(void)s;
	*(double *)e = gpu_clock_us;
	return sticky;
}
API CUresult cuEventElapsedTime_v2(float *ms, void *a, void *b)
{
	if (sticky)
		return sticky;
	double us = *(double *)b - *(double *)a;
	const char *q = getenv("MOCK_CUDA_TIMER_US"); /* the timer's step, e.g. 0.5 as on a real GPU */
	if (q && atof(q) > 0 && us >= 0)
		us = (double)(long long)(us / atof(q) + 0.5) * atof(q);
	*ms = (float)(us / 1000.0);
	return 0;
}

API CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
			    unsigned shared, void *s, void **params, void **extra)
{
	(void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shared, (void)s, (void)extra;
	mock_mod *m = fn;
	if (sticky)
		return sticky;
	if (capturing) {
		if (capturing->n >= 4096)
			return 1;
		capturing->fn[capturing->n] = fn;
		capturing->params[capturing->n++] = params;
		return 0;
	}
	if (m->op == OP_CMP) { /* st_cmp32(a, b, n, res): lowest index where the words differ */
		const uint32_t *a = *(uint32_t **)params[0], *b = *(uint32_t **)params[1];
		uint64_t n = *(uint64_t *)params[2], *res = *(uint64_t **)params[3];
		for (uint64_t i = 0; i < n; i++)
			if (a[i] != b[i]) {
				if (i < *res)
					*res = i;
				break;
			}
		return 0;
	}
	launches++;
	gpu_clock_us += m->time_us * (1 + jitter());
	switch (m->op) {
	case OP_FAULT:
		sticky = 700;
		return 0; /* reported at the next synchronization, as on a GPU */
	case OP_HANG:
		hang_pending = 1;
		return 0;
	case OP_DIE:
		raise(SIGKILL);
		return 0;
	default:
		break;
	}
	float *x = *(float **)params[0], *y = *(float **)params[1], *out = *(float **)params[2];
	int n = *(int *)params[3];
	for (int i = 0; i < n; i++)
		out[i] = x[i] + y[i];
	if (m->op == OP_WRONG && n > 5)
		out[5] += 1;
	if (m->op == OP_OOB)
		out[n] = 42;
	if (m->op == OP_STRAY && ++m->runs == m->stray_launch)
		stray_write((float *const[3]){x, y, out}, n);
	if (m->op == OP_NONDET) { /* a different last bit pattern on every launch */
		uint32_t u;
		memcpy(&u, &out[0], 4);
		u ^= (uint32_t)(launches & 3);
		memcpy(&out[0], &u, 4);
	}
	return 0;
}


API CUresult cuStreamBeginCapture_v2(void *s, int mode)
{
	(void)s, (void)mode;
	if (getenv("MOCK_CUDA_NO_GRAPHS"))
		return 801; /* CUDA_ERROR_NOT_SUPPORTED */
	capturing = calloc(1, sizeof *capturing);
	return capturing ? 0 : 2;
}
API CUresult cuStreamEndCapture(void *s, void **graph)
{
	(void)s;
	*graph = capturing;
	capturing = NULL;
	return *graph ? 0 : 1;
}
API CUresult cuGraphInstantiateWithFlags(void **exec, void *graph, unsigned long long flags)
{
	(void)flags;
	mock_graph *g = malloc(sizeof *g);
	if (!g)
		return 2;
	memcpy(g, graph, sizeof *g);
	*exec = g;
	return 0;
}
API CUresult cuGraphDestroy(void *g) { free(g); return 0; }
API CUresult cuGraphExecDestroy(void *g) { free(g); return 0; }
API CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
			    unsigned shared, void *s, void **params, void **extra);
API CUresult cuGraphLaunch(void *exec, void *s)
{
	mock_graph *g = exec;
	for (size_t i = 0; i < g->n; i++) {
		CUresult r = cuLaunchKernel(g->fn[i], 1, 1, 1, 1, 1, 1, 0, s, g->params[i], NULL);
		if (r)
			return r;
	}
	gpu_clock_us -= 0.5 * (double)(g->n - 1); /* graphs launch back to back a little faster */
	return 0;
}

static const struct { int code; const char *name, *desc; } errs[] = {
	{0, "CUDA_SUCCESS", "no error"},
	{1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
	{2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
	{200, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
	{500, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
	{700, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
};
API CUresult cuGetErrorName(CUresult r, const char **s)
{
	for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++)
		if (errs[i].code == r) {
			*s = errs[i].name;
			return 0;
		}
	return 1;
}
API CUresult cuGetErrorString(CUresult r, const char **s)
{
	for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++)
		if (errs[i].code == r) {
			*s = errs[i].desc;
			return 0;
		}
	return 1;
}
API CUresult cuTensorMapEncodeTiled(void *map, int dtype, unsigned rank, void *addr, const uint64_t *dims,
				    const uint64_t *strides, const unsigned *box, const unsigned *es, int il, int sw,
				    int l2, int oob)
{
	(void)dtype, (void)dims, (void)strides, (void)box, (void)es, (void)il, (void)sw, (void)l2, (void)oob;
	memset(map, 0, 128);
	memcpy(map, &addr, sizeof addr);
	memcpy((char *)map + 8, &rank, sizeof rank);
	return 0;
}
