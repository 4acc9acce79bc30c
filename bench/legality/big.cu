// Large straight-line kernels for measuring the legality model's cost against kernel size
// (bench/legality/run.sh).  A fully unrolled loop of global loads, shared-memory traffic,
// FMAs and special-function calls; N sets the size (about 5 SASS instructions per step).
#ifndef N
#define N 1000
#endif
extern "C" __global__ void big(const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ c)
{
	__shared__ float sm[256];
	float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
	int i = blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll
	for (int k = 0; k < N; k++) {
		/* the address depends on an earlier result, so loads are not all hoisted (no spills) */
		float x = a[(i + k * 4096) ^ (__float_as_int(acc[(k + 5) & 7]) & 1)];
		acc[k & 7] = fmaf(x, b[k & 255], acc[k & 7]);
		if ((k & 63) == 0) {
			sm[threadIdx.x] = acc[(k + 1) & 7];
			acc[(k + 2) & 7] += __expf(sm[(threadIdx.x + 1) & 255]);
		}
	}
	float s = 0;
#pragma unroll
	for (int j = 0; j < 8; j++)
		s += acc[j];
	c[i] = s;
}
