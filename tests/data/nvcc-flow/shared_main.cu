// Separate compilation with shared memory (tests/nvcc_flow.rs): the kernel keeps its own
// `__shared__` array and a literal in its constant bank 2, and calls a device function of
// shared_lib.cu that has another array and literal: nvlink places the function's array after
// the kernel's in the kernel's shared window and its literal after the kernel's in bank 2.
extern __device__ int stage_lib(int x);

__global__ void stage(int *v, double *d)
{
    __shared__ int own[64];
    int t = threadIdx.x;
    own[t] = v[t] * 3;
    __syncthreads();
    d[t] = d[t] * 1.0000000001 + 0.25;
    v[t] = stage_lib(v[t]) + own[63 - t];
}

int main()
{
    int *v;
    double *d;
    cudaMalloc(&v, 64 * sizeof(int));
    cudaMalloc(&d, 64 * sizeof(double));
    stage<<<1, 64>>>(v, d);
    cudaDeviceSynchronize();
    cudaFree(v);
    cudaFree(d);
    return 0;
}
