#!/usr/bin/env bash
# The test command (`npm test`, called by .ci/run): installs what is missing, type-checks,
# lints, brings up a local control plane for the end-to-end tests, runs every test with node's
# test runner, and takes the control plane down again. Works on a fresh clone.
#
# usage: hack/test.sh [TEST_FILE...]   (default: every *.test.ts under src/ and test/)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
export BINNACLE_FROM_SOURCE=1  # tests run the sources, never a stale dist/
source hack/lib.sh

ensure_node_modules
ensure_apt_packages
if [ "${BINNACLE_SKIP_CHECKS:-}" != 1 ]; then  # a developer's shortcut; CI always checks
  step "type-check"; npx tsc --noEmit -p .
  step "lint"; npx eslint .
fi

step "build control-plane tools (cached in .cache/bin)"
bash hack/build-tools.sh

step "start the e2e control plane"
export BINNACLE_E2E_CLUSTER=${BINNACLE_E2E_CLUSTER:-e2e}  # helpers working side by side each name their own
clusters=("$BINNACLE_E2E_CLUSTER")
trap 'for c in "${clusters[@]}"; do node bin/binnacle.js cluster down --name "$c" >/dev/null 2>&1 || true; done' EXIT
registry_of() { node bin/binnacle.js cluster up --name "$1" -o json 2>/dev/null | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).registry))'; }
node bin/binnacle.js cluster up --name "$BINNACLE_E2E_CLUSTER"
export BINNACLE_E2E_KUBECONFIG="$root/.cache/clusters/$BINNACLE_E2E_CLUSTER/kubeconfig"
export BINNACLE_E2E_REGISTRY=$(registry_of "$BINNACLE_E2E_CLUSTER")
export PATH="$root/.cache/bin:$PATH"

