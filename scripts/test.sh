#!/usr/bin/env bash
# The whole test suite, as the README gives it: installs the NVIDIA oracle when it can (tests that
# need it print a notice and skip when it cannot be had), then runs every test of the workspace.
set -euo pipefail
cd "$(dirname "$0")/.."
oracle_bin=${LEAFOLD_ORACLE:-$HOME/.cache/leafold/oracle/bin}
if scripts/install-oracle.sh "$(dirname "$oracle_bin")"; then
    export LEAFOLD_ORACLE="$oracle_bin"
else
    echo "NOTICE: the NVIDIA oracle could not be installed; oracle tests will be skipped" >&2
fi
cargo test --workspace --all-targets --locked
