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

# What ensure_cluster_tools does (hack/lib.sh), with the type-check and lint run beside the tool
# build: on a fresh machine that build is minutes of Go downloading modules and linking, which
# leave a core free, and the checks need none of the tools.
ensure_node_and_packages
echo "node $(node --version) ($(command -v node)), npm $(npm --version), go $(go env GOVERSION 2>/dev/null || echo none)"  # what ran the tests, in CI's log
checks_pid=""
if [ "${BINNACLE_SKIP_CHECKS:-}" != 1 ]; then  # a developer's shortcut; CI always checks
  mkdir -p .cache && rm -f .cache/type-check.rc .cache/lint.rc
  check() { local rc=0; "${@:2}" > ".cache/$1.log" 2>&1 || rc=$?; echo "$rc" > ".cache/$1.rc"; }
  { check type-check npx tsc --noEmit -p .; check lint npx eslint .; } &
  checks_pid=$!
  trap 'kill "$checks_pid" 2>/dev/null || true' EXIT  # a failed tool build leaves no checks running
fi
build_cluster_tools
if [ -n "$checks_pid" ]; then
  wait "$checks_pid" || true
  for check in type-check lint; do
    step "$check (run beside the tool build)"
    cat ".cache/$check.log"
    [ "$(cat ".cache/$check.rc" 2>/dev/null)" = 0 ] || { echo "binnacle: the $check failed" >&2; exit 1; }
  done
fi

step "start the e2e control plane"
export BINNACLE_E2E_CLUSTER=${BINNACLE_E2E_CLUSTER:-e2e}  # helpers working side by side each name their own
clusters=("$BINNACLE_E2E_CLUSTER")
# A failed run keeps what each control plane logged (API server, controller manager, scheduler,
# etcd, kwok, registry) in .cache/test-artifacts/cluster-NAME/, beside the managers' logs: a
# failure that does not happen again is read from them. A run that passes leaves none behind.
rm -rf .cache/test-artifacts/cluster-*
take_down_clusters() {
  local rc=$? c
  for c in "${clusters[@]}"; do
    if [ "$rc" -ne 0 ] && [ -d "$root/.cache/clusters/$c/logs" ]; then
      mkdir -p .cache/test-artifacts && cp -r "$root/.cache/clusters/$c/logs" ".cache/test-artifacts/cluster-$c" || true
    fi
    node bin/binnacle.js cluster down --name "$c" >/dev/null 2>&1 || true
  done
}
trap take_down_clusters EXIT
registry_of() { node bin/binnacle.js cluster up --name "$1" -o json 2>/dev/null | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).registry))'; }
node bin/binnacle.js cluster up --name "$BINNACLE_E2E_CLUSTER"
export BINNACLE_E2E_KUBECONFIG="$root/.cache/clusters/$BINNACLE_E2E_CLUSTER/kubeconfig"
export BINNACLE_E2E_REGISTRY=$(registry_of "$BINNACLE_E2E_CLUSTER")

