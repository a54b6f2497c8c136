// Separate compilation with dynamic shared memory (tests/nvcc_flow.rs): the kernel keeps its
// own `__shared__` array and calls dyn_lib.cu's function, which uses the dynamically sized
// array; the launch gives it 256 bytes.
extern __device__ int dyn_lib(int x);

__global__ void dyn_stage(int *v)
{
    __shared__ int own[32];
    int t = threadIdx.x;
    own[t & 31] = v[t];
    __syncthreads();
    v[t] = dyn_lib(v[t] * 3) + own[31 - (t & 31)];
}

int main()
{
    int *v;
    cudaMalloc(&v, 64 * sizeof(int));
    dyn_stage<<<1, 64, 64 * sizeof(int)>>>(v);
    cudaDeviceSynchronize();
    cudaFree(v);
    return 0;
}
