// Control flow in the shapes optimisers leave: rotated loops, early exits, breaks out of nested
// loops, loops whose body is laid out before their header, and data-dependent trip counts.
__global__ void search(const int *keys, int n, const int *q, int *pos) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int want = q[i], lo = 0, hi = n;
  while (lo < hi) {
    int mid = (lo + hi) >> 1;
    if (keys[mid] < want) lo = mid + 1; else hi = mid;
  }
  pos[i] = (lo < n && keys[lo] == want) ? lo : -1;
}

__global__ void nested(const int *m, int rows, int cols, int *found) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int r = 0, c = 0;
  for (r = 0; r < rows; ++r) {
    for (c = 0; c < cols; ++c)
      if (m[r * cols + c] == t) goto done;
  }
  r = c = -1;
done:
  found[t] = r * 1000 + c;
}

__global__ void collatz(const unsigned *in, unsigned *steps) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned x = in[i] | 1, s = 0;
  do {
    x = (x & 1) ? 3 * x + 1 : x >> 1;
    ++s;
    if (s > 200) break;
  } while (x != 1);
  steps[i] = s;
}

__global__ void mandel(float *out, int w, int h, int iters) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  float cr = -2.f + 3.f * x / w, ci = -1.5f + 3.f * y / h, zr = 0, zi = 0;
  int k = 0;
  for (; k < iters && zr * zr + zi * zi < 4.f; ++k) {
    float t = zr * zr - zi * zi + cr;
    zi = 2.f * zr * zi + ci;
    zr = t;
  }
  out[y * w + x] = k == iters ? 0.f : k + 1 - __log2f(__logf(sqrtf(zr * zr + zi * zi)));
}