if [ $# -gt 0 ]; then
  files=("$@")
else
  mapfile -t files < <(find src test -name '*.test.ts' -not -path '*/node_modules/*' | sort)
fi
# Unit tests (src/) need no cluster and run side by side in one process. The end-to-end and
# corpus tests (test/) each run a manager, and two managers on one control plane would
# reconcile each other's objects: they run one file at a time per control plane, in lanes.
units=(); e2es=()
for f in "${files[@]}"; do case "$f" in src/*|./src/*) units+=("$f") ;; *) e2es+=("$f") ;; esac; done
results=".cache/test-results/$BINNACLE_E2E_CLUSTER"  # one folder per cluster: side-by-side runs do not mix their counts
rm -rf "$results"; mkdir -p "$results"
run_tests() {  # run_tests TAP CONCURRENCY FILE...   (CONCURRENCY "" = node's default; "none" = every file in this one process); times go beside the TAP
  local out=$1 concurrency=$2 how; shift 2
  case "$concurrency" in
    "") how=() ;;
    none) how=(--test-isolation=none) ;;
    *) how=(--test-concurrency="$concurrency") ;;
  esac
  node --import tsx --test "${how[@]}" --test-reporter=spec --test-reporter-destination=stdout \
    --test-reporter=tap --test-reporter-destination="$out" \
    --test-reporter=./hack/file-timings-reporter.mjs --test-reporter-destination="${out%.tap}.times" "$@"
}

# The lanes share one queue of files and each takes the next when it is free, so a lane that drew
# short files does not sit idle while another works through long ones. The files known to be
# slowest go first (hack/e2e-slow-first.txt: only the order depends on it, so a stale list costs
# time, never a test); the rest follow in name order.
queue="$results/queue"
{
  if [ -f hack/e2e-slow-first.txt ]; then
    grep -v '^#' hack/e2e-slow-first.txt | while read -r slow; do
      for f in "${e2es[@]}"; do if [ "${f#./}" = "$slow" ]; then echo "$f"; fi; done
    done
  fi
  for f in "${e2es[@]}"; do if ! grep -qxF "${f#./}" hack/e2e-slow-first.txt 2>/dev/null; then echo "$f"; fi; done
} > "$queue"
next_file() {  # pops the queue's first line, under a lock the lanes share
  local f
  exec 9>"$queue.lock"; flock 9
  f=$(head -n1 "$queue"); [ -z "$f" ] || sed -i 1d "$queue"
  flock -u 9; exec 9>&-
  printf '%s' "$f"
}
# An earlier file's uninstall leaves its CRDs for the API server to delete, in its own time (its
# finalizer deletes their custom resources first and retries with a growing backoff; once over
# four minutes in CI). A file that installs the same package would wait on them and fail for what
# the earlier one left: each file starts once no CRD on its control plane is being deleted, or
# after five minutes with what still is named (and the file runs anyway: it may not need them).
# A CRD still there then is held (a custom resource's finalizer nobody will remove): the lane
# remembers it and does not wait for it again.
crds_being_deleted() {  # the names, one per line, but those in $stuck_crds
  kubectl --kubeconfig "$BINNACLE_E2E_KUBECONFIG" get customresourcedefinitions \
    -o jsonpath='{range .items[?(@.metadata.deletionTimestamp)]}{.metadata.name}{"\n"}{end}' 2>/dev/null \
    | grep -vxF -e '' ${stuck_crds:+$(printf -- ' -e %s' $stuck_crds)} || true
}
wait_crds_deleted() {
  local going waited=0
  going=$(crds_being_deleted)
  while [ -n "$going" ] && [ $waited -lt 300 ]; do sleep 2; waited=$((waited + 2)); going=$(crds_being_deleted); done
  if [ -n "$going" ]; then
    echo "# still being deleted after ${waited} s on $BINNACLE_E2E_CLUSTER (held; not waited for again):" $going
    stuck_crds="$stuck_crds $(echo $going)"
  elif [ $waited -gt 0 ]; then echo "# waited ${waited} s for the CRDs an earlier file deleted to go"; fi
}
run_lane() {  # run_lane CLUSTER N: files from the queue, one at a time, on CLUSTER's control plane
  local cluster=$1 lane=$2 n=0 f lane_status=0 stuck_crds=""
  export BINNACLE_E2E_CLUSTER="$cluster" BINNACLE_E2E_KUBECONFIG="$root/.cache/clusters/$cluster/kubeconfig"
  BINNACLE_E2E_REGISTRY=$(registry_of "$cluster"); export BINNACLE_E2E_REGISTRY
  while f=$(next_file) && [ -n "$f" ]; do
    n=$((n + 1))
    wait_crds_deleted
    run_tests "$results/lane$lane-$n.tap" 1 "$f" || lane_status=1
  done
  return $lane_status
}
lanes=${BINNACLE_E2E_LANES:-3}
[ "$lanes" -le ${#e2es[@]} ] || lanes=${#e2es[@]}
set +e
status=0
lane_pids=()
for ((k = 2; k <= lanes; k++)); do
  cluster="$BINNACLE_E2E_CLUSTER-$k"
  clusters+=("$cluster")
  step "start the control plane of e2e lane $k"
  node bin/binnacle.js cluster up --name "$cluster"
  step "e2e lane $k takes files from the queue in the background (its output follows lane 1's)"
  run_lane "$cluster" "$k" > "$results/lane$k.log" 2>&1 &
  lane_pids+=("$!")
done
if [ ${#units[@]} -gt 0 ]; then
  # In one process (no child per file): the 280 files' start-up (Node, tsx, their imports) was
  # half the unit run's CPU, which the e2e lanes running beside it need (a cold CI on two cores).
  # Files that read the process's own memory or may stop the process (they say so on a line
  # `// test process: its own`) run each in a process of their own, as before.
  mapfile -t own < <(grep -lx '// test process: its own.*' "${units[@]}" || true)
  shared=()
  for f in "${units[@]}"; do printf '%s\n' "${own[@]}" | grep -qxF "$f" || shared+=("$f"); done
  step "run ${#units[@]} unit test files (${#shared[@]} in one process, ${#own[@]} each in its own)"
  run_tests "$results/unit.tap" none "${shared[@]}" || status=$?
  [ ${#own[@]} -eq 0 ] || run_tests "$results/unit-own.tap" "" "${own[@]}" || status=$?
fi
if [ "$lanes" -ge 1 ]; then
  step "e2e lane 1 takes files from the queue (${#e2es[@]} end-to-end and corpus files in $lanes lanes)"
  run_lane "$BINNACLE_E2E_CLUSTER" 1 || status=1
fi
for ((k = 2; k <= lanes; k++)); do
  wait "${lane_pids[$((k - 2))]}" || status=1
  step "e2e lane $k"
  cat "$results/lane$k.log"
done
set -e
count() { awk -v k="$1" '$1=="#" && $2==k {n=$3} END {print n+0}' "$2"; }
pass=0; fail=0
taps=("$results"/*.tap)
unfinished=()
for t in "${taps[@]}"; do
  [ -f "$t" ] || continue
  pass=$((pass + $(count pass "$t"))); fail=$((fail + $(count fail "$t")))
  # A run whose process stopped before its tests did (process.exit, a crash) writes no summary:
  # counted as a failure, named below, never as nothing.
  grep -q '^# fail ' "$t" || { unfinished+=("$t"); fail=$((fail + 1)); status=1; }
done
echo
if [ "$fail" -gt 0 ]; then
  step "failed tests"
  node hack/tap-failures.mjs "${taps[@]}"
  for t in "${unfinished[@]}"; do echo "✖ $t: its test process stopped before the tests ended (no summary; the output above says where)"; done
fi
step "the ten slowest test files (seconds)"
# A run of chosen files may have no times: cat's complaint must not end the script.
{ cat "$results"/*.times 2>/dev/null | sort -rn | head -10; } || true
echo "the test command took $((SECONDS / 60)) min $((SECONDS % 60)) s"
[ "$status" -eq 0 ] || echo "the control planes' logs are kept in .cache/test-artifacts/cluster-*/, the managers' in .cache/test-artifacts/manager-*.log"
echo "${pass} passed, ${fail} failed"
exit $status
