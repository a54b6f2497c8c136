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

src=/etc/apt/sources.list.d/leafold-nonfree.sources
if [ ! -f "$src" ]; then
    # Reuse the mirror and keyring of the system's own Debian source.
    uri=$(grep -hoE '^URIs:[[:space:]]*\S+' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1 | awk '{print $2}')
    uri=${uri:-http://deb.debian.org/debian}
    key=$(grep -hoE '^Signed-By:[[:space:]]*\S+' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1 | awk '{print $2}')
    key=${key:-/usr/share/keyrings/debian-archive-keyring.gpg}
    printf 'Types: deb\nURIs: %s\nSuites: bookworm\nComponents: non-free\nSigned-By: %s\n' "$uri" "$key" \
        | $sudo tee "$src" >/dev/null
fi
$sudo apt-get update -qq -o Dir::Etc::sourcelist="$src" -o Dir::Etc::sourceparts=- \
    -o APT::Get::List-Cleanup=0 >/dev/null

work=$(mktemp -d)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get download -qq nvidia-cuda-toolkit >/dev/null)
deb=$(ls "$work"/nvidia-cuda-toolkit_*.deb)
dpkg -x "$deb" "$work/x"
mkdir -p "$bin"
for t in ptxas nvdisasm cuobjdump; do
    install -m 0755 "$work/x/usr/bin/$t" "$bin/$t"
done
"$bin/ptxas" --version | tail -n 2
echo "oracle installed in $bin (export LEAFOLD_ORACLE=$bin)"
