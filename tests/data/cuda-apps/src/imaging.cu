// Image-processing kernels: a separable Gaussian row pass with taps in constant memory, a Sobel
// magnitude on 8-bit pixels, a 256-bin histogram with shared atomics, bilinear resize of RGBA
// float pixels, and an RGB to YUV conversion on packed uchar4.
__constant__ float taps[17];

__global__ void gauss_rows(const float *in, float *out, int w, int h, int radius) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  float s = 0.f;
  for (int k = -radius; k <= radius; ++k) {
    int xx = min(max(x + k, 0), w - 1);
    s += taps[k + radius] * in[y * w + xx];
  }
  out[y * w + x] = s;
}

__global__ void sobel(const unsigned char *in, unsigned char *out, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || y < 1 || x >= w - 1 || y >= h - 1) return;
  const unsigned char *p = in + y * w + x;
  int gx = -p[-w - 1] - 2 * p[-1] - p[w - 1] + p[-w + 1] + 2 * p[1] + p[w + 1];
  int gy = -p[-w - 1] - 2 * p[-w] - p[-w + 1] + p[w - 1] + 2 * p[w] + p[w + 1];
  float m = sqrtf((float)(gx * gx + gy * gy));
  out[y * w + x] = (unsigned char)min(255, (int)m);
}

__global__ void histogram256(const unsigned char *data, int n, unsigned *hist) {
  __shared__ unsigned bins[256];
  for (int i = threadIdx.x; i < 256; i += blockDim.x) bins[i] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    atomicAdd(&bins[data[i]], 1u);
  __syncthreads();
  for (int i = threadIdx.x; i < 256; i += blockDim.x)
    if (bins[i]) atomicAdd(&hist[i], bins[i]);
}

__global__ void resize_bilinear(const float4 *in, int iw, int ih, float4 *out, int ow, int oh) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= ow || y >= oh) return;
  float fx = (x + 0.5f) * iw / ow - 0.5f, fy = (y + 0.5f) * ih / oh - 0.5f;
  int x0 = max(0, min(iw - 1, (int)floorf(fx))), y0 = max(0, min(ih - 1, (int)floorf(fy)));
  int x1 = min(iw - 1, x0 + 1), y1 = min(ih - 1, y0 + 1);
  float ax = fx - floorf(fx), ay = fy - floorf(fy);
  float4 a = in[y0 * iw + x0], b = in[y0 * iw + x1], c = in[y1 * iw + x0], d = in[y1 * iw + x1];
  float4 r;
  r.x = (1 - ay) * ((1 - ax) * a.x + ax * b.x) + ay * ((1 - ax) * c.x + ax * d.x);
  r.y = (1 - ay) * ((1 - ax) * a.y + ax * b.y) + ay * ((1 - ax) * c.y + ax * d.y);
  r.z = (1 - ay) * ((1 - ax) * a.z + ax * b.z) + ay * ((1 - ax) * c.z + ax * d.z);
  r.w = (1 - ay) * ((1 - ax) * a.w + ax * b.w) + ay * ((1 - ax) * c.w + ax * d.w);
  out[y * ow + x] = r;
}

__global__ void rgb_to_yuv(const uchar4 *in, uchar4 *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  uchar4 p = in[i];
  float y = 0.299f * p.x + 0.587f * p.y + 0.114f * p.z;
  float u = -0.169f * p.x - 0.331f * p.y + 0.5f * p.z + 128.f;
  float v = 0.5f * p.x - 0.419f * p.y - 0.081f * p.z + 128.f;
  out[i] = make_uchar4((unsigned char)__saturatef(y / 255.f) * 255, (unsigned char)fminf(255.f, u),
                       (unsigned char)fminf(255.f, v), p.w);
}
