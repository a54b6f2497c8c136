#!/usr/bin/env bash
# Install NVIDIA's nvcc 11.8 toolchain (the last that targets sm_50) as a self-contained tree,
# from Debian bookworm's non-free component, without installing the packages: `apt-get install
# nvidia-cuda-toolkit` fails here (libcuda1 needs nvidia-support from contrib), so the eight
# .deb files are downloaded and unpacked (../shared/docs/oracle.md, "nvcc 11.8"), plus the host
# compiler nvcc 11.8 accepts (g++-11) when it is missing. tests/nvcc_flow.rs uses the tree.
#
# Usage: scripts/install-nvcc.sh [DEST]    (DEST defaults to $HOME/.cache/leafold/nvcc118)
# Afterwards point the tests at it:  export LEAFOLD_NVCC=DEST
# An existing tree is reused (CI caches DEST like the oracle's directory).
#
# NVIDIA's license applies to these binaries: they are fetched at set-up time, never committed.
set -euo pipefail

dest=${1:-${LEAFOLD_NVCC:-$HOME/.cache/leafold/nvcc118}}
sudo=""
if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi

if ! command -v g++-11 >/dev/null 2>&1; then
    $sudo apt-get update -qq >/dev/null
    $sudo apt-get install -y -qq --no-install-recommends g++-11 >/dev/null
fi

if [ -x "$dest/bin/nvcc" ] && [ -x "$dest/bin/nvlink" ] && [ -f "$dest/lib64/libcudadevrt.a" ] \
    && [ -f "$dest/bin/nvcc.profile" ]; then
    echo "nvcc already installed in $dest"
    exit 0
fi

# shellcheck source=scripts/nonfree-apt.sh
. "$(dirname "$0")/nonfree-apt.sh"
nonfree_apt_setup

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
nonfree_unpack "$work/root" nvidia-cuda-toolkit nvidia-cuda-dev libcudart11.0 libnvvm4 libcub-dev \
    libthrust-dev libcu++-dev nvidia-cuda-toolkit-gcc
r="$work/root"

# Build the tree next to DEST and move it in place at the end, so that an interrupted install
# never leaves a tree that looks complete.
tmp="$dest.partial"
rm -rf "$tmp"
mkdir -p "$tmp/bin" "$tmp/lib64" "$tmp/nvvm"
for t in cicc crt g++ gcc nvcc; do
    cp -a "$r/usr/lib/nvidia-cuda-toolkit/bin/$t" "$tmp/bin/"
done
for t in bin2c cu++filt cudafe++ cuobjdump fatbinary nvdisasm nvlink nvprune ptxas; do
    cp -a "$r/usr/bin/$t" "$tmp/bin/"
done
cp -a "$r/usr/include" "$tmp/include"
cp -a "$r"/usr/lib/x86_64-linux-gnu/libcudadevrt.a "$r"/usr/lib/x86_64-linux-gnu/libcudart* \
    "$r"/usr/lib/x86_64-linux-gnu/libculibos.a "$tmp/lib64/"
cp -a "$r"/usr/lib/x86_64-linux-gnu/libnvvm.so* "$tmp/nvvm/"
cp -aL "$r/usr/lib/nvidia-cuda-toolkit/libdevice" "$tmp/nvvm/libdevice"
cat > "$tmp/bin/nvcc.profile" <<'PROFILE'
TOP = $(_HERE_)/..
NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice
LD_LIBRARY_PATH += $(TOP)/lib64:$(TOP)/nvvm:
PATH += $(_HERE_):
INCLUDES += "-I$(TOP)/include" $(_SPACE_)
LIBRARIES =+ $(_SPACE_) "-L$(TOP)/lib64"
PROFILE
rm -rf "$dest"
mv "$tmp" "$dest"
"$dest/bin/nvcc" --version | tail -n 2
echo "nvcc installed in $dest (export LEAFOLD_NVCC=$dest)"
