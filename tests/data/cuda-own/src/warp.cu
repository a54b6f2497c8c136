// Warp-synchronous intrinsics as CUDA 9+ code uses them.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void warp_reduce(const int *in, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = i < n ? in[i] : 0;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  if ((threadIdx.x & 31) == 0) out[i >> 5] = v;
}

__global__ void warp_scan(const float *in, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = in[i];
  int lane = threadIdx.x & 31;
  for (int o = 1; o < 32; o <<= 1) {
    float t = __shfl_up_sync(0xffffffffu, v, o);
    if (lane >= o) v += t;
  }
  out[i] = v + __shfl_xor_sync(0xffffffffu, v, 3) + __shfl_sync(0xffffffffu, v, 7, 16);
}

__global__ void votes(const int *in, unsigned *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int x = in[i];
  unsigned act = __activemask();
  if (x & 1) {
    unsigned m = __activemask();
    unsigned b = __ballot_sync(m, x > 100);
    int all = __all_sync(m, x != 0);
    int any = __any_sync(m, x < 0);
    __syncwarp(m);
    out[i] = b ^ (all << 1) ^ (any << 2) ^ m;
  } else {
    out[i] = act + __popc(__ballot_sync(act, x > 5));
  }
}

__global__ void tiles(const int *in, int *out) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<16> t16 = cg::tiled_partition<16>(block);
  int i = block.thread_rank();
  int base = blockIdx.x * block.size();
  int v = in[base + i];
  for (int o = t16.size() / 2; o > 0; o /= 2) v += t16.shfl_down(v, o);
  cg::coalesced_group g = cg::coalesced_threads();
  if (v & 1) {
    cg::coalesced_group odd = cg::coalesced_threads();
    v += odd.thread_rank() + odd.size();
  }
  block.sync();
  out[base + i] = v + g.size() + t16.thread_rank() + (int)t16.any(v > 3);
}

__global__ void lanes(unsigned *out) {
  unsigned lt, ge;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(lt));
  asm("mov.u32 %0, %%lanemask_ge;" : "=r"(ge));
  unsigned w;
  asm("mov.u32 %0, WARP_SZ;" : "=r"(w));
  out[blockIdx.x * blockDim.x + threadIdx.x] = lt ^ (ge << 1) ^ w;
}
