// Dynamic parallelism (tests/nvcc_flow.rs): a kernel launches a child grid through the device
// runtime; needs -rdc=true and libcudadevrt.
__global__ void child(int *v, int base)
{
    v[base + threadIdx.x] += 1;
}

__global__ void parent(int *v, int parts)
{
    if (threadIdx.x < parts) {
        child<<<1, 32>>>(v, threadIdx.x * 32);
    }
}

int main()
{
    int *v;
    cudaMalloc(&v, 4 * 32 * sizeof(int));
    parent<<<1, 4>>>(v, 4);
    cudaDeviceSynchronize();
    cudaFree(v);
    return 0;
}
