#!/usr/bin/env bash
# `npm run olmv1-scenarios [-- cucumber args]`: operator-controller v1.11.0's e2e scenarios
# (vendored, unchanged) against a Binnacle manager started in this process, on the control plane
# BINNACLE_E2E_KUBECONFIG names, with images pushed to BINNACLE_E2E_REGISTRY. When those are
# unset they come from a `binnacle cluster up` summary (BINNACLE_DEVUP, default /tmp/devup.json).
# E2E_STEP_TIMEOUT bounds each wait as upstream's (default 5m). Examples:
#   npm run olmv1-scenarios -- test/vendor/operator-controller-v1.11.0/test/e2e/features/install.feature:11
#   npm run olmv1-scenarios -- --dry-run      # lists undefined steps, runs nothing
set -euo pipefail
cd "$(dirname "$0")/../.."
devup="${BINNACLE_DEVUP:-/tmp/devup.json}"
if [[ -z "${BINNACLE_E2E_KUBECONFIG:-}" || -z "${BINNACLE_E2E_REGISTRY:-}" ]]; then
  [[ -f "$devup" ]] || { echo "olmv1-scenarios: set BINNACLE_E2E_KUBECONFIG and BINNACLE_E2E_REGISTRY, or BINNACLE_DEVUP to a cluster-up summary" >&2; exit 2; }
  export BINNACLE_E2E_KUBECONFIG="${BINNACLE_E2E_KUBECONFIG:-$(node -p "require('$devup').kubeconfig")}"
  export BINNACLE_E2E_REGISTRY="${BINNACLE_E2E_REGISTRY:-$(node -p "require('$devup').registry")}"
fi
# kubectl from the cluster's cache when not on PATH (steps run the kubectl binary, as upstream's).
if ! command -v kubectl >/dev/null; then
  bin="$(dirname "$(dirname "$(dirname "$BINNACLE_E2E_KUBECONFIG")")")/bin"
  [[ -x "$bin/kubectl" ]] && export PATH="$bin:$PATH"
fi
export BINNACLE_FROM_SOURCE=1
mkdir -p .cache/olmv1-scenarios
# The whole suite unless feature paths (file or file:line) are given.
features=(test/vendor/operator-controller-v1.11.0/test/e2e/features/*.feature)
for a in "$@"; do [[ "$a" == *.feature* ]] && features=(); done
exec node --import tsx node_modules/@cucumber/cucumber/bin/cucumber.js --config test/olmv1-scenarios/cucumber.json "${features[@]}" "$@"
