// Small application kernels of the shapes people write: tiled matrix multiply, a stencil, a
// transpose through shared memory, a bitonic step and a block scan.
#define TILE 16
__global__ void matmul(const float *A, const float *B, float *C, int n) {
  __shared__ float As[TILE][TILE], Bs[TILE][TILE];
  int r = blockIdx.y * TILE + threadIdx.y, c = blockIdx.x * TILE + threadIdx.x;
  float acc = 0.f;
  for (int t = 0; t < n; t += TILE) {
    As[threadIdx.y][threadIdx.x] = (r < n && t + threadIdx.x < n) ? A[r * n + t + threadIdx.x] : 0.f;
    Bs[threadIdx.y][threadIdx.x] = (c < n && t + threadIdx.y < n) ? B[(t + threadIdx.y) * n + c] : 0.f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  if (r < n && c < n) C[r * n + c] = acc;
}

__global__ void stencil(const double *in, double *out, int nx, int ny) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || y < 1 || x >= nx - 1 || y >= ny - 1) return;
  int i = y * nx + x;
  out[i] = 0.25 * (in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx]) - in[i];
}

__global__ void transpose(const float *in, float *out, int w, int h) {
  __shared__ float tile[32][33];
  int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8)
    if (x < w && y + j < h) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * w + x];
  __syncthreads();
  x = blockIdx.y * 32 + threadIdx.x;
  y = blockIdx.x * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8)
    if (x < h && y + j < w) out[(y + j) * h + x] = tile[threadIdx.x][threadIdx.y + j];
}

__global__ void bitonic_step(unsigned *v, int j, int k) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x, l = i ^ j;
  if (l > i) {
    unsigned a = v[i], b = v[l];
    bool up = (i & k) == 0;
    if ((a > b) == up) { v[i] = b; v[l] = a; }
  }
}

__global__ void block_scan(const int *in, int *out) {
  __shared__ int s[512];
  int t = threadIdx.x;
  s[t] = in[blockIdx.x * blockDim.x + t];
  __syncthreads();
  for (int o = 1; o < blockDim.x; o <<= 1) {
    int v = t >= o ? s[t - o] : 0;
    __syncthreads();
    s[t] += v;
    __syncthreads();
  }
  out[blockIdx.x * blockDim.x + t] = s[t];
}
