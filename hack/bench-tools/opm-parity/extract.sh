#!/usr/bin/env bash
# Writes operator-registry's own test tables out as FBC directories, one a case, into
# test/vendor/operator-registry-<version>/cases (or $1): the cases of
#   alpha/declcfg/load_test.go            TestLoadReader, TestWalkMetasFS, TestLoadFS, TestLoadFile (stage "load")
#   alpha/declcfg/declcfg_to_model_test.go TestConvertToModel                                     (stage "model")
#   alpha/model/model_test.go             TestChannelHead, TestValidReplacesChain, TestValidators (stage "validate")
# It copies the module (the version go.main.mod pins) out of the module cache, adds the dump
# helpers in extract/ and one call to them at the top of each table's t.Run, and runs those tests
# with CATP_OUT set. Each case gets case.json (origin, test, name, stage; the reference's own
# verdict on the table's in-memory value, "inMemoryValid"; or why it has no directory form,
# "notExpressible") and input/. The expected verdicts are not written here: the parity test
# runs the reference (build.sh main) on input/ each time.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
cd "$here"
mod=github.com/operator-framework/operator-registry
ver="$(go list -modfile=go.main.mod -m -f '{{.Version}}' "$mod")"
dir="$(go list -modfile=go.main.mod -m -f '{{.Dir}}' "$mod")"
[ -n "$dir" ] && [ -d "$dir" ] || { go mod download -modfile=go.main.mod "$mod"; dir="$(go list -modfile=go.main.mod -m -f '{{.Dir}}' "$mod")"; }
out="${1:-$root/test/vendor/operator-registry-$ver/cases}"
work="$(mktemp -d)"
trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
cp -r "$dir/." "$work/src" && chmod -R u+w "$work/src"
cp extract/declcfg_dump_test.go.in "$work/src/alpha/declcfg/zz_dump_test.go"
cp extract/model_dump_test.go.in "$work/src/alpha/model/zz_dump_test.go"
cd "$work/src"
run='t\.Run\(s\.name, func\(t \*testing\.T\) \{\n'
perl -0pi -e "s/(func (TestLoadReader|TestLoadFile)\(.*?$run)/\$1\t\t\tdumpFS(t, \"load_test\", \"\$2\", s.name, s.fsys, s.path)\n/gs; s/(func (TestWalkMetasFS|TestLoadFS)\(.*?$run)/\$1\t\t\tdumpFS(t, \"load_test\", \"\$2\", s.name, s.fsys, \"\")\n/gs" alpha/declcfg/load_test.go
perl -0pi -e "s/(func (TestConvertToModel)\(.*?$run)/\$1\t\t\tdumpCfg(t, \"declcfg_to_model_test\", \"\$2\", s.name, s.cfg)\n/s" alpha/declcfg/declcfg_to_model_test.go
perl -0pi -e "s/(func TestChannelHead\(.*?$run)/\$1\t\t\tch := s.ch\n\t\t\tdumpModel(t, \"TestChannelHead\", s.name, &ch, true, func() error { _, e := ch.Head(); return e }())\n/s; s/(func TestValidReplacesChain\(.*?$run)/\$1\t\t\tch := s.ch\n\t\t\tdumpModel(t, \"TestValidReplacesChain\", s.name, &ch, true, ch.validateReplacesChain())\n/s; s/(func TestValidators\(.*?$run)/\$1\t\t\tdumpModel(t, \"TestValidators\", s.name, s.v, false, s.v.Validate())\n/s" alpha/model/model_test.go
n="$(grep -c 'dump\(FS\|Cfg\|Model\)(t,' alpha/declcfg/load_test.go alpha/declcfg/declcfg_to_model_test.go alpha/model/model_test.go | awk -F: '{s+=$2} END {print s}')"
[ "$n" = 8 ] || { echo "extract.sh: expected 8 table loops to patch in $ver, patched $n: the tests changed shape" >&2; exit 1; }
rm -rf "$work/out" && mkdir "$work/out"
CATP_OUT="$work/out" nice -n 19 go test -p 1 -count=1 -run 'TestLoadReader|TestWalkMetasFS|TestLoadFS$|TestLoadFile|TestConvertToModel$|TestChannelHead|TestValidReplacesChain|TestValidators' ./alpha/declcfg ./alpha/model >&2
rm -rf "$out" && mkdir -p "$out" && cp -r "$work/out/." "$out/"
echo "$out: $(ls "$out" | wc -l) cases from $mod@$ver"
