// Bit-field helpers of newer toolkits: __fns and mask-building idioms (bmsk/szext appear in
// PTX for sm_70+ when NVRTC recognises them).
extern "C" __global__ void bits(const unsigned *in, unsigned *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned a = in[i], b = in[(i + 1) & 127];
    out[8 * i + 0] = __fns(a, b & 31, (int)(b >> 8) % 5);
    out[8 * i + 1] = (b & 31) == 0 ? 0u : (0xffffffffu >> (32 - (b & 31)));
    int n = (b >> 5) & 31;
    out[8 * i + 2] = (unsigned)(((int)a << (32 - n)) >> (32 - n));
}
