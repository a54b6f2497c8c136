// Scientific kernels: an all-pairs n-body step with a shared tile of bodies, Black-Scholes call
// and put prices, a 3-D 7-point heat stencil marching in z, a Monte-Carlo pi estimate with an
// xorshift generator and a block reduction, and a 1-D FIR filter in double precision.
__global__ void nbody_step(int n, const float4 *pos, float4 *vel, float dt, float eps2) {
  __shared__ float4 tile[128];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float4 p = i < n ? pos[i] : make_float4(0, 0, 0, 0);
  float3 a = make_float3(0, 0, 0);
  for (int t = 0; t < n; t += 128) {
    int j = t + threadIdx.x;
    tile[threadIdx.x] = j < n ? pos[j] : make_float4(0, 0, 0, 0);
    __syncthreads();
#pragma unroll 4
    for (int k = 0; k < 128; ++k) {
      float4 q = tile[k];
      float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
      float r2 = dx * dx + dy * dy + dz * dz + eps2;
      float inv = rsqrtf(r2);
      float s = q.w * inv * inv * inv;
      a.x += dx * s; a.y += dy * s; a.z += dz * s;
    }
    __syncthreads();
  }
  if (i < n) {
    float4 v = vel[i];
    v.x += a.x * dt; v.y += a.y * dt; v.z += a.z * dt;
    vel[i] = v;
  }
}

__device__ float cnd(float d) {
  const float A1 = 0.31938153f, A2 = -0.356563782f, A3 = 1.781477937f, A4 = -1.821255978f,
              A5 = 1.330274429f, RSQRT2PI = 0.39894228040143267793994605993438f;
  float K = 1.0f / (1.0f + 0.2316419f * fabsf(d));
  float c = RSQRT2PI * __expf(-0.5f * d * d) * (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))));
  return d > 0 ? 1.0f - c : c;
}

__global__ void black_scholes(float *call, float *put, const float *S, const float *X,
                              const float *T, float r, float v, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    float s = S[i], x = X[i], t = T[i];
    float sq = sqrtf(t);
    float d1 = (__logf(s / x) + (r + 0.5f * v * v) * t) / (v * sq);
    float d2 = d1 - v * sq;
    float e = __expf(-r * t);
    call[i] = s * cnd(d1) - x * e * cnd(d2);
    put[i] = x * e * (1.0f - cnd(d2)) - s * (1.0f - cnd(d1));
  }
}

__global__ void heat3d(const float *in, float *out, int nx, int ny, int nz, float c) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || y < 1 || x >= nx - 1 || y >= ny - 1) return;
  size_t plane = (size_t)nx * ny;
  for (int z = 1; z < nz - 1; ++z) {
    size_t i = z * plane + y * nx + x;
    out[i] = in[i] + c * (in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx] + in[i - plane] +
                          in[i + plane] - 6.f * in[i]);
  }
}

__global__ void mc_pi(unsigned seed, int iters, unsigned long long *hits) {
  __shared__ unsigned partial[256];
  unsigned s = seed ^ (blockIdx.x * blockDim.x + threadIdx.x) * 2654435761u;
  if (s == 0) s = 1;
  unsigned h = 0;
  for (int k = 0; k < iters; ++k) {
    s ^= s << 13; s ^= s >> 17; s ^= s << 5;
    float x = (s & 0xffff) / 65536.f, y = (s >> 16) / 65536.f;
    h += x * x + y * y <= 1.f;
  }
  partial[threadIdx.x] = h;
  __syncthreads();
  for (int o = blockDim.x / 2; o > 0; o >>= 1) {
    if (threadIdx.x < o) partial[threadIdx.x] += partial[threadIdx.x + o];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(hits, (unsigned long long)partial[0]);
}

__global__ void fir_double(const double *x, const double *h, double *y, int n, int taps) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double s = 0.0;
  for (int k = 0; k < taps && k <= i; ++k) s = fma(h[k], x[i - k], s);
  y[i] = s;
}
