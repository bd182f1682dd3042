#!/usr/bin/env bash
# Builds cosign from the Go module proxy into .cache/bench-bin/cosign, only when it is missing.
# Used to check that signatures made by `binnacle sign` verify with `cosign verify --key`
# (test/e2e/signed-content.test.ts, hack/cosign-agrees.sh).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../../lib.sh"
build_bench_tool "$here" cosign github.com/sigstore/cosign/v2/cmd/cosign -trimpath
