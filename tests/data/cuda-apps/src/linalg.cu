// Linear-algebra kernels in the shapes applications write them: CSR sparse matrix-vector
// products (scalar and warp-per-row), a dense matrix-vector product with a shared x tile, an
// AXPY with a grid-stride loop, and a register-blocked SGEMM (each thread computes 4x4 outputs).
__global__ void spmv_csr_scalar(int rows, const int *rowptr, const int *cols, const float *vals,
                                const float *x, float *y) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float s = 0.f;
    for (int j = rowptr[r]; j < rowptr[r + 1]; ++j) s += vals[j] * x[cols[j]];
    y[r] = s;
  }
}

__global__ void spmv_csr_vector(int rows, const int *rowptr, const int *cols, const float *vals,
                                const float *x, float *y) {
  int lane = threadIdx.x & 31;
  int r = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  if (r >= rows) return;
  float s = 0.f;
  for (int j = rowptr[r] + lane; j < rowptr[r + 1]; j += 32) s += vals[j] * __ldg(&x[cols[j]]);
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
  if (lane == 0) y[r] = s;
}

__global__ void gemv_tiled(int m, int n, const float *A, const float *x, float *y) {
  __shared__ float xs[256];
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0.f;
  for (int t = 0; t < n; t += 256) {
    if (t + threadIdx.x < n) xs[threadIdx.x] = x[t + threadIdx.x];
    __syncthreads();
    int lim = min(256, n - t);
    if (r < m)
      for (int k = 0; k < lim; ++k) s += A[(size_t)r * n + t + k] * xs[k];
    __syncthreads();
  }
  if (r < m) y[r] = s;
}

__global__ void axpy_grid(int n, double a, const double *x, double *y) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    y[i] = a * x[i] + y[i];
}

#define BS 64
__global__ void sgemm_4x4(int n, const float *A, const float *B, float *C, float alpha, float beta) {
  __shared__ float As[16][BS + 1];
  __shared__ float Bs[16][BS];
  int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  int row0 = blockIdx.y * BS + ty * 4, col0 = blockIdx.x * BS + tx * 4;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < n; k0 += 16) {
    for (int i = threadIdx.x; i < 16 * BS; i += 256) {
      int kk = i % 16, rr = i / 16;
      int gr = blockIdx.y * BS + rr, gk = k0 + kk;
      As[kk][rr] = (gr < n && gk < n) ? A[gr * n + gk] : 0.f;
      int bk = i / BS, bc = i % BS;
      int gc = blockIdx.x * BS + bc;
      Bs[bk][bc] = (k0 + bk < n && gc < n) ? B[(k0 + bk) * n + gc] : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < 16; ++k) {
      float a[4], b[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) a[i] = As[k][ty * 4 + i];
#pragma unroll
      for (int j = 0; j < 4; ++j) b[j] = Bs[k][tx * 4 + j];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      int r = row0 + i, c = col0 + j;
      if (r < n && c < n) C[r * n + c] = alpha * acc[i][j] + beta * C[r * n + c];
    }
}