# The slow corpus-wide tests (test/corpus) run beside the rest, in a second test process, and
# print their tables; the summary adds both.
if [ $# -gt 0 ]; then
  files=("$@"); corpus=()
else
  mapfile -t files < <(find src test -name '*.test.ts' -not -path '*/node_modules/*' -not -path 'test/corpus/*' | sort)
  mapfile -t corpus < <(find test/corpus -name '*.test.ts' | sort)
fi
mkdir -p .cache
# Unit tests (src/) need no cluster and run side by side. The end-to-end tests each run a
# manager against the one control plane, and two managers would reconcile each other's objects:
# they run one file at a time, on a machine of any size.
units=(); e2es=()
for f in "${files[@]}"; do case "$f" in src/*|./src/*) units+=("$f") ;; *) e2es+=("$f") ;; esac; done
tap=".cache/test-results-$BINNACLE_E2E_CLUSTER.tap"  # one per cluster: side-by-side runs do not mix their counts
unit_tap=".cache/test-results-$BINNACLE_E2E_CLUSTER-unit.tap"
corpus_tap=".cache/test-results-$BINNACLE_E2E_CLUSTER-corpus.tap"
lane2_tap=".cache/test-results-$BINNACLE_E2E_CLUSTER-2.tap"
rm -f "$tap" "$unit_tap" "$corpus_tap" "$lane2_tap" "${tap%.tap}.times" "${unit_tap%.tap}.times" "${corpus_tap%.tap}.times" "${lane2_tap%.tap}.times"
run_tests() {  # run_tests TAP CONCURRENCY FILE...   (CONCURRENCY "" = node's default); times go beside the TAP
  local out=$1 concurrency=$2; shift 2
  node --import tsx --test ${concurrency:+--test-concurrency=$concurrency} --test-reporter=spec --test-reporter-destination=stdout \
    --test-reporter=tap --test-reporter-destination="$out" \
    --test-reporter=./hack/file-timings-reporter.mjs --test-reporter-destination="${out%.tap}.times" "$@"
}
set +e
corpus_pid=""
if [ ${#corpus[@]} -gt 0 ]; then
  # A control plane of their own: e2e tests each run a manager, and two managers on one
  # cluster would reconcile each other's objects.
  corpus_cluster="$BINNACLE_E2E_CLUSTER-corpus"
  clusters+=("$corpus_cluster")
  step "start the corpus tests' control plane"
  node bin/binnacle.js cluster up --name "$corpus_cluster"
  step "run ${#corpus[@]} corpus test files in the background (their output follows the others')"
  BINNACLE_E2E_CLUSTER="$corpus_cluster" BINNACLE_E2E_KUBECONFIG="$root/.cache/clusters/$corpus_cluster/kubeconfig" BINNACLE_E2E_REGISTRY=$(registry_of "$corpus_cluster") \
    run_tests "$corpus_tap" 1 "${corpus[@]}" > .cache/corpus-tests.log 2>&1 &
  corpus_pid=$!
fi
status=0
if [ ${#units[@]} -gt 0 ]; then
  step "run ${#units[@]} unit test files"
  run_tests "$unit_tap" "" "${units[@]}" || status=$?
fi
if [ ${#e2es[@]} -gt 0 ]; then
  # Two lanes, each with its own control plane (BINNACLE_E2E_LANES=1 for one): most of an e2e
  # file's time is waiting on the cluster, so a second lane nearly halves the wall time. Files
  # alternate between the lanes in name order; within a lane they run one at a time.
  lanes=${BINNACLE_E2E_LANES:-2}
  [ ${#e2es[@]} -ge 2 ] || lanes=1
  lane2=(); lane1=()
  for i in "${!e2es[@]}"; do if [ "$lanes" -gt 1 ] && [ $((i % 2)) -eq 1 ]; then lane2+=("${e2es[$i]}"); else lane1+=("${e2es[$i]}"); fi; done
  lane2_pid=""
  if [ ${#lane2[@]} -gt 0 ]; then
    lane2_cluster="$BINNACLE_E2E_CLUSTER-2"
    clusters+=("$lane2_cluster")
    step "start the second e2e lane's control plane"
    node bin/binnacle.js cluster up --name "$lane2_cluster"
    step "run ${#lane2[@]} end-to-end test files in the second lane (their output follows the first's)"
    BINNACLE_E2E_CLUSTER="$lane2_cluster" BINNACLE_E2E_KUBECONFIG="$root/.cache/clusters/$lane2_cluster/kubeconfig" BINNACLE_E2E_REGISTRY=$(registry_of "$lane2_cluster") \
      run_tests "$lane2_tap" 1 "${lane2[@]}" > ".cache/e2e-lane2-tests-$BINNACLE_E2E_CLUSTER.log" 2>&1 &
    lane2_pid=$!
  fi
  step "run ${#lane1[@]} end-to-end test files, one at a time"
  run_tests "$tap" 1 "${lane1[@]}" || status=$?
  if [ -n "$lane2_pid" ]; then
    wait "$lane2_pid"; lane2_status=$?
    step "end-to-end tests of the second lane"
    cat ".cache/e2e-lane2-tests-$BINNACLE_E2E_CLUSTER.log"
    [ $lane2_status -eq 0 ] || status=$lane2_status
  fi
fi
if [ -n "$corpus_pid" ]; then
  wait "$corpus_pid"; corpus_status=$?
  step "corpus tests"
  cat .cache/corpus-tests.log
  [ $corpus_status -eq 0 ] || status=$corpus_status
fi
set -e
count() { awk -v k="$1" '$1=="#" && $2==k {n=$3} END {print n+0}' "${@:2}" /dev/null; }
pass=0; fail=0
for t in "$unit_tap" "$tap" "$lane2_tap" "$corpus_tap"; do
  [ -f "$t" ] || continue
  pass=$((pass + $(count pass "$t"))); fail=$((fail + $(count fail "$t")))
done
echo
if [ "$fail" -gt 0 ]; then
  step "failed tests"
  node hack/tap-failures.mjs "$unit_tap" "$tap" "$lane2_tap" "$corpus_tap"
fi
step "the ten slowest test files (seconds)"
# A run of chosen files has no unit or corpus times: cat's complaint must not end the script.
{ cat "${unit_tap%.tap}.times" "${tap%.tap}.times" "${lane2_tap%.tap}.times" "${corpus_tap%.tap}.times" 2>/dev/null | sort -rn | head -10; } || true
echo "the test command took $((SECONDS / 60)) min $((SECONDS % 60)) s"
echo "${pass} passed, ${fail} failed"
exit $status
