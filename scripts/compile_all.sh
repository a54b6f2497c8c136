#!/usr/bin/env bash
# Compile every .ptx under tests/data and examples with a leafold binary, in every fold mode and
# for every Maxwell target, and keep each cubin and each file's diagnostics in OUTDIR. Two runs
# (before and after a change) compared with `diff -r` show whether the change altered any
# output: a refactoring must leave them byte-identical.
#
# Usage: scripts/compile_all.sh OUTDIR [LEAFOLD]     (LEAFOLD defaults to target/release/leafold)
#        diff -r OUTDIR_BEFORE OUTDIR_AFTER && echo identical
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/compile_all.sh OUTDIR [LEAFOLD]}
bin=${2:-target/release/leafold}
[ -x "$bin" ] || { echo "no leafold binary at $bin (cargo build --release)" >&2; exit 2; }
rm -rf "$out"
mkdir -p "$out"
mapfile -t files < <(find tests/data examples -name '*.ptx' | sort)
for arch in sm_50 sm_53; do
    for fold in none lea full full-per-address; do
        flags=(--arch "$arch")
        case $fold in
            full-per-address) flags+=(--fold full --plg-per-address) ;;
            *) flags+=(--fold "$fold") ;;
        esac
        dir="$out/$arch/$fold"
        for f in "${files[@]}"; do
            name=${f//\//__}
            mkdir -p "$dir"
            # Diagnostics are kept whatever the exit status: an error message is output too.
            if "$bin" compile "${flags[@]}" "$f" -o "$dir/$name.cubin" >"$dir/$name.log" 2>&1; then
                echo ok >>"$dir/$name.log"
            else
                echo "exit $?" >>"$dir/$name.log"
            fi
        done
    done
done
echo "$(find "$out" -name '*.cubin' | wc -l) cubins, $(find "$out" -name '*.log' | wc -l) logs in $out"
