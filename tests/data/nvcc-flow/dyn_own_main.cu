// Separate compilation with dynamic shared memory (tests/nvcc_flow.rs): the kernel uses its
// own dynamically sized `extern __shared__` array and calls shared_lib.cu's function, whose
// `__shared__` array nvlink adds to the kernel's static window; the dynamic array must lie
// after it (ptxas: `STS [R3+0x100]`), so its address is the linker's.
extern __device__ int stage_lib(int x);

__global__ void dyn_own(int *v)
{
    extern __shared__ int dyn[];
    int t = threadIdx.x;
    dyn[t] = v[t];
    __syncthreads();
    v[t] = stage_lib(v[t]) + dyn[63 - t];
}

int main()
{
    int *v;
    cudaMalloc(&v, 64 * sizeof(int));
    dyn_own<<<1, 64, 64 * sizeof(int)>>>(v);
    cudaDeviceSynchronize();
    cudaFree(v);
    return 0;
}
