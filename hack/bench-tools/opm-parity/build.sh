#!/usr/bin/env bash
# Builds the reference catalog validator (operator-registry v1.47.0's `opm validate` without the
# rest of opm: no sqlite, no CGO, no containers/image) into .cache/bench-bin/opm-parity, when it is
# missing or main.go/go.mod are newer than it. Low priority, one package at a time: the machine is
# shared. Cold build (empty GOCACHE, modules downloaded): see test/corpus/catalog-validator-parity.test.ts.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
out="$root/.cache/bench-bin/opm-parity"
mkdir -p "$(dirname "$out")"
cd "$here"
if [ ! -x "$out" ] || [ main.go -nt "$out" ] || [ go.mod -nt "$out" ]; then
  CGO_ENABLED=0 nice -n 19 go build -p 1 -trimpath -o "$out" .
fi
echo "$out"
