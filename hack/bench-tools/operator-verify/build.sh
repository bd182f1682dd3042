#!/usr/bin/env bash
# Builds operator-verify (operator-framework/api v0.27.0) from the Go module proxy into
# .cache/bench-bin/operator-verify, and ./parity (the same validators over many directories, JSON
# out) into .cache/bench-bin/operator-verify-parity, each only when it is missing. Low priority,
# one package at a time: the machine is shared.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../../lib.sh"
out="$(build_bench_tool "$here" operator-verify github.com/operator-framework/api/cmd/operator-verify -trimpath)"
parity="$(dirname "$out")/operator-verify-parity"
cd "$here"
# Rebuilt when its source is newer than the binary.
if [ ! -x "$parity" ] || [ parity/main.go -nt "$parity" ]; then
  CGO_ENABLED=0 nice -n 19 go build -p 1 -trimpath -o "$parity" ./parity
fi
echo "$out"
