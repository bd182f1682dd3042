#!/usr/bin/env bash
# Builds cosign from the Go module proxy into .cache/bench-bin/cosign, only when it is missing.
# Used to check that signatures made by `binnacle sign` verify with `cosign verify --key`
# (test/e2e/signed-content.test.ts, hack/cosign-agrees.sh). Low priority and one package at a
# time: the machine is shared.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
out="$root/.cache/bench-bin/cosign"
[ -x "$out" ] && { echo "$out"; exit 0; }
mkdir -p "$(dirname "$out")"
cd "$here"
CGO_ENABLED=0 nice -n 19 go build -p 1 -trimpath -o "$out" github.com/sigstore/cosign/v2/cmd/cosign
echo "$out"
