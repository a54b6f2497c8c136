// Separate compilation with literals (tests/nvcc_flow.rs): a device function with an f64
// literal in its own `.nv.constant2`, which nvlink appends to the calling kernel's bank 2.
__device__ double scale_f64(double x)
{
    return x * 1.0000000001 + 0.25;
}
