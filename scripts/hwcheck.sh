#!/usr/bin/env bash
# The hardware check of ir::eval on a machine with an NVIDIA GPU (any architecture: the driver
# compiles the PTX): export kernels, launches and ir::eval's results, replay them on the GPU,
# summarise. Usage: scripts/hwcheck.sh EXPORTER OUTDIR [exporter args...]
#   EXPORTER: a built examples/hwcheck_export binary; OUTDIR gets report.txt and summary.txt,
#   the exported cases go to $CASES (default OUTDIR/cases; hundreds of MB).
set -uo pipefail
exporter=$1; out=$2; shift 2
cases=${CASES:-$out/cases}
mkdir -p "$out" "$cases" "$out/got"
# Texture cases' results come back for study (scripts/hwcheck.py, GOTDIR).
export GOTDIR="$out/got"
"$exporter" "$cases" "$@" 2>&1 | tail -1
cp "$cases/cases.txt" "$cases/skipped.txt" "$out/"
: > "$out/report.txt"
next=0
while :; do
    r=$(python3 "$(dirname "$0")/hwcheck.py" "$cases" "$out/report.txt" "$next")
    rc=$?
    echo "$r" | tail -1
    [ $rc -eq 3 ] || break
    next=$(echo "$r" | sed -n 's/^next //p')
done
awk '{print $3}' "$out/report.txt" | sort | uniq -c > "$out/summary.txt"
cat "$out/summary.txt"
