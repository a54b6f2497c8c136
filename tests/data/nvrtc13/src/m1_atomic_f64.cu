// nvrtc-arch: compute_75
// Double-precision sums with atomicAdd(double*) (atom.global.add.f64 from sm_60 on), and the
// other atomics Maxwell lacks.
extern "C" __global__ void dsum(const double *in, double *out, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&out[i % 4], in[i]);
}

extern "C" __global__ void dsum_ret(const double *in, double *out, double *old)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    old[i] = atomicAdd(&out[i & 1], in[i]);
}

extern "C" __global__ void shared_dsum(const double *in, double *out)
{
    __shared__ double acc[2];
    if (threadIdx.x < 2) acc[threadIdx.x] = 0.0;
    __syncthreads();
    atomicAdd(&acc[threadIdx.x & 1], in[blockIdx.x * blockDim.x + threadIdx.x]);
    __syncthreads();
    if (threadIdx.x < 2) out[blockIdx.x * 2 + threadIdx.x] = acc[threadIdx.x];
}

// 16-bit compare-and-swap (atom.cas.b16, sm_70): contended half-words next to each other in
// one word, and the old values returned.
extern "C" __global__ void short_cas(unsigned short *p, const unsigned short *in, unsigned short *old)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned short want = in[i] & 1;
    old[i] = atomicCAS(&p[i & 3], want, (unsigned short)(in[i] | 1));
}
