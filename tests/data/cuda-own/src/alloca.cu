// nvcc-arch: compute_52
// clang: none (clang-14's NVPTX back end cannot select dynamic_stackalloc and refuses VLAs in
// device code; alloca needs LLVM 17 or later there)
// Per-thread scratch arrays sized at run time with alloca() (PTX `alloca`, sm_52 and PTX ISA
// 7.3 and later): a prefix sum in a buffer sized by a kernel argument, and a device function
// that allocates on every call from a loop (nvcc keeps it a `.func`: its allocation is
// released at each return).
#include <alloca.h>

extern "C" __global__ void alloca_prefix(const int *in, int *out, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int *buf = (int *)alloca(n * sizeof(int));
    for (int i = 0; i < n; i++)
        buf[i] = in[(t + i) % 64] * (i + 1);
    int s = 0;
    for (int i = n - 1; i >= 0; i--) {
        s += buf[i];
        buf[i] = s;
    }
    out[t] = (n > 0 ? buf[t % n] : 0) + s;
}

__device__ __noinline__ int alloca_round(const int *in, int t, int r)
{
    int m = (in[(t + r) % 64] & 7) + 1;
    int *v = (int *)alloca(m * sizeof(int));
    for (int i = 0; i < m; i++)
        v[i] = in[(t * 3 + i) % 64] ^ r;
    int acc = 0;
    for (int i = 0; i < m; i++)
        acc += v[m - 1 - i] * (i + 1);
    return acc;
}

extern "C" __global__ void alloca_rounds(const int *in, int *out, int rounds)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int acc = 0;
    for (int r = 1; r <= rounds; r++)
        acc += alloca_round(in, t, r);
    out[t] = acc;
}
