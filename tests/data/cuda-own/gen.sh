#!/usr/bin/env bash
# Regenerate the PTX of tests/data/cuda-own from the CUDA sources in src/ (written for leafold's
# tests, under the project's licence) with the two compilers users feed leafold from:
#   nvcc/   NVIDIA nvcc 11.8 (NVVM), exactly as corpus-nvcc's files were made:
#           nvcc -ptx -arch=compute_50 -O3   (installed as shared/docs/oracle.md describes)
#   clang/  LLVM's NVPTX back end (Debian's clang-14), CUDA headers from that nvcc install:
#           clang --cuda-device-only --cuda-gpu-arch=sm_50 -O3 -S
# A source whose first line says `// nvcc-arch: compute_53` is compiled for sm_53 by both
# (half-precision arithmetic needs __CUDA_ARCH__ >= 530; alloca needs sm_52). A source whose
# second line starts `// clang: none` has no clang/ version (clang-14 cannot compile it).
#   NVCC=/opt/cuda118/bin/nvcc CLANG=clang-14 tests/data/cuda-own/gen.sh
set -euo pipefail
cd "$(dirname "$0")"
nvcc=${NVCC:-nvcc}
clang=${CLANG:-clang}
cuda=$(dirname "$(dirname "$(command -v "$nvcc")")")
mkdir -p nvcc clang
for f in src/*.cu; do
    b=$(basename "$f" .cu)
    arch=$(sed -n '1s/^\/\/ nvcc-arch: compute_\(5[0-9]\).*/\1/p' "$f")
    arch=${arch:-50}
    "$nvcc" -ptx -arch="compute_$arch" -O3 "$f" -o "nvcc/$b.ptx"
    if sed -n '2p' "$f" | grep -q '^// clang: none'; then
        continue
    fi
    "$clang" --cuda-path="$cuda" --cuda-device-only --cuda-gpu-arch="sm_$arch" -O3 \
        -Wno-unknown-cuda-version -S "$f" -o "clang/$b.ptx"
done
