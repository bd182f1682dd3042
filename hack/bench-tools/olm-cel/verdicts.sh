#!/usr/bin/env bash
# Writes src/resolve/testdata/cel/olm-verdicts.json: OLM's answer for every olm.constraint CEL
# rule of the parity data (test/vendor/*/olm-constraint-cel-rules.json and
# src/resolve/testdata/cel/binnacle-rules.json) over every input of src/resolve/testdata/cel/inputs.json,
# from main.go here (operator-framework/api v0.27.0's CEL environment). Needs Go and the module
# proxy; CI does not run it, src/resolve/cel-parity.test.ts reads what it wrote.
# Low priority, one package at a time: the machine is shared.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
out="$root/.cache/bench-bin/olm-cel"
mkdir -p "$(dirname "$out")"
if [ ! -x "$out" ] || [ "$here/main.go" -nt "$out" ] || [ "$here/go.mod" -nt "$out" ]; then
  (cd "$here" && CGO_ENABLED=0 nice -n 19 go build -p 1 -trimpath -o "$out" .)
fi
cd "$root"
node -e '
const fs = require("fs");
const files = fs.readdirSync("test/vendor").map((d) => `test/vendor/${d}/olm-constraint-cel-rules.json`).filter((f) => fs.existsSync(f));
files.push("src/resolve/testdata/cel/binnacle-rules.json");
const rules = files.flatMap((f) => JSON.parse(fs.readFileSync(f, "utf8")).rules.map((r) => ({ id: r.id, rule: r.rule })));
const inputs = JSON.parse(fs.readFileSync("src/resolve/testdata/cel/inputs.json", "utf8")).inputs;
process.stdout.write(JSON.stringify({ rules, inputs }));
' | "$out" > src/resolve/testdata/cel/olm-verdicts.json
echo "wrote src/resolve/testdata/cel/olm-verdicts.json"
