#!/usr/bin/env bash
# `npm run bench`: every benchmark in bench/, each printing its ratios against the reference it
# measures in the same run and storing its result in bench/results/<bench>/ (bench/lib/results.ts).
# On demand only (never part of the tests). Builds what they need. The README's tables come from
# the stored results: `npx tsx hack/bench-readme.ts` afterwards.
#
# usage: hack/bench.sh [NAME...] [-- FLAG...]   (default: every bench/*.ts; NAME is a file name without
# .ts; words starting with - and everything after are passed to each bench, e.g. `helm --rounds 3`)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
source hack/lib.sh
ensure_cluster_tools  # benches measure the Node Binnacle ships on (BINNACLE_NODE=system measures the machine's), against the same control plane
echo "node $(node --version) ($(command -v node))"
# GNU time for the peak memory of the references' runs (without it bench/catalog.ts falls back to the children's high-water RSS).
command -v /usr/bin/time >/dev/null 2>&1 || (apt_install time) || true
names=(); flags=()
while [ $# -gt 0 ]; do
  case "$1" in
    --) shift; flags+=("$@"); break ;;
    -*) flags+=("$@"); break ;;
    *) names+=("$1"); shift ;;
  esac
done
if [ ${#names[@]} -eq 0 ]; then mapfile -t names < <(cd bench && ls *.ts | sed 's/\.ts$//' | sort); fi
for n in "${names[@]}"; do
  step "bench/$n.ts"
  npx tsx "bench/$n.ts" ${flags[@]+"${flags[@]}"}
done
step "results stored in bench/results/; README.md's tables: npx tsx hack/bench-readme.ts"
npx tsx hack/bench-readme.ts --check || true
