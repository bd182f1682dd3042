#!/usr/bin/env bash
# The full fuzzing run (`npm run fuzz`): every loader in test/fuzz with BINNACLE_FUZZ_RUNS inputs
# (default 10,000; the Helm engine's own loader gets BINNACLE_FUZZ_ENGINE_RUNS, default 1,000, as
# each input is a WebAssembly render, tens of ms warm), then a table of the figures: inputs,
# answers, specific errors and their share of the inputs, crashes, hangs, writes outside the
# sandbox, seconds, the slowest input. A failing input is shrunk before it is reported
# (BINNACLE_FUZZ_SHRINK=0 reports it as generated; test/fuzz/harness.ts). The run fails on any
# crash, hang or outside write, and when a loader's specific errors are under a third of its
# inputs (its generator then hardly reaches invalid input). CI runs the same files with a small
# fixed-seed sample, unshrunk.
#
# usage: hack/fuzz.sh [TEST_FILE...]
# env: BINNACLE_FUZZ_RUNS, BINNACLE_FUZZ_SEED (printed; replays a failure), BINNACLE_FUZZ_SHRINK,
#      BINNACLE_FUZZ_SHRINK_SECONDS
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
export BINNACLE_FROM_SOURCE=1
export BINNACLE_FUZZ_RUNS=${BINNACLE_FUZZ_RUNS:-10000}
mkdir -p .cache
export BINNACLE_FUZZ_REPORT="$root/.cache/fuzz-figures.jsonl"
rm -f "$BINNACLE_FUZZ_REPORT"
if [ $# -gt 0 ]; then files=("$@"); else mapfile -t files < <(find test/fuzz -name '*.test.ts' | sort); fi
echo "fuzzing ${#files[@]} files, ${BINNACLE_FUZZ_RUNS} inputs per loader, seed ${BINNACLE_FUZZ_SEED:-default}"
set +e
node --import tsx --test --test-concurrency=1 --test-reporter=spec "${files[@]}"
status=$?
set -e
node -e '
const rows = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
const share = (r) => (r.inputs === 0 ? 0 : r.errors / r.inputs);
const low = rows.filter((r) => share(r) < r.minErrorShare);
const head = ["loader", "seed", "inputs", "seconds", "answers", "specific errors", "error share", "crashes", "hangs", "outside writes", "max ms/input"];
const body = rows.map((r) => [r.loader, r.seed, r.inputs, r.seconds.toFixed(0), r.answers, r.errors, `${low.includes(r) ? "LOW " : ""}${(share(r) * 100).toFixed(1)}%`, r.crashes, r.hangs, r.outsideWrites, r.maxMs.toFixed(0)].map(String));
const w = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
const line = (cells) => cells.map((c, i) => (i === 0 ? c.padEnd(w[i]) : c.padStart(w[i]))).join("  ");
console.log("\n" + line(head));
for (const b of body) console.log(line(b));
const sum = (k) => rows.reduce((a, r) => a + r[k], 0);
console.log(`\n${rows.length} loaders, ${sum("inputs")} inputs, ${sum("answers")} answers, ${sum("errors")} specific errors, ${sum("crashes")} crashes, ${sum("hangs")} hangs, ${sum("outsideWrites")} outside writes, ${sum("seconds").toFixed(0)} s`);
for (const r of low) console.log(`FAIL ${r.loader}: ${r.errors} of ${r.inputs} inputs ended in a specific error, under ${(r.minErrorShare * 100).toFixed(1)}%`);
process.exitCode = low.length > 0 ? 1 : 0;
' "$BINNACLE_FUZZ_REPORT" || status=1
exit $status
