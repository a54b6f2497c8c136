// Atomics of every kind a CUDA program uses on sm_5x.
__global__ void atomics(int *ci, unsigned *cu, unsigned long long *cl, float *cf, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  atomicAdd(&ci[0], i);
  atomicSub(&ci[1], 1);
  atomicMax(&ci[2], i * 7 - 100);
  atomicMin(&ci[3], -i);
  atomicInc(&cu[0], 17u);
  atomicDec(&cu[1], 9u);
  atomicAnd(&cu[2], ~(1u << (i & 31)));
  atomicOr(&cu[3], 1u << (i & 31));
  atomicXor(&cu[4], (unsigned)i);
  atomicExch(&cu[5], (unsigned)i);
  atomicCAS(&cu[6], (unsigned)i, (unsigned)i + 1);
  atomicAdd(&cl[0], (unsigned long long)i);
  atomicMax(&cl[1], (unsigned long long)i << 40);
  atomicCAS(&cl[2], 5ull, (unsigned long long)i);
  atomicAdd(&cf[0], 0.5f * i);
}

__global__ void shared_hist(const unsigned char *in, unsigned *hist, int n) {
  __shared__ unsigned h[256];
  for (int k = threadIdx.x; k < 256; k += blockDim.x) h[k] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    atomicAdd(&h[in[i]], 1u);
  __syncthreads();
  for (int k = threadIdx.x; k < 256; k += blockDim.x) atomicAdd(&hist[k], h[k]);
}

__global__ void fences(volatile int *flag, int *data) {
  data[threadIdx.x] = threadIdx.x;
  __threadfence_block();
  __threadfence();
  __threadfence_system();
  if (threadIdx.x == 0) *flag = 1;
}
