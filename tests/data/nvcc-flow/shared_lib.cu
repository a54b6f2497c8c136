// Separate compilation with shared memory (tests/nvcc_flow.rs): a device function with its
// own `__shared__` array and a float literal, called from a kernel in shared_main.cu. nvlink
// places the array in the kernel's shared window and the literal in the kernel's bank 2.
__device__ int stage_lib(int x)
{
    __shared__ int slots[64];
    int t = threadIdx.x;
    slots[t] = x;
    __syncthreads();
    float f = (float)slots[(t + 1) & 63] * 1.2345678f + 0.7654321f;
    return (int)f;
}
