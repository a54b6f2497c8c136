// Integer dot products as quantised inference writes them: __dp4a/__dp2a in every signedness.
extern "C" __global__ void dot_products(const int *in, int *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int a = in[i], b = in[(i + 7) & 127], c = in[(i + 13) & 127];
    out[8 * i + 0] = __dp4a(a, b, c);
    out[8 * i + 1] = (int)__dp4a((unsigned)a, (unsigned)b, (unsigned)c);
    out[8 * i + 2] = __dp2a_lo(a, b, c);
    out[8 * i + 3] = __dp2a_hi(a, b, c);
    out[8 * i + 4] = (int)__dp2a_lo((unsigned)a, (unsigned)b, (unsigned)c);
    out[8 * i + 5] = (int)__dp2a_hi((unsigned)a, (unsigned)b, (unsigned)c);
    char4 x = *reinterpret_cast<char4 *>(&a);
    uchar4 y = *reinterpret_cast<uchar4 *>(&b);
    out[8 * i + 6] = __dp4a(x, *reinterpret_cast<char4 *>(&y), c);
    out[8 * i + 7] = __dp4a(a, b, 0);
}
