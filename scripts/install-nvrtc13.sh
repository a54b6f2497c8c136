#!/usr/bin/env bash
# Install NVRTC 13 (with the CUDA headers and CCCL that CUDA C++ kernels include) from PyPI,
# without a GPU or a CUDA toolkit: used only to regenerate tests/data/nvrtc13 (the tests read
# the committed PTX and never need it). Installs into ${NVRTC13_DIR:-$HOME/.cache/leafold/nvrtc13}.
#   scripts/install-nvrtc13.sh && python3 tests/data/nvrtc13/gen.py
set -euo pipefail
dest=${NVRTC13_DIR:-$HOME/.cache/leafold/nvrtc13}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download -q --no-deps -d "$tmp" \
    nvidia-cuda-nvrtc==13.5.37 nvidia-cuda-runtime==13.5.37 nvidia-cuda-crt==13.5.37 \
    nvidia-cuda-cccl==13.3.5.0.6
mkdir -p "$dest"
# The wheels share the folder nvidia/cu13; unpack each on top of the others (pip --target
# would keep only the first).
for w in "$tmp"/*.whl; do
    python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$w" "$dest"
done
echo "NVRTC 13 in $dest/nvidia/cu13"
