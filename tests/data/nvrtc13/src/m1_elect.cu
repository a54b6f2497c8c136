// nvrtc-arch: compute_90
// Cooperative groups: the leader of the coalesced lanes, and elect.sync (sm_90).
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void coalesced_leader(const unsigned *in, unsigned *out)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (in[i] & 1) {
        cg::coalesced_group g = cg::coalesced_threads();
        unsigned s = g.size();
        unsigned r = g.thread_rank();
        out[i] = (s << 8) | r;
        if (g.thread_rank() == 0)
            atomicAdd(&out[1024], s);
    }
}

extern "C" __global__ void elect_one(const unsigned *in, unsigned *out)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned is_elected;
    unsigned lane;
    asm volatile("{\n .reg .pred p;\n elect.sync %1|p, %2;\n selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(is_elected), "=r"(lane) : "r"(0xffffffffu));
    out[i] = is_elected | (lane << 1);
    if (in[i] & 1) {
        unsigned m = __activemask();
        unsigned e2, l2;
        asm volatile("{\n .reg .pred p;\n elect.sync %1|p, %2;\n selp.u32 %0, 1, 0, p;\n}"
                     : "=r"(e2), "=r"(l2) : "r"(m));
        out[i] += (e2 << 8) | (l2 << 9);
    }
}
