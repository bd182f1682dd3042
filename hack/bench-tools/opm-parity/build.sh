#!/usr/bin/env bash
# Builds the reference catalog validator (operator-registry's `opm validate` without the rest of
# opm: no sqlite, no CGO, no containers/image), when it is missing or main.go/its go.mod are newer:
#   build.sh        operator-registry v1.47.0 (go.mod, as hack/bench-tools/opm) → .cache/bench-bin/opm-parity
#   build.sh main   operator-registry's main (go.main.mod) → .cache/bench-bin/opm-parity-main
# Low priority, one package at a time: the machine is shared. Cold build (empty GOCACHE, modules
# downloaded): see test/corpus/catalog-validator-parity.test.ts.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
modfile=go.mod
out="$root/.cache/bench-bin/opm-parity"
if [ "${1:-}" = main ]; then
  modfile=go.main.mod
  out="$root/.cache/bench-bin/opm-parity-main"
fi
mkdir -p "$(dirname "$out")"
cd "$here"
if [ ! -x "$out" ] || [ main.go -nt "$out" ] || [ "$modfile" -nt "$out" ]; then
  CGO_ENABLED=0 nice -n 19 go build -modfile="$modfile" -p 1 -trimpath -o "$out" .
fi
echo "$out"
