// Calls the recursive device function of rec_lib.cu (tests/nvcc_flow.rs).
extern __device__ unsigned fib_xor(unsigned n);

__global__ void apply(unsigned *v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        v[i] = fib_xor(v[i]);
    }
}

int main()
{
    unsigned *v;
    cudaMalloc(&v, 64 * sizeof(unsigned));
    apply<<<1, 64>>>(v, 64);
    cudaDeviceSynchronize();
    cudaFree(v);
    return 0;
}
