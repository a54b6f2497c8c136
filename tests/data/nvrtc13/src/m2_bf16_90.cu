// nvrtc-arch: compute_90
// bf16 at compute_90, where add/sub/mul, comparisons and integer conversions are single PTX
// instructions (at compute_80 the header builds them from fma and f32).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
extern "C" __global__ void bf16_90(const unsigned *in, unsigned *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned u = in[i], v = in[(i + 5) & 127];
    __nv_bfloat162 a = *reinterpret_cast<__nv_bfloat162 *>(&u);
    __nv_bfloat162 b = *reinterpret_cast<__nv_bfloat162 *>(&v);
    __nv_bfloat162 r[6];
    r[0] = __hadd2(a, b);
    r[1] = __hsub2(a, b);
    r[2] = __hmul2(a, b);
    r[3] = __hmax2(a, b);
    r[4] = __hlt2(a, b);
    r[5] = h2exp2(a);
    __nv_bfloat16 x = __low2bfloat16(a), y = __high2bfloat16(b);
    float f = __bfloat162float(x);
    __half hh = __float2half(f);
    out[8 * i + 7] = (__hgt(x, y) ? 1u : 0u) | ((unsigned)__bfloat162int_rn(y) << 1) ^ __half_as_ushort(hh) ^ __bfloat16_as_ushort(__int2bfloat16_rn(i)) ^ __bfloat16_as_ushort(__float2bfloat16(__half2float(hh)+1.0f)) ^ __bfloat16_as_ushort(__hadd(x, __float2bfloat16(tanhf(f))));
    for (int k = 0; k < 6; k++)
        out[8 * i + k] = *reinterpret_cast<unsigned *>(&r[k]);
    out[8 * i + 6] = __half_as_ushort(hexp2(hh)) | (__half_as_ushort(htanh(hh)) << 16);
}
