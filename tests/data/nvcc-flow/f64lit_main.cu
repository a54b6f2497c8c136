// Separate compilation with literals (tests/nvcc_flow.rs): the kernel has one f32 literal in
// its constant bank 2 (4 bytes) and calls f64lit_lib.cu's function, whose f64 literal nvlink
// appends to the kernel's bank 2: it must stay 8-aligned (at 0x8, not 0x4).
extern __device__ double scale_f64(double x);

__global__ void lit_stage(float *v, double *d)
{
    int t = threadIdx.x;
    v[t] = v[t] * 1.2345678f + 0.7654321f;
    d[t] = scale_f64(d[t]);
}

int main()
{
    float *v;
    double *d;
    cudaMalloc(&v, 64 * sizeof(float));
    cudaMalloc(&d, 64 * sizeof(double));
    lit_stage<<<1, 64>>>(v, d);
    cudaDeviceSynchronize();
    cudaFree(v);
    cudaFree(d);
    return 0;
}
