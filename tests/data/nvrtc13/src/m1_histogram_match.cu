// nvrtc-arch: compute_75
// Warp-aggregated histogram: lanes holding the same bin elect a leader with __match_any_sync,
// and the leader adds the group's size with one atomic.
extern "C" __global__ void hist_match(const unsigned *in, unsigned *bins, unsigned nbins, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned bin = in[i] % nbins;
    unsigned active = __activemask();
    unsigned peers = __match_any_sync(active, bin);
    int leader = __ffs(peers) - 1;
    if ((threadIdx.x & 31) == leader)
        atomicAdd(&bins[bin], __popc(peers));
}

extern "C" __global__ void all_equal(const unsigned *in, unsigned *out)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    int pred;
    unsigned long long v = in[i] & 3;
    unsigned m = __match_all_sync(0xffffffffu, v, &pred);
    unsigned m32 = __match_any_sync(0xffffffffu, (unsigned)(in[i] & 1));
    out[i] = m ^ (pred << 5) ^ (m32 * 3);
}
