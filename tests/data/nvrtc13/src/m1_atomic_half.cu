// nvrtc-arch: compute_75
// Half-precision atomics (atom.add.noftz.f16 from sm_70, .f16x2 from sm_60): sums of small
// integers, exact in f16 whatever the order, on neighbouring halves of one word.
#include <cuda_fp16.h>

extern "C" __global__ void hsum(const unsigned *in, __half *acc, __half2 *acc2)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    __half v = __uint2half_rn(in[i] & 3);
    atomicAdd(&acc[i & 3], v);
    atomicAdd(&acc2[i & 1], __halves2half2(v, __uint2half_rn(in[i] & 1)));
}

extern "C" __global__ void hsum_ret(const unsigned *in, __half *acc, unsigned short *old)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    __half r = atomicAdd(&acc[i], __uint2half_rn(in[i] & 7));
    old[i] = __half_as_ushort(r);
}
