// nvcc-arch: compute_53 (half arithmetic needs __CUDA_ARCH__ >= 530)
// Half precision as cuda_fp16.h writes it.
#include <cuda_fp16.h>

__global__ void haxpy(int n, __half a, const __half *x, __half *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __hfma(a, x[i], y[i]);
}

__global__ void h2ops(int n, const __half2 *x, const __half2 *y, __half2 *z, float *f) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    __half2 a = x[i], b = y[i];
    __half2 s = __hadd2(a, b);
    __half2 p = __hmul2(a, b);
    __half2 q = __hfma2(s, p, a);
    __half2 d = __hsub2(q, __hneg2(b));
    __half2 m = __hgt2(a, b);
    z[i] = __hadd2(d, m);
    f[i] = __low2float(q) + __high2float(s) + (float)__hbeq2(a, b);
  }
}

__global__ void hconv(const float *in, __half *out, int *iout) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = in[i];
  __half h = __float2half_rn(v);
  __half r = __hmul(h, __float2half(0.5f));
  out[i] = __hlt(r, h) ? r : __habs(h);
  iout[i] = __half2int_rz(h) + __half2int_rn(r);
}
