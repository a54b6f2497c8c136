#!/usr/bin/env bash
# The whole test suite, as the README gives it: installs the NVIDIA oracle and nvcc 11.8 when it
# can (tests that need them print a notice and skip when they cannot be had), then runs every test
# of the workspace.
set -euo pipefail
cd "$(dirname "$0")/.."
oracle_bin=${LEAFOLD_ORACLE:-$HOME/.cache/leafold/oracle/bin}
if scripts/install-oracle.sh "$(dirname "$oracle_bin")"; then
    export LEAFOLD_ORACLE="$oracle_bin"
else
    echo "NOTICE: the NVIDIA oracle could not be installed; oracle tests will be skipped" >&2
fi
nvcc_home=${LEAFOLD_NVCC:-$HOME/.cache/leafold/nvcc118}
if scripts/install-nvcc.sh "$nvcc_home"; then
    export LEAFOLD_NVCC="$nvcc_home"
else
    # CI (LEAFOLD_REQUIRE_ORACLE=1) then fails in tests/nvcc_flow.rs rather than skipping.
    echo "NOTICE: nvcc 11.8 could not be installed; the nvcc flow tests will be skipped" >&2
fi
cargo test --workspace --all-targets --locked
