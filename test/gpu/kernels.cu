// Test kernels for the runtime's GPU tests: drop-in replacements for the
// add_f32_1M fixture (same name and parameters as Triton's add_kernel:
// x, y, out, n, global_scratch, profile_scratch), one behaviour per build.
// Build: bash test/gpu/build-kernels.sh (nvcc, sm_90).
//   GOOD   out = x + y, bit-identical to the Triton kernel
//   WRONG  one element off by one                 -> mismatch
//   OOB    writes one element past the end of out -> mismatch (guard bytes)
//   FAULT  stores to an unmapped address          -> crashed (illegal address)
//   TRAP   executes a trap instruction            -> crashed (launch failed)
//   HANG   one thread spins forever               -> timed out
extern "C" __global__ void add_kernel(const float *x, const float *y, float *out, int n, void *gs, void *ps)
{
	int stride = gridDim.x * blockDim.x;
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
		out[i] = __fadd_rn(x[i], y[i]);
#if defined(WRONG)
	if (blockIdx.x == 3 && threadIdx.x == 0)
		out[12345] = __fadd_rn(out[12345], 1.0f);
#elif defined(OOB)
	if (blockIdx.x == 0 && threadIdx.x == 0)
		out[n] = 42.0f;
#elif defined(FAULT)
	if (blockIdx.x == 7 && threadIdx.x == 5)
		*(volatile float *)(0x10ull + (unsigned long long)(n & 0x100)) = 1.0f;
#elif defined(TRAP)
	if (blockIdx.x == 7 && threadIdx.x == 5)
		__trap();
#elif defined(HANG)
	if (blockIdx.x == 0 && threadIdx.x == 0)
		while (*(volatile const float *)x != 12345.678f) // x[0] is random: never true
			;
#endif
}
