// The nvcc flow test's single-file program (tests/nvcc_flow.rs): one kernel, a host main.
// Built with leafold in place of ptxas as -cubin, -c, a linked executable and -rdc=true.
#include <cstdio>

__global__ void saxpy(int n, float a, const float *x, float *y, int stride)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i * stride] = a * x[i * stride + 1] + y[i * stride];
    }
}

int main()
{
    const int n = 256;
    float *x, *y;
    cudaMalloc(&x, 2 * n * sizeof(float));
    cudaMalloc(&y, 2 * n * sizeof(float));
    saxpy<<<(n + 127) / 128, 128>>>(n, 2.0f, x, y, 2);
    cudaError_t e = cudaDeviceSynchronize();
    printf("saxpy: %s\n", cudaGetErrorString(e));
    cudaFree(x);
    cudaFree(y);
    return 0;
}
