// System calls through the nvcc flow (tests/nvcc_flow.rs): printf with every argument class,
// device malloc/free and assert; vprintf, malloc, free and __assertfail stay unresolved in the
// object and the executable (the driver provides them).
#include <cassert>
#include <cstdio>

__global__ void report(const double *x, int *out, int n)
{
    int i = threadIdx.x;
    int *scratch = (int *)malloc(n * sizeof(int));
    if (scratch != nullptr) {
        scratch[0] = i * 3;
        out[i] = scratch[0];
        free(scratch);
    }
    assert(n > 0);
    printf("thread %d: x=%f (%e) %s at %p, %lld\n", i, x[i], x[i], "ok", out + i, (long long)n << 33);
}

int main()
{
    double *x;
    int *out;
    cudaMalloc(&x, 32 * sizeof(double));
    cudaMalloc(&out, 32 * sizeof(int));
    report<<<1, 32>>>(x, out, 32);
    cudaDeviceSynchronize();
    return 0;
}
