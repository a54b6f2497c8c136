// nvrtc-arch: compute_80
// Tensor-core tiles through inline PTX: ldmatrix (.x4 for A, .x2.trans for a row-major B)
// feeding mma.sync m16n8k16 (f16 in, f32 accumulators), and an s8 m16n8k32 on fragments
// loaded straight into registers. One tile per warp; leafold emulates both on sm_5x.
#include <cuda_fp16.h>
extern "C" __global__ void mma_f16(const __half *a, const __half *b, const float *c, float *d)
{
    __shared__ __align__(16) __half sa[4][16 * 16];
    __shared__ __align__(16) __half sb[4][16 * 8];
    unsigned lane = threadIdx.x & 31, w = threadIdx.x / 32;
    unsigned gw = blockIdx.x * (blockDim.x / 32) + w;
    if (w >= 4)
        return;
    for (int i = lane; i < 256; i += 32)
        sa[w][i] = a[256 * gw + i];
    for (int i = lane; i < 128; i += 32)
        sb[w][i] = b[128 * gw + i];
    __syncwarp();
    unsigned a0, a1, a2, a3, b0, b1;
    unsigned pa = (unsigned)__cvta_generic_to_shared(&sa[w][(lane % 16) * 16 + (lane / 16) * 8]);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(a0), "=r"(a1), "=r"(a2), "=r"(a3)
                 : "r"(pa));
    unsigned pb = (unsigned)__cvta_generic_to_shared(&sb[w][(lane % 16) * 8]);
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
                 : "=r"(b0), "=r"(b1)
                 : "r"(pb));
    const float *cc = c + 128 * gw + 4 * lane;
    float d0 = cc[0], d1 = cc[1], d2 = cc[2], d3 = cc[3];
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
                 "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                 : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    float *dd = d + 128 * gw + 4 * lane;
    dd[0] = d0;
    dd[1] = d1;
    dd[2] = d2;
    dd[3] = d3;
}

extern "C" __global__ void mma_s8(const int *a, const int *b, int *d)
{
    unsigned lane = threadIdx.x & 31;
    unsigned gw = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int *fa = a + 128 * gw + 4 * lane;
    const int *fb = b + 64 * gw + 2 * lane;
    int d0 = lane, d1 = -(int)lane, d2 = 7, d3 = gw;
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, "
                 "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                 : "+r"(d0), "+r"(d1), "+r"(d2), "+r"(d3)
                 : "r"(fa[0]), "r"(fa[1]), "r"(fa[2]), "r"(fa[3]), "r"(fb[0]), "r"(fb[1]));
    asm volatile("mma.sync.aligned.m8n8k16.row.col.s32.u8.s8.s32 {%0, %1}, {%2}, {%3}, {%0, %1};"
                 : "+r"(d2), "+r"(d3)
                 : "r"(fa[0] ^ fb[1]), "r"(fb[0]));
    int *dd = d + 128 * gw + 4 * lane;
    dd[0] = d0;
    dd[1] = d1;
    dd[2] = d2;
    dd[3] = d3;
}
