#!/usr/bin/env bash
# Install NVIDIA's ptxas, nvdisasm and cuobjdump 11.8 (the last toolkit that targets sm_50)
# from Debian bookworm's non-free component, without installing the package's dependencies:
# the three binaries are statically linked, so downloading the .deb and unpacking it is enough.
#
# Usage: scripts/install-oracle.sh [DEST]     (DEST defaults to $HOME/.cache/leafold/oracle)
# Afterwards point the tests at it:  export LEAFOLD_ORACLE=DEST/bin
#
# NVIDIA's license applies to these binaries: they are fetched at set-up time, never committed.
set -euo pipefail

dest=${1:-${LEAFOLD_ORACLE_HOME:-$HOME/.cache/leafold/oracle}}
bin="$dest/bin"
if [ -x "$bin/ptxas" ] && [ -x "$bin/nvdisasm" ] && [ -x "$bin/cuobjdump" ]; then
    echo "oracle already installed in $bin"
    exit 0
fi

sudo=""
if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi

# shellcheck source=scripts/nonfree-apt.sh
. "$(dirname "$0")/nonfree-apt.sh"
nonfree_apt_setup

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
nonfree_unpack "$work/x" nvidia-cuda-toolkit
mkdir -p "$bin"
for t in ptxas nvdisasm cuobjdump; do
    install -m 0755 "$work/x/usr/bin/$t" "$bin/$t"
done
"$bin/ptxas" --version | tail -n 2
echo "oracle installed in $bin (export LEAFOLD_ORACLE=$bin)"
