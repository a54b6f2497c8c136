// Separate compilation with dynamic shared memory (tests/nvcc_flow.rs): a device function
// that addresses the kernel's dynamically sized `extern __shared__` array. Its object
// leaves the array's symbol undefined; nvlink resolves it after the calling kernel's static
// window (which it extends with any other object's `__shared__` data).
__device__ int dyn_lib(int x)
{
    extern __shared__ int scratch[];
    int t = threadIdx.x;
    scratch[t] = x;
    __syncthreads();
    return scratch[(t + 1) & 63] + 1;
}
