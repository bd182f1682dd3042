#!/usr/bin/env bash
# Builds operator-sdk's helm-operator (the reference for bench/helm-operator-memory.ts) from the Go
# module proxy into .cache/bench-bin/helm-operator, only when it is missing.
# Low priority and one package at a time: the machine is shared.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
out="$root/.cache/bench-bin/helm-operator"
[ -x "$out" ] && { echo "$out"; exit 0; }
mkdir -p "$(dirname "$out")"
cd "$here"
CGO_ENABLED=0 nice -n 19 go build -p 1 -trimpath -o "$out" github.com/operator-framework/operator-sdk/cmd/helm-operator
echo "$out"
