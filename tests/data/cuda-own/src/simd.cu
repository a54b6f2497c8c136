// Video and SIMD intrinsics, 64-bit bit manipulation.
__global__ void simd(const unsigned *a, const unsigned *b, unsigned *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned x = a[i], y = b[i];
  unsigned r = __vabsdiffu4(x, y) + __vabsdiffs2(x, y);
  r ^= __vadd2(x, y) + __vsub4(x, y);
  r ^= __vmaxu4(x, y) ^ __vmins2(x, y);
  r += __vcmpgtu4(x, y) + __vsetles2(x, y);
  r += __sad(x, y, 7) + __usad(x, y, r);
  r ^= __byte_perm(x, y, 0x5410);
  r += __vavgu4(x, y) + __vhaddu2(x, y);
  out[i] = r;
}

__global__ void bits64(const unsigned long long *a, unsigned long long *out, int *cnt) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned long long x = a[i];
  out[i] = __brevll(x) ^ (x >> (i & 63)) ^ ((x & 0xfffull) << 20);
  cnt[i] = __popcll(x) + __clzll(x) + __ffsll(x);
}

struct Packed { unsigned long long a : 13, b : 29, c : 22; };
__global__ void bitfields(Packed *p, const unsigned *v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  Packed q = p[i];
  q.b = v[i];
  q.c = q.a + 3;
  p[i] = q;
}
