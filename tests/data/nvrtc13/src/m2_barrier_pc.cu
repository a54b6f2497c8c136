// nvrtc-arch: compute_80
// Producer/consumer through two cuda::barrier objects (mbarriers in shared memory), where
// only some threads wait: warp 1 produces (fills a shared buffer, arrives on `full`), warp 0
// consumes (polls `full`'s phase parity without arriving, reads the buffer, arrives on
// `empty`); from the second round on, the producers poll `empty` before refilling. A wait
// that every thread of the CTA had to take would deadlock. Launch: 64 threads per CTA.
#include <cuda/barrier>
#include <cuda/ptx>
extern "C" __global__ void barrier_producer_consumer(const int *in, int *out)
{
    __shared__ int buf[32];
    __shared__ cuda::barrier<cuda::thread_scope_block> full, empty;
    unsigned t = threadIdx.x;
    int g = blockIdx.x * blockDim.x + t;
    if (t == 0) {
        init(&full, 32);
        init(&empty, 32);
    }
    __syncthreads();
    int acc = 0;
    for (int round = 0; round < 3; round++) {
        if (t >= 32) {
            if (round > 0)
                while (!cuda::ptx::mbarrier_test_wait_parity(
                    cuda::device::barrier_native_handle(empty), (round - 1) & 1)) {
                }
            buf[t - 32] = in[g] * (round + 2) + acc;
            acc += 1;
            (void)full.arrive();
        } else {
            while (!cuda::ptx::mbarrier_test_wait_parity(cuda::device::barrier_native_handle(full),
                                                         round & 1)) {
            }
            acc = acc * 3 + buf[(t + round) & 31];
            (void)empty.arrive();
        }
    }
    out[g] = acc;
}
