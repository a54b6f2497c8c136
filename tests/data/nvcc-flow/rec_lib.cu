// A recursive device function under separate compilation (tests/nvcc_flow.rs,
// `recursive_function_of_an_object`): this file has no kernel, so leafold's recursion
// check must start from the object's visible functions, not only from kernels. `fib` is
// file-local and recursive (twice, so that NVVM keeps a call); `fib_xor`, which other
// objects call, reaches it.
static __device__ __noinline__ unsigned fib(unsigned n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

// The loop makes leafold's code differ from ptxas's, so that the test can tell which
// compiler wrote this object.
__device__ unsigned fib_xor(unsigned n)
{
    unsigned s = fib(n & 15) ^ n;
    for (unsigned i = 0; i < (n & 7); ++i)
        s += n / (i + 1);
    return s;
}
