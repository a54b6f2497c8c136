#!/usr/bin/env bash
# Regenerate tests/data/cuda-apps/nvcc from the CUDA sources in src/ (application-shaped kernels
# written for leafold, under the project's licence), exactly as corpus-nvcc's files were made:
#   nvcc -ptx -arch=compute_50 -O3      (nvcc 11.8, installed by scripts/install-nvcc.sh)
#   NVCC=$HOME/.cache/leafold/nvcc118/bin/nvcc tests/data/cuda-apps/gen.sh
set -euo pipefail
cd "$(dirname "$0")"
nvcc=${NVCC:-nvcc}
mkdir -p nvcc
for f in src/*.cu; do
    "$nvcc" -ptx -arch=compute_50 -O3 "$f" -o "nvcc/$(basename "$f" .cu).ptx"
done
