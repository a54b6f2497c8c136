// nvrtc-arch: compute_80
// bf16 arithmetic and conversions as mixed-precision code writes them (sm_80 PTX).
#include <cuda_bf16.h>
extern "C" __global__ void bf16_math(const unsigned *in, unsigned *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned u = in[i], v = in[(i + 5) & 127];
    __nv_bfloat162 a = *reinterpret_cast<__nv_bfloat162 *>(&u);
    __nv_bfloat162 b = *reinterpret_cast<__nv_bfloat162 *>(&v);
    __nv_bfloat162 r[8];
    r[0] = __hadd2(a, b);
    r[1] = __hsub2(a, b);
    r[2] = __hmul2(a, b);
    r[3] = __hfma2(a, b, a);
    r[4] = __hmax2(__hneg2(a), __habs2(b));
    r[5] = __hmin2_nan(a, b);
    r[6] = __hfma2_relu(a, b, b);
    float2 f = __bfloat1622float2(a);
    r[7] = __floats2bfloat162_rn(f.x * 3.0f, f.y + (float)i);
    for (int k = 0; k < 8; k++)
        out[8 * i + k] = *reinterpret_cast<unsigned *>(&r[k]);
}

extern "C" __global__ void bf16_convert(const float *in, unsigned *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = in[i], y = in[(i + 3) & 127];
    __nv_bfloat16 h = __float2bfloat16(x);
    __nv_bfloat16 hz = __float2bfloat16_rz(y);
    __nv_bfloat16 hd = __float2bfloat16_rd(x);
    __nv_bfloat16 hu = __float2bfloat16_ru(y);
    __nv_bfloat16 s = __hadd(h, hz);
    __nv_bfloat16 m = __hfma(hd, hu, h);
    out[8 * i + 0] = __bfloat16_as_ushort(h) | (__bfloat16_as_ushort(hz) << 16);
    out[8 * i + 1] = __bfloat16_as_ushort(hd) | (__bfloat16_as_ushort(hu) << 16);
    out[8 * i + 2] = __bfloat16_as_ushort(s) | (__bfloat16_as_ushort(m) << 16);
    out[8 * i + 3] = __float_as_uint(__bfloat162float(m));
    out[8 * i + 4] = (unsigned)__bfloat162int_rz(s);
    __nv_bfloat162 p = __float22bfloat162_rn(make_float2(x, y));
    out[8 * i + 5] = *reinterpret_cast<unsigned *>(&p);
    __half2 q = __float22half2_rn(make_float2(x, y));
    out[8 * i + 6] = *reinterpret_cast<unsigned *>(&q);
    out[8 * i + 7] = __bfloat16_as_ushort(__hmax(__hneg(h), __habs(hz)));
}
