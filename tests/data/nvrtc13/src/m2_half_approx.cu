// nvrtc-arch: compute_90
// __half and __nv_bfloat16 special functions (hexp2, h2rcp, tanh) that sm_75+ PTX has as one
// instruction (ex2.approx.f16, rcp.approx.ftz.f16?, tanh.approx.*).
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void half_approx(const unsigned *in, unsigned *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned u = in[i];
    __half2 a = *reinterpret_cast<__half2 *>(&u);
    __nv_bfloat162 b = *reinterpret_cast<__nv_bfloat162 *>(&u);
    __half2 r0 = h2exp2(a);
    __half2 r1 = h2rcp(a);
    __half r2 = hexp2(__low2half(a));
    __half r3 = htanh_approx(__high2half(a));
    __half2 r4 = h2tanh_approx(a);
    __nv_bfloat162 r5 = h2exp2(b);
    __nv_bfloat16 r6 = htanh_approx(__low2bfloat16(b));
    float t = tanhf(__uint_as_float(u));
    out[8 * i + 0] = *reinterpret_cast<unsigned *>(&r0);
    out[8 * i + 1] = *reinterpret_cast<unsigned *>(&r1);
    out[8 * i + 2] = __half_as_ushort(r2) | (__half_as_ushort(r3) << 16);
    out[8 * i + 3] = *reinterpret_cast<unsigned *>(&r4);
    out[8 * i + 4] = *reinterpret_cast<unsigned *>(&r5);
    out[8 * i + 5] = __bfloat16_as_ushort(r6);
    out[8 * i + 6] = __float_as_uint(t);
}
