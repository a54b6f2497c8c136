# Shared by install-oracle.sh and install-nvcc.sh (sourced, not run): Debian bookworm's
# non-free component as an extra apt source, and downloading and unpacking packages from it
# without installing them (NVIDIA's toolkit packages cannot be installed here: libcuda1 needs
# nvidia-support from contrib; the binaries are unpacked instead).
#
# After sourcing: `nonfree_apt_setup` adds the source (reusing the mirror and keyring of the
# system's own Debian source) and refreshes its index only; `nonfree_unpack DIR PKG...`
# downloads the packages into a fresh temporary directory and unpacks every one into DIR.
# Both use $sudo (empty when running as root), which the caller sets.

nonfree_apt_src=/etc/apt/sources.list.d/leafold-nonfree.sources

nonfree_apt_setup() {
    if [ ! -f "$nonfree_apt_src" ]; then
        local uri key
        uri=$(grep -hoE '^URIs:[[:space:]]*\S+' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1 | awk '{print $2}')
        uri=${uri:-http://deb.debian.org/debian}
        key=$(grep -hoE '^Signed-By:[[:space:]]*\S+' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1 | awk '{print $2}')
        key=${key:-/usr/share/keyrings/debian-archive-keyring.gpg}
        printf 'Types: deb\nURIs: %s\nSuites: bookworm\nComponents: non-free\nSigned-By: %s\n' "$uri" "$key" \
            | $sudo tee "$nonfree_apt_src" >/dev/null
    fi
    $sudo apt-get update -qq -o Dir::Etc::sourcelist="$nonfree_apt_src" -o Dir::Etc::sourceparts=- \
        -o APT::Get::List-Cleanup=0 >/dev/null
}

nonfree_unpack() {
    local into=$1 dl deb
    shift
    dl=$(mktemp -d)
    chmod 755 "$dl"
    (cd "$dl" && apt-get download -qq "$@" >/dev/null)
    for deb in "$dl"/*.deb; do
        dpkg -x "$deb" "$into"
    done
    rm -rf "$dl"
}
