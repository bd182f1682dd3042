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
trap 'node bin/binnacle.js cluster down --name "$BINNACLE_E2E_CLUSTER" >/dev/null 2>&1 || true' EXIT
node bin/binnacle.js cluster up --name "$BINNACLE_E2E_CLUSTER"
export BINNACLE_E2E_KUBECONFIG="$root/.cache/clusters/$BINNACLE_E2E_CLUSTER/kubeconfig"
export BINNACLE_E2E_REGISTRY=$(node bin/binnacle.js cluster up --name "$BINNACLE_E2E_CLUSTER" -o json 2>/dev/null | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).registry))')
export PATH="$root/.cache/bin:$PATH"

if [ $# -gt 0 ]; then files=("$@"); else mapfile -t files < <(find src test -name '*.test.ts' -not -path '*/node_modules/*' | sort); fi
step "run ${#files[@]} test files"
mkdir -p .cache
set +e
node --import tsx --test --test-reporter=spec --test-reporter-destination=stdout \
  --test-reporter=tap --test-reporter-destination=.cache/test-results.tap "${files[@]}"
status=$?
set -e
pass=$(awk '/^# pass /{print $3}' .cache/test-results.tap | tail -1)
fail=$(awk '/^# fail /{print $3}' .cache/test-results.tap | tail -1)
echo
echo "${pass:-0} passed, ${fail:-0} failed"
exit $status
