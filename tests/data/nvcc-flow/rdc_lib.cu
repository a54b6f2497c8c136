// The other half of the separate-compilation test (see rdc_main.cu).
extern __device__ int offset_main(int x);
__device__ int scale_lib(int x) { return 3 * offset_main(x); }
