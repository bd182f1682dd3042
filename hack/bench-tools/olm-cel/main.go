// Command olm-cel evaluates olm.constraint CEL rules the way OLM does, to give
// src/resolve/cel-parity.test.ts its reference answers (written to
// src/resolve/testdata/cel/olm-verdicts.json by `bash hack/bench-tools/olm-cel/verdicts.sh`).
//
// Two environments, both from operator-framework/api v0.27.0's cel-go:
//   - "olm": constraints.NewCelEnvironment() itself, as OLM's resolver builds it: `properties`
//     (list of map(string, dyn)), OLM's semver_compare, type-checked, a bool result required.
//     Each input's properties go through encoding/json as OLM's celPredicate does (numbers are
//     doubles).
//   - "cluster": the same declarations plus Binnacle's `cluster` variable (map(string, dyn)),
//     for rules OLM's environment refuses only because they read `cluster`. Its semver_compare
//     is written here from the documented behaviour (blang/semver ParseTolerant of the value's
//     printed form, then Compare); every rule that "olm" compiles is run through both and the
//     tool fails if they ever disagree.
//
// Input (stdin): {"rules": [{"id": "...", "rule": "..."}], "inputs": [{"name": "...",
// "properties": [...], "cluster": {...}}]}.
// Output (stdout): {"reference": "...", "rules": [{"id", "rule", "env": "olm"|"cluster",
// "compileError": "..." | absent, "results": {"<input>": true | false | "error"}}]}.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"

	"github.com/blang/semver/v4"
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/operator-framework/api/pkg/constraints"
)

type inRule struct {
	ID   string `json:"id"`
	Rule string `json:"rule"`
}

type inInput struct {
	Name       string          `json:"name"`
	Properties json.RawMessage `json:"properties"`
	Cluster    json.RawMessage `json:"cluster"`
}

type outRule struct {
	ID           string                 `json:"id"`
	Rule         string                 `json:"rule"`
	Env          string                 `json:"env"`
	CompileError string                 `json:"compileError,omitempty"`
	Results      map[string]interface{} `json:"results,omitempty"`
}

func decode(raw json.RawMessage, into interface{}) {
	if len(raw) == 0 {
		return
	}
	if err := json.Unmarshal(raw, into); err != nil {
		fmt.Fprintln(os.Stderr, "bad input:", err)
		os.Exit(2)
	}
}

func semverCompare(a, b ref.Val) ref.Val {
	va, err := semver.ParseTolerant(fmt.Sprint(a.Value()))
	if err != nil {
		return types.NewErr("unable to parse '%v' to semver format", a.Value())
	}
	vb, err := semver.ParseTolerant(fmt.Sprint(b.Value()))
	if err != nil {
		return types.NewErr("unable to parse '%v' to semver format", b.Value())
	}
	return types.Int(va.Compare(vb))
}

func clusterEnv() *cel.Env {
	env, err := cel.NewEnv(
		cel.Variable(constraints.PropertiesKey, cel.ListType(cel.MapType(cel.StringType, cel.DynType))),
		cel.Variable("cluster", cel.MapType(cel.StringType, cel.DynType)),
		cel.Function("semver_compare", cel.Overload("semver_compare", []*cel.Type{cel.DynType, cel.DynType}, cel.IntType, cel.BinaryBinding(semverCompare))),
	)
	if err != nil {
		panic(err)
	}
	return env
}

// evalCluster runs a rule in the "cluster" environment; ok false means it does not compile there.
func evalCluster(env *cel.Env, rule string, inputs []inInput) (map[string]interface{}, string) {
	ast, iss := env.Compile(rule)
	if iss.Err() != nil {
		return nil, iss.Err().Error()
	}
	if ast.OutputType() != cel.BoolType {
		return nil, "cel expressions must have type Bool"
	}
	prg, err := env.Program(ast)
	if err != nil {
		return nil, err.Error()
	}
	out := map[string]interface{}{}
	for _, in := range inputs {
		var props []map[string]interface{}
		decode(in.Properties, &props)
		cluster := map[string]interface{}{}
		decode(in.Cluster, &cluster)
		v, _, err := prg.Eval(map[string]interface{}{"properties": props, "cluster": cluster})
		if b, ok := v.(types.Bool); err == nil && ok {
			out[in.Name] = bool(b)
		} else {
			out[in.Name] = "error"
		}
	}
	return out, ""
}

func main() {
	var in struct {
		Rules  []inRule  `json:"rules"`
		Inputs []inInput `json:"inputs"`
	}
	decode(mustRead(), &in)
	olm := constraints.NewCelEnvironment()
	ext := clusterEnv()
	var out []outRule
	for _, r := range in.Rules {
		o := outRule{ID: r.ID, Rule: r.Rule, Env: "olm"}
		withCluster, extErr := evalCluster(ext, r.Rule, in.Inputs)
		prog, err := olm.Validate(r.Rule)
		if err != nil {
			if extErr == "" {
				// Refused by OLM only for reading `cluster`: Binnacle's extension answers.
				o.Env, o.Results = "cluster", withCluster
			} else {
				o.CompileError = err.Error()
			}
			out = append(out, o)
			continue
		}
		o.Results = map[string]interface{}{}
		for _, input := range in.Inputs {
			var props []map[string]interface{}
			decode(input.Properties, &props)
			ok, err := prog.Evaluate(map[string]interface{}{"properties": props})
			if err != nil {
				o.Results[input.Name] = "error"
			} else {
				o.Results[input.Name] = ok
			}
			if ref := withCluster[input.Name]; extErr != "" || fmt.Sprint(ref) != fmt.Sprint(o.Results[input.Name]) {
				fmt.Fprintf(os.Stderr, "the cluster environment disagrees with OLM's on %q over %s: %v vs %v (%s)\n", r.Rule, input.Name, ref, o.Results[input.Name], extErr)
				os.Exit(1)
			}
		}
		out = append(out, o)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(map[string]interface{}{"reference": "operator-framework/api v0.27.0 constraints.NewCelEnvironment (cel-go v0.20.1)", "rules": out}); err != nil {
		panic(err)
	}
}

func mustRead() json.RawMessage {
	b, err := os.ReadFile("/dev/stdin")
	if err != nil {
		panic(err)
	}
	return b
}
