// nvrtc-arch: compute_75
// A 16x16x16 tile with nvcuda::wmma (f16 inputs, f32 accumulator): load A (row major) and B
// (column major) from global memory, multiply-accumulate onto C, store D. One tile per warp.
#include <mma.h>
using namespace nvcuda;
extern "C" __global__ void wmma_tile(const __half *a, const __half *b, const float *c, float *d)
{
    unsigned gw = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::load_matrix_sync(fa, a + 256 * gw, 16);
    wmma::load_matrix_sync(fb, b + 256 * gw, 16);
    wmma::load_matrix_sync(acc, c + 256 * gw, 16, wmma::mem_row_major);
    wmma::mma_sync(acc, fa, fb, acc);
    wmma::store_matrix_sync(d + 256 * gw, acc, 16, wmma::mem_row_major);
}
