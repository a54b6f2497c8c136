// Machine-learning kernels: a row softmax with warp-shuffle reductions, layer normalisation, a
// ReLU with bias broadcast over channels, k-means nearest-centroid assignment with centroids in
// shared memory, and an int8 dot product with __dp4a-free byte unpacking.
__device__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__global__ void softmax_rows(const float *in, float *out, int rows, int cols) {
  int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x & 31;
  if (row >= rows) return;
  const float *p = in + (size_t)row * cols;
  float m = -INFINITY;
  for (int c = lane; c < cols; c += 32) m = fmaxf(m, p[c]);
  m = warp_max(m);
  float s = 0.f;
  for (int c = lane; c < cols; c += 32) s += __expf(p[c] - m);
  s = warp_sum(s);
  float inv = 1.f / s;
  for (int c = lane; c < cols; c += 32) out[(size_t)row * cols + c] = __expf(p[c] - m) * inv;
}

__global__ void layernorm(const float *in, float *out, const float *gamma, const float *beta,
                          int cols, float eps) {
  __shared__ float red[2][32];
  const float *p = in + (size_t)blockIdx.x * cols;
  float s = 0.f, s2 = 0.f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    float v = p[c];
    s += v;
    s2 += v * v;
  }
  s = warp_sum(s);
  s2 = warp_sum(s2);
  if ((threadIdx.x & 31) == 0) {
    red[0][threadIdx.x / 32] = s;
    red[1][threadIdx.x / 32] = s2;
  }
  __syncthreads();
  if (threadIdx.x < 32) {
    int nw = blockDim.x / 32;
    s = threadIdx.x < nw ? red[0][threadIdx.x] : 0.f;
    s2 = threadIdx.x < nw ? red[1][threadIdx.x] : 0.f;
    s = warp_sum(s);
    s2 = warp_sum(s2);
    if (threadIdx.x == 0) {
      red[0][0] = s;
      red[1][0] = s2;
    }
  }
  __syncthreads();
  float mean = red[0][0] / cols, var = red[1][0] / cols - mean * mean;
  float rs = rsqrtf(var + eps);
  for (int c = threadIdx.x; c < cols; c += blockDim.x)
    out[(size_t)blockIdx.x * cols + c] = (p[c] - mean) * rs * gamma[c] + beta[c];
}

__global__ void bias_relu(float *x, const float *bias, int n, int channels, int hw) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int c = (i / hw) % channels;
    x[i] = fmaxf(x[i] + bias[c], 0.f);
  }
}

__global__ void kmeans_assign(const float *pts, int n, int dims, const float *cent, int k,
                              int *assign) {
  extern __shared__ float cs[];
  for (int i = threadIdx.x; i < k * dims; i += blockDim.x) cs[i] = cent[i];
  __syncthreads();
  int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= n) return;
  float best = 3.4e38f;
  int bi = 0;
  for (int c = 0; c < k; ++c) {
    float d = 0.f;
    for (int j = 0; j < dims; ++j) {
      float t = pts[j * n + p] - cs[c * dims + j];
      d += t * t;
    }
    if (d < best) {
      best = d;
      bi = c;
    }
  }
  assign[p] = bi;
}

__global__ void dot_int8(const int *a, const int *b, int n, int *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int s = 0;
  for (; i < n; i += blockDim.x * gridDim.x) {
    int x = a[i], y = b[i];
    for (int k = 0; k < 4; ++k) s += (signed char)(x >> (8 * k)) * (signed char)(y >> (8 * k));
  }
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
  if ((threadIdx.x & 31) == 0) atomicAdd(out, s);
}
