#!/usr/bin/env bash
# One whole hardware check of ir::eval, as run on the lent GPU machine: six replays in
# parallel (three runs of TEX generated texture kernels from seed TEXSEED on; two runs of GEN
# generated ptxgen kernels from GENSEED on; every kernel of tests/data and examples), each
# bounded by LIMIT seconds, then everything small packed into OUT/hw.tgz (reports, summaries,
# the results of mismatching texture cases).
# Usage: scripts/hwcheck_run.sh EXPORTER OUT [LIMIT] [TEX] [GEN] [GENSEED] [TEXSEED]
set -uo pipefail
exe=$1; out=$2; limit=${3:-300}; ntex=${4:-3000}; ngen=${5:-2000}; gseed=${6:-20000}; tseed=${7:-0}
here=$(dirname "$0")
work=/tmp/hw
mkdir -p "$work" "$out"
nvidia-smi -L 2>&1 | head -2
run() { # NAME ARGS...
    local name=$1; shift
    CASES=/tmp/cases_$name timeout "$limit" "$here/hwcheck.sh" "$exe" "$work/$name" "$@" \
        > "$work/$name.log" 2>&1
    echo "$name: exit $? $(tail -1 "$work/$name.log")"
}
run tex1 --tex "$ntex" --seed "$tseed" &
run tex2 --tex "$ntex" --seed $((tseed + ntex)) &
run tex3 --tex "$ntex" --seed $((tseed + 2 * ntex)) &
run gen1 --gen "$ngen" --seed "$gseed" &
run gen2 --gen "$ngen" --seed $((gseed + ngen)) &
run corpora tests/data examples &
wait
for d in "$work"/*/; do
    n=$(basename "$d")
    [ -f "$d/report.txt" ] || continue
    awk '{print $3}' "$d/report.txt" | sort | uniq -c > "$d/summary.txt"
    echo "== $n: $(wc -l < "$d/report.txt") launches"; cat "$d/summary.txt"
done
tar czf "$out/hw.tgz" -C "$work" . 2>&1 | tail -2
ls -la "$out"
