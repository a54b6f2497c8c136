// Separate compilation (tests/nvcc_flow.rs): the kernel calls a device function defined in
// rdc_lib.cu, which calls back into this file; nvlink resolves both.
extern __device__ int scale_lib(int x);
__device__ int offset_main(int x) { return x + 7; }

__global__ void apply(int *v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        v[i] = scale_lib(v[i]);
    }
}

int main()
{
    int *v;
    cudaMalloc(&v, 64 * sizeof(int));
    apply<<<1, 64>>>(v, 64);
    cudaDeviceSynchronize();
    cudaFree(v);
    return 0;
}
