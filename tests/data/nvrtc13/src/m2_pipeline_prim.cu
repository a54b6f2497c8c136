// nvrtc-arch: compute_80
// The C primitives of <cuda_pipeline.h>: __pipeline_memcpy_async of 4, 8 and 16 bytes,
// __pipeline_commit, __pipeline_wait_prior.
#include <cuda_pipeline.h>
extern "C" __global__ void pipeline_prim(const int4 *in, int *out)
{
    __shared__ int4 s16[64];
    __shared__ int2 s8[64];
    __shared__ int s4[64];
    int t = threadIdx.x, g = blockIdx.x * blockDim.x + t;
    __pipeline_memcpy_async(&s16[t], &in[g], 16);
    __pipeline_commit();
    __pipeline_memcpy_async(&s8[t], reinterpret_cast<const int2 *>(&in[g]) + 1, 8);
    __pipeline_memcpy_async(&s4[t], reinterpret_cast<const int *>(&in[g]) + 3, 4);
    __pipeline_commit();
    __pipeline_wait_prior(1);
    int a = s16[t].x + s16[t].w;
    __pipeline_wait_prior(0);
    __syncthreads();
    out[g] = a + s8[(t + 1) & 63].y + s4[(t + 2) & 63];
}
