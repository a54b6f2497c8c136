// nvrtc-arch: compute_80
// Double-buffered staging of global data in shared memory with cuda::memcpy_async and
// cuda::pipeline (a CTA-scope pipeline of two stages): the Ampere async-copy idiom.
#include <cuda/pipeline>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void pipeline_sum(const int *in, int *out, int chunks)
{
    __shared__ int buf[2][64];
    __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, 2> state;
    auto block = cg::this_thread_block();
    auto pipe = cuda::make_pipeline(block, &state);
    int acc = 0;
    for (int c = 0; c < chunks + 1; c++) {
        if (c < chunks) {
            pipe.producer_acquire();
            cuda::memcpy_async(block, buf[c & 1], in + 64 * c, sizeof(int) * 64, pipe);
            pipe.producer_commit();
        }
        if (c > 0) {
            pipe.consumer_wait();
            acc += buf[(c - 1) & 1][(threadIdx.x * 5) & 63];
            pipe.consumer_release();
        }
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
