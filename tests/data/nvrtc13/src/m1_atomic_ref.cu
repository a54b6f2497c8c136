// nvrtc-arch: compute_75
// cuda::atomic_ref with explicit memory orders and scopes, and the __threadfence family.
#include <cuda/atomic>

extern "C" __global__ void publish(unsigned *data, unsigned *flag, unsigned *out)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    data[i] = i * 3u;
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> f(flag[0]);
    f.fetch_add(1u, cuda::memory_order_release);
    unsigned seen = f.load(cuda::memory_order_acquire);
    out[i] = seen >= 1u;
}

extern "C" __global__ void orders(unsigned *ctr, unsigned *out)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    cuda::atomic_ref<unsigned, cuda::thread_scope_block> b(ctr[0]);
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> d(ctr[1]);
    cuda::atomic_ref<unsigned, cuda::thread_scope_system> s(ctr[2]);
    unsigned a = b.fetch_add(1u, cuda::memory_order_relaxed);
    unsigned c = d.fetch_or(1u << (i & 31), cuda::memory_order_acq_rel);
    s.fetch_max(i, cuda::memory_order_seq_cst);
    d.store(5u, cuda::memory_order_release);
    unsigned e = b.load(cuda::memory_order_relaxed);
    out[i] = (a < 1000000u) + (c != 0xdeadu) + (e >= 1u);
}

extern "C" __global__ void fences(unsigned *p, unsigned *out)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    p[i] = i;
    __threadfence_block();
    p[i] += 1;
    __threadfence();
    p[i] += 2;
    __threadfence_system();
    cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device);
    out[i] = p[i];
}

extern "C" __global__ void float_minmax(float *p, const float *in)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    cuda::atomic_ref<float, cuda::thread_scope_device> m(p[0]);
    m.fetch_min(in[i], cuda::memory_order_relaxed);
    cuda::atomic_ref<float, cuda::thread_scope_device> x(p[1]);
    x.fetch_max(in[i], cuda::memory_order_relaxed);
    cuda::atomic_ref<float, cuda::thread_scope_device> a(p[2]);
    a.fetch_add(in[i], cuda::memory_order_relaxed);
}
