#!/usr/bin/env bash
# Builds opm from the Go module proxy into .cache/bench-bin/opm, only when it is missing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../../lib.sh"
CGO_ENABLED=1 build_bench_tool "$here" opm github.com/operator-framework/operator-registry/cmd/opm -tags json1,containers_image_openpgp
