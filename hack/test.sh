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
# background_lane CLUSTER TAP LOG WHAT FILE...: a control plane of the lane's own (e2e tests each
# run a manager, and two managers on one cluster would reconcile each other's objects), then the
# files one at a time in the background; the lane's pid is left in $lane_pid.
background_lane() {
  local cluster=$1 out=$2 log=$3 what=$4; shift 4
  clusters+=("$cluster")
  step "start the control plane for the $what"
  node bin/binnacle.js cluster up --name "$cluster"
  step "run $# files of the $what in the background (their output follows the others')"
  BINNACLE_E2E_CLUSTER="$cluster" BINNACLE_E2E_KUBECONFIG="$root/.cache/clusters/$cluster/kubeconfig" BINNACLE_E2E_REGISTRY=$(registry_of "$cluster") \
    run_tests "$out" 1 "$@" > "$log" 2>&1 &
  lane_pid=$!
}
# finish_lane PID LOG WHAT: waits for a background lane, prints its output, keeps its failure.
finish_lane() {
  local lane_status
  wait "$1"; lane_status=$?
  step "$3"
  cat "$2"
  [ $lane_status -eq 0 ] || status=$lane_status
}
set +e
corpus_pid=""
corpus_log=".cache/corpus-tests-$BINNACLE_E2E_CLUSTER.log"
if [ ${#corpus[@]} -gt 0 ]; then
  background_lane "$BINNACLE_E2E_CLUSTER-corpus" "$corpus_tap" "$corpus_log" "corpus tests" "${corpus[@]}"
  corpus_pid=$lane_pid
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
  lane2_log=".cache/e2e-lane2-tests-$BINNACLE_E2E_CLUSTER.log"
  if [ ${#lane2[@]} -gt 0 ]; then
    background_lane "$BINNACLE_E2E_CLUSTER-2" "$lane2_tap" "$lane2_log" "second e2e lane" "${lane2[@]}"
    lane2_pid=$lane_pid
  fi
  step "run ${#lane1[@]} end-to-end test files, one at a time"
  run_tests "$tap" 1 "${lane1[@]}" || status=$?
  [ -z "$lane2_pid" ] || finish_lane "$lane2_pid" "$lane2_log" "end-to-end tests of the second lane"
fi
[ -z "$corpus_pid" ] || finish_lane "$corpus_pid" "$corpus_log" "corpus tests"
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
