#!/usr/bin/env bash
# Builds operator-sdk's helm-operator (the reference for bench/helm-operator-memory.ts) from the Go
# module proxy into .cache/bench-bin/helm-operator, only when it is missing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../../lib.sh"
build_bench_tool "$here" helm-operator github.com/operator-framework/operator-sdk/cmd/helm-operator -trimpath
