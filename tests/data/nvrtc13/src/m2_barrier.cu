// nvrtc-arch: compute_80
// cuda::barrier (an mbarrier in shared memory) completing cuda::memcpy_async copies, and used
// as a plain split arrive/wait barrier.
#include <cuda/barrier>
extern "C" __global__ void barrier_copy(const int *in, int *out)
{
    __shared__ int buf[64];
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    if (threadIdx.x == 0)
        init(&bar, blockDim.x);
    __syncthreads();
    cuda::memcpy_async(&buf[threadIdx.x], &in[blockIdx.x * blockDim.x + threadIdx.x], sizeof(int), bar);
    bar.arrive_and_wait();
    int v = buf[(threadIdx.x + 1) % blockDim.x];
    auto token = bar.arrive();
    v += threadIdx.x;
    bar.wait(std::move(token));
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
