// The other half of the separate-compilation test (see rdc_main.cu).
extern __device__ int offset_main(int x);
// The division loop makes leafold's code differ from ptxas's, so that the test can tell
// which compiler wrote this object: `3 * offset_main(x)` alone is `JCAL ; XMAD ; XMAD.PSL ;
// RET` from both since subroutines prefer caller-saved registers.
__device__ int scale_lib(int x)
{
    int s = 3 * offset_main(x);
    for (int i = 0; i < (x & 7); ++i)
        s += x / (i + 1);
    return s;
}
