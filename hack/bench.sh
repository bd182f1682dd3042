#!/usr/bin/env bash
# `npm run bench`: every benchmark in bench/, each printing its ratios against the reference it
# measures in the same run. On demand only (never part of the tests). Builds what they need.
#
# usage: hack/bench.sh [NAME...]   (default: every bench/*.ts; NAME is a file name without .ts)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
source hack/lib.sh
ensure_node_modules
ensure_apt_packages
command -v /usr/bin/time >/dev/null 2>&1 || { export DEBIAN_FRONTEND=noninteractive; apt-get install -y --no-install-recommends time >/dev/null 2>&1 || true; }
bash hack/build-tools.sh
export PATH="$root/.cache/bin:$PATH"
if [ $# -gt 0 ]; then names=("$@"); else mapfile -t names < <(cd bench && ls *.ts | sed 's/\.ts$//' | sort); fi
for n in "${names[@]}"; do
  step "bench/$n.ts"
  npx tsx "bench/$n.ts"
done
