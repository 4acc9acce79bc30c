/* The few CUDA driver API types and entry points the worker uses, declared
 * here (no cuda.h needed) and loaded with dlopen at run time. */
#ifndef ST_CUDA_H
#define ST_CUDA_H

#include "sasstune/error.h"

#include <stddef.h>
#include <stdint.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct { uint64_t opaque[16]; } __attribute__((aligned(64))) CUtensorMap;

enum {
	CUDA_SUCCESS = 0,
	CUDA_ERROR_INVALID_VALUE = 1,
	CUDA_ERROR_NO_DEVICE = 100,
	CUDA_ERROR_NOT_FOUND = 500,
	CUDA_ERROR_NOT_READY = 600,
	CUDA_ERROR_ILLEGAL_ADDRESS = 700,
	CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
	CUDA_ERROR_LAUNCH_TIMEOUT = 702,
	CUDA_ERROR_ASSERT = 710,
	CUDA_ERROR_HARDWARE_STACK_ERROR = 714,
	CUDA_ERROR_ILLEGAL_INSTRUCTION = 715,
	CUDA_ERROR_MISALIGNED_ADDRESS = 716,
	CUDA_ERROR_INVALID_ADDRESS_SPACE = 717,
	CUDA_ERROR_INVALID_PC = 718,
	CUDA_ERROR_LAUNCH_FAILED = 719,
	CUDA_ERROR_TENSOR_MEMORY_LEAK = 721,
	CUDA_ERROR_UNKNOWN = 999,
};

/* CUdevice_attribute / CUfunction_attribute values used here */
enum {
	ST_CU_DEV_MULTIPROCESSOR_COUNT = 16,
	ST_CU_DEV_L2_CACHE_SIZE = 38,
	ST_CU_DEV_CC_MAJOR = 75,
	ST_CU_DEV_CC_MINOR = 76,
	ST_CU_DEV_MAX_SHARED_PER_BLOCK_OPTIN = 97,
	ST_CU_FUNC_MAX_THREADS_PER_BLOCK = 0,
	ST_CU_FUNC_SHARED_SIZE_BYTES = 1,
	ST_CU_FUNC_LOCAL_SIZE_BYTES = 3,
	ST_CU_FUNC_NUM_REGS = 4,
	ST_CU_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
};

typedef struct st_cuda {
	void *lib;
	CUresult (*Init)(unsigned flags);
	CUresult (*DriverGetVersion)(int *version);
	CUresult (*DeviceGetCount)(int *count);
	CUresult (*DeviceGet)(CUdevice *dev, int ordinal);
	CUresult (*DeviceGetName)(char *name, int len, CUdevice dev);
	CUresult (*DeviceGetAttribute)(int *value, int attr, CUdevice dev);
	CUresult (*DevicePrimaryCtxRetain)(CUcontext *ctx, CUdevice dev);
	CUresult (*DevicePrimaryCtxRelease)(CUdevice dev);            /* _v2 */
	CUresult (*CtxSetCurrent)(CUcontext ctx);
	CUresult (*CtxSynchronize)(void);
	CUresult (*ModuleLoadData)(CUmodule *mod, const void *image);
	CUresult (*ModuleUnload)(CUmodule mod);
	CUresult (*ModuleGetFunction)(CUfunction *fn, CUmodule mod, const char *name);
	CUresult (*FuncGetAttribute)(int *value, int attr, CUfunction fn);
	CUresult (*FuncSetAttribute)(CUfunction fn, int attr, int value);
	CUresult (*FuncGetParamInfo)(CUfunction fn, size_t index, size_t *offset, size_t *size); /* optional */
	CUresult (*MemAlloc)(CUdeviceptr *ptr, size_t bytes);         /* _v2 */
	CUresult (*MemFree)(CUdeviceptr ptr);                         /* _v2 */
	CUresult (*MemAllocHost)(void **ptr, size_t bytes);           /* _v2 */
	CUresult (*MemFreeHost)(void *ptr);
	CUresult (*MemcpyHtoD)(CUdeviceptr dst, const void *src, size_t bytes); /* _v2 */
	CUresult (*MemcpyDtoH)(void *dst, CUdeviceptr src, size_t bytes);       /* _v2 */
	CUresult (*MemcpyDtoDAsync)(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s); /* _v2 */
	CUresult (*MemsetD8Async)(CUdeviceptr dst, unsigned char v, size_t n, CUstream s);
	CUresult (*MemsetD32Async)(CUdeviceptr dst, unsigned v, size_t n, CUstream s);
	CUresult (*StreamCreate)(CUstream *s, unsigned flags);
	CUresult (*StreamDestroy)(CUstream s);                        /* _v2 */
	CUresult (*StreamSynchronize)(CUstream s);
	CUresult (*EventCreate)(CUevent *e, unsigned flags);
	CUresult (*EventDestroy)(CUevent e);                          /* _v2 */
	CUresult (*EventRecord)(CUevent e, CUstream s);
	CUresult (*EventElapsedTime)(float *ms, CUevent start, CUevent end); /* _v2 where present */
	CUresult (*LaunchKernel)(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
				 unsigned bz, unsigned shared, CUstream s, void **params, void **extra);
	CUresult (*GetErrorName)(CUresult r, const char **s);
	CUresult (*GetErrorString)(CUresult r, const char **s);
	/* CUDA graphs (optional: timing falls back to plain launches) */
	CUresult (*StreamBeginCapture)(CUstream s, int mode);      /* _v2 */
	CUresult (*StreamEndCapture)(CUstream s, CUgraph *g);
	CUresult (*GraphInstantiate)(CUgraphExec *e, CUgraph g, unsigned long long flags); /* WithFlags */
	CUresult (*GraphLaunch)(CUgraphExec e, CUstream s);
	CUresult (*GraphExecDestroy)(CUgraphExec e);
	CUresult (*GraphDestroy)(CUgraph g);
	CUresult (*TensorMapEncodeTiled)(CUtensorMap *map, int dtype, uint32_t rank, void *addr, const uint64_t *dims,
					 const uint64_t *strides, const uint32_t *box, const uint32_t *elem_strides,
					 int interleave, int swizzle, int l2promo, int oobfill); /* optional */
} st_cuda;

/* dlopen the driver (path NULL: $SASSTUNE_LIBCUDA, else libcuda.so.1) and
 * resolve every entry point.  Fails with one line saying what is missing. */
st_status st_cuda_load(st_cuda *cu, const char *path, st_error *err);
void st_cuda_unload(st_cuda *cu);

/* "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)" */
const char *st_cuda_errstr(const st_cuda *cu, CUresult r, char *buf, size_t n);

/* Errors after which the CUDA context is unusable (the kernel faulted). */
int st_cuda_is_fault(CUresult r);

#endif
