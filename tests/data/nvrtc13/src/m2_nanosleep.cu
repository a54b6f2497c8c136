// A spin lock with exponential back-off through __nanosleep, as the programming guide shows it.
__device__ int lock_word;

extern "C" __global__ void backoff_lock(const int *in, int *out)
{
    int *lock = &lock_word;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x == 0) {
        unsigned ns = 8;
        while (atomicCAS(lock, 0, 1) != 0) {
            __nanosleep(ns);
            if (ns < 256)
                ns *= 2;
        }
        out[blockIdx.x] += in[i];
        __threadfence();
        atomicExch(lock, 0);
    }
    __nanosleep(in[i] & 63);
}
