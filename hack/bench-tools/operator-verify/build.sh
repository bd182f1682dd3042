#!/usr/bin/env bash
# Builds operator-verify (operator-framework/api v0.27.0) from the Go module proxy into
# .cache/bench-bin/operator-verify, only when it is missing. Low priority, one package at a time:
# the machine is shared.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
out="$root/.cache/bench-bin/operator-verify"
[ -x "$out" ] && { echo "$out"; exit 0; }
mkdir -p "$(dirname "$out")"
cd "$here"
CGO_ENABLED=0 nice -n 19 go build -p 1 -trimpath -o "$out" github.com/operator-framework/api/cmd/operator-verify
echo "$out"
