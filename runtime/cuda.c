/* Loading the CUDA driver with dlopen. */
#include "cuda.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *sym(void *lib, const char *name, const char *fallback)
{
	void *p = dlsym(lib, name);
	if (!p && fallback)
		p = dlsym(lib, fallback);
	return p;
}

st_status st_cuda_load(st_cuda *cu, const char *path, st_error *err)
{
	memset(cu, 0, sizeof *cu);
	if (!path || !*path)
		path = getenv("SASSTUNE_LIBCUDA");
	if (!path || !*path)
		path = "libcuda.so.1";
	cu->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!cu->lib) {
		const char *why = dlerror();
		return st_error_set(err, ST_EDEVICE,
				    "cannot load the CUDA driver %s (no NVIDIA driver on this machine?): %s", path,
				    why ? why : "unknown error");
	}
	struct {
		void *slot;
		const char *name, *fallback;
		int optional;
	} t[] = {
#define E(field, name, fb, opt) {(void *)&cu->field, name, fb, opt}
		E(Init, "cuInit", NULL, 0),
		E(DriverGetVersion, "cuDriverGetVersion", NULL, 0),
		E(DeviceGetCount, "cuDeviceGetCount", NULL, 0),
		E(DeviceGet, "cuDeviceGet", NULL, 0),
		E(DeviceGetName, "cuDeviceGetName", NULL, 0),
		E(DeviceGetAttribute, "cuDeviceGetAttribute", NULL, 0),
		E(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", NULL, 0),
		E(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease", 0),
		E(CtxSetCurrent, "cuCtxSetCurrent", NULL, 0),
		E(CtxSynchronize, "cuCtxSynchronize", NULL, 0),
		E(ModuleLoadData, "cuModuleLoadData", NULL, 0),
		E(ModuleUnload, "cuModuleUnload", NULL, 0),
		E(ModuleGetFunction, "cuModuleGetFunction", NULL, 0),
		E(FuncGetAttribute, "cuFuncGetAttribute", NULL, 0),
		E(FuncSetAttribute, "cuFuncSetAttribute", NULL, 0),
		E(FuncGetParamInfo, "cuFuncGetParamInfo", NULL, 1),
		E(MemAlloc, "cuMemAlloc_v2", NULL, 0),
		E(MemFree, "cuMemFree_v2", NULL, 0),
		E(MemAllocHost, "cuMemAllocHost_v2", NULL, 0),
		E(MemFreeHost, "cuMemFreeHost", NULL, 0),
		E(MemcpyHtoD, "cuMemcpyHtoD_v2", NULL, 0),
		E(MemcpyDtoH, "cuMemcpyDtoH_v2", NULL, 0),
		E(MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", NULL, 0),
		E(MemsetD8Async, "cuMemsetD8Async", NULL, 0),
		E(MemsetD32Async, "cuMemsetD32Async", NULL, 0),
		E(StreamCreate, "cuStreamCreate", NULL, 0),
		E(StreamDestroy, "cuStreamDestroy_v2", NULL, 0),
		E(StreamSynchronize, "cuStreamSynchronize", NULL, 0),
		E(EventCreate, "cuEventCreate", NULL, 0),
		E(EventDestroy, "cuEventDestroy_v2", NULL, 0),
		E(EventRecord, "cuEventRecord", NULL, 0),
		E(EventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime", 0),
		E(LaunchKernel, "cuLaunchKernel", NULL, 0),
		E(GetErrorName, "cuGetErrorName", NULL, 0),
		E(GetErrorString, "cuGetErrorString", NULL, 0),
		E(StreamBeginCapture, "cuStreamBeginCapture_v2", NULL, 1),
		E(StreamEndCapture, "cuStreamEndCapture", NULL, 1),
		E(GraphInstantiate, "cuGraphInstantiateWithFlags", NULL, 1),
		E(GraphLaunch, "cuGraphLaunch", NULL, 1),
		E(GraphExecDestroy, "cuGraphExecDestroy", NULL, 1),
		E(GraphDestroy, "cuGraphDestroy", NULL, 1),
		E(TensorMapEncodeTiled, "cuTensorMapEncodeTiled", NULL, 1),
#undef E
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		void *fn = sym(cu->lib, t[i].name, t[i].fallback);
		memcpy(t[i].slot, &fn, sizeof fn); /* the slot is a function pointer of the same size */
		if (!fn && !t[i].optional) {
			st_status rc = st_error_set(err, ST_EDEVICE, "the CUDA driver %s has no %s (driver too old?)",
						    path, t[i].name);
			st_cuda_unload(cu);
			return rc;
		}
	}
	return ST_OK;
}

void st_cuda_unload(st_cuda *cu)
{
	if (cu->lib)
		dlclose(cu->lib);
	memset(cu, 0, sizeof *cu);
}

const char *st_cuda_errstr(const st_cuda *cu, CUresult r, char *buf, size_t n)
{
	const char *name = NULL, *desc = NULL;
	if (cu->GetErrorName)
		cu->GetErrorName(r, &name);
	if (cu->GetErrorString)
		cu->GetErrorString(r, &desc);
	if (name && desc)
		snprintf(buf, n, "%s (%s)", name, desc);
	else
		snprintf(buf, n, "CUDA error %d", r);
	return buf;
}

int st_cuda_is_fault(CUresult r)
{
	switch (r) {
	case CUDA_ERROR_ILLEGAL_ADDRESS:
	case CUDA_ERROR_LAUNCH_TIMEOUT:
	case CUDA_ERROR_ASSERT:
	case CUDA_ERROR_HARDWARE_STACK_ERROR:
	case CUDA_ERROR_ILLEGAL_INSTRUCTION:
	case CUDA_ERROR_MISALIGNED_ADDRESS:
	case CUDA_ERROR_INVALID_ADDRESS_SPACE:
	case CUDA_ERROR_INVALID_PC:
	case CUDA_ERROR_LAUNCH_FAILED:
	case CUDA_ERROR_TENSOR_MEMORY_LEAK:
	case CUDA_ERROR_UNKNOWN:
		return 1;
	default:
		return 0;
	}
}
