//! Cubin (CUDA ELF) reading and writing. (Being built; issue 3.)
