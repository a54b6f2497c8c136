// Loops, library math, integer division, switch and local arrays: the shapes NVVM makes.
__global__ void mathy(const float *x, float *y, const double *dx, double *dy, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  y[i] = sinf(v) + expf(-v * v) + logf(fabsf(v) + 1.0f) + powf(fabsf(v), 1.5f) + erff(v) + tanhf(v);
  double d = dx[i];
  dy[i] = sin(d) * cos(d) + exp(d / 8) + sqrt(fabs(d)) + atan2(d, 1.5) + cbrt(d);
}

__global__ void divmod(const long long *a, const int *b, long long *q, unsigned *r, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  long long x = a[i];
  int y = b[i] | 1;
  q[i] = x / y + x % 1000003;
  r[i] = (unsigned)x / (unsigned)y + (unsigned)x % 13u;
}

__device__ int table(int k) {
  switch (k & 7) {
  case 0: return 3;
  case 1: return k * 5;
  case 2: return k ^ 0x55;
  case 3: return -k;
  case 4: return k << 3;
  case 5: return k >> 1;
  default: return 42;
  }
}

__global__ void locals(const int *in, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int acc[16];
#pragma unroll
  for (int k = 0; k < 16; ++k) acc[k] = in[(i + k) % n];
  int s = 0;
  for (int k = 0; k < 16; ++k) s += acc[(k * 5 + i) & 15] * table(k + i);
  int j = 0;
  while (s > 10 && j < 100) { s = s / 3 + j; ++j; }
  out[i] = s;
}

__global__ void clocks(long long *t, unsigned *sm) {
  long long a = clock64();
  unsigned long long g;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g));
  unsigned s;
  asm("mov.u32 %0, %%smid;" : "=r"(s));
  t[threadIdx.x] = (clock64() - a) + (long long)(g & 0);
  sm[threadIdx.x] = s & 0;
}

extern __shared__ float dyn[];
__global__ void dynshared(const float *in, float *out) {
  dyn[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
  __syncthreads();
  unsigned sz;
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(sz));
  out[blockIdx.x * blockDim.x + threadIdx.x] = dyn[blockDim.x - 1 - threadIdx.x] + (float)(sz & 0);
}
