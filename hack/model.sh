#!/usr/bin/env bash
# The release engine's model-based test on demand (`npm run model`): src/controllers/
# release-engine.model.test.ts with many sequences and a fresh seed, the two owner kinds (Helm
# release, BundleDeployment) side by side in two processes. Prints the seed first; a failure is
# shrunk to its shortest sequence (fast-check), to be kept in that file as a regression case, and
# replayed with BINNACLE_MODEL_SEED=<seed> BINNACLE_MODEL_PATH=<path it printed>.
#
# usage: hack/model.sh            (100,000 sequences per owner kind)
# env:   BINNACLE_MODEL_RUNS (default 100000), BINNACLE_MODEL_SEED (default: fresh),
#        BINNACLE_MODEL_SHRINK=0 (report the failing sequence as generated)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
export BINNACLE_FROM_SOURCE=1
export BINNACLE_MODEL_RUNS=${BINNACLE_MODEL_RUNS:-100000}
export BINNACLE_MODEL_SEED=${BINNACLE_MODEL_SEED:-$(node -e 'console.log(require("crypto").randomInt(2 ** 31 - 1))')}
echo "model: seed $BINNACLE_MODEL_SEED, $BINNACLE_MODEL_RUNS sequences per owner kind"
mkdir -p .cache/model
status=0
pids=()
for subject in "helm release" "bundle deployment"; do
  log=".cache/model/${subject// /-}-$BINNACLE_MODEL_SEED.log"
  node --import tsx --test --test-reporter=spec --test-name-pattern="the $subject under random" src/controllers/release-engine.model.test.ts > "$log" 2>&1 &
  pids+=($!)
  echo "  $subject: $log"
done
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
for subject in "helm release" "bundle deployment"; do
  log=".cache/model/${subject// /-}-$BINNACLE_MODEL_SEED.log"
  grep -E "sequences, .* commands|Counterexample|Shrunk|seed|✖|✔ the $subject under" "$log" | head -20 || true
done
echo "model: seed $BINNACLE_MODEL_SEED, $([ $status = 0 ] && echo passed || echo FAILED)"
exit $status
