// nvrtc-arch: compute_80
// Warp reductions with the sm_80 __reduce_*_sync intrinsics (redux.sync), full and partial masks.
extern "C" __global__ void reduce_all(const unsigned *in, unsigned *out)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned v = in[i];
    int s = (int)v;
    unsigned m = 0xffffffffu;
    out[8 * i + 0] = __reduce_add_sync(m, v);
    out[8 * i + 1] = __reduce_min_sync(m, v);
    out[8 * i + 2] = __reduce_max_sync(m, v);
    out[8 * i + 3] = (unsigned)__reduce_min_sync(m, s);
    out[8 * i + 4] = (unsigned)__reduce_max_sync(m, s);
    out[8 * i + 5] = __reduce_and_sync(m, v);
    out[8 * i + 6] = __reduce_or_sync(m, v);
    out[8 * i + 7] = __reduce_xor_sync(m, v);
}

// Only the lanes whose input is even take part; the mask names exactly them.
extern "C" __global__ void reduce_partial(const unsigned *in, unsigned *out)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned v = in[i];
    unsigned even = __ballot_sync(0xffffffffu, (v & 1) == 0);
    unsigned r = 0;
    if ((v & 1) == 0)
        r = __reduce_add_sync(even, v) ^ __reduce_max_sync(even, v);
    out[i] = r;
}

// Block sum: a warp reduction per warp, then one atomic per warp.
extern "C" __global__ void block_sum(const unsigned *in, unsigned *out, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned v = i < n ? in[i] : 0;
    unsigned s = __reduce_add_sync(0xffffffffu, v);
    if ((threadIdx.x & 31) == 0)
        atomicAdd(out, s);
}
