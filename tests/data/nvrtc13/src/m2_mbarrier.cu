// nvrtc-arch: compute_90
// An mbarrier used as a CTA barrier through the cuda::ptx wrappers (<cuda/ptx>), without
// CCCL's timed back-off loop: init, arrive (count 1 and count n), test_wait on the state,
// try_wait.parity, pending_count, cp.async.mbarrier.arrive.noinc, inval. Also bmsk.
#include <cuda/ptx>
#include <cuda_pipeline.h>
namespace ptx = cuda::ptx;
extern "C" __global__ void mbarrier_phases(const int *in, int *out)
{
    __shared__ __align__(8) unsigned long long bar;
    __shared__ int buf[64];
    unsigned t = threadIdx.x, n = blockDim.x;
    int g = blockIdx.x * n + t;
    if (t == 0)
        ptx::mbarrier_init(&bar, n);
    __syncthreads();
    // Phase 0: every thread stores, then arrives and waits.
    buf[t & 63] = in[g];
    unsigned long long s = ptx::mbarrier_arrive(&bar);
    unsigned pend = ptx::mbarrier_pending_count(s);
    while (!ptx::mbarrier_test_wait(&bar, s)) {
    }
    int v = buf[(t + 1) & 63];
    // Phase 1: warp leaders arrive for their whole warp (count 32), waiting on parity 1.
    __syncwarp();
    if ((t & 31) == 0)
        ptx::mbarrier_arrive(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &bar, 32u);
    while (!ptx::mbarrier_try_wait_parity(&bar, 1u)) {
    }
    // Phase 2: an async copy tracked by the barrier (noinc: it counts as the arrival).
    __pipeline_memcpy_async(&buf[t & 63], &in[(g + 3) % (2 * n)], 4);
    ptx::cp_async_mbarrier_arrive_noinc(&bar);
    while (!ptx::mbarrier_try_wait_parity(&bar, 0u)) {
    }
    v += buf[(t + 2) & 63];
    __syncthreads();
    if (t == 0)
        ptx::mbarrier_inval(&bar);
    out[2 * g] = v;
    out[2 * g + 1] = (int)pend + (int)ptx::bmsk_clamp(t & 7, in[g] & 15);
}
