// nvrtc-arch: compute_80
// cuda::memcpy_async into shared memory through a per-thread cuda::pipeline (thread scope):
// the producer/consumer stages become cp.async with commit_group / wait_group.
#include <cuda/pipeline>
extern "C" __global__ void pipeline_thread(const int *in, int *out, int chunks)
{
    __shared__ int stage[2][128];
    auto pipe = cuda::make_pipeline();
    unsigned t = threadIdx.x;
    int acc = 0;
    for (int c = 0; c < chunks + 1; c++) {
        if (c < chunks) {
            pipe.producer_acquire();
            cuda::memcpy_async(&stage[c & 1][t], &in[(64 * c + t) & 255], sizeof(int), pipe);
            pipe.producer_commit();
        }
        if (c > 0) {
            cuda::pipeline_consumer_wait_prior<1>(pipe);
            acc = acc * 3 + stage[(c - 1) & 1][t];
            pipe.consumer_release();
        }
    }
    out[blockIdx.x * blockDim.x + t] = acc;
}
