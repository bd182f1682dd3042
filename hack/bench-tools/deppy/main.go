// Command deppy-bench runs resolution problems exported by bench/resolve.ts through
// operator-framework/deppy v0.3.0 and prints, per problem, the selected variables (or the
// size of the unsatisfiable core) and the median solve time, as JSON on stdout.
//
// Input (stdin): {"repeat": N, "problems": [{"name": "...", "variables": [{"id": "...",
// "constraints": [{"kind": "mandatory"|"prohibited"|"dependency"|"conflict"|"atMost", "ids": [...], "id": "...", "n": 1}]}]}]}
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/operator-framework/deppy/pkg/deppy"
	"github.com/operator-framework/deppy/pkg/deppy/constraint"
	"github.com/operator-framework/deppy/pkg/deppy/input"
	"github.com/operator-framework/deppy/pkg/deppy/solver"
)

type inConstraint struct {
	Kind string   `json:"kind"`
	IDs  []string `json:"ids"`
	ID   string   `json:"id"`
	N    int      `json:"n"`
}

type inVariable struct {
	ID          string         `json:"id"`
	Constraints []inConstraint `json:"constraints"`
}

type inProblem struct {
	Name      string       `json:"name"`
	Variables []inVariable `json:"variables"`
}

type inFile struct {
	Repeat   int         `json:"repeat"`
	Problems []inProblem `json:"problems"`
}

type outResult struct {
	Name     string   `json:"name"`
	OK       bool     `json:"ok"`
	Selected []string `json:"selected"`
	CoreSize int      `json:"coreSize"`
	Error    string   `json:"error,omitempty"`
	MedianMs float64  `json:"medianMs"`
}

func ids(in []string) []deppy.Identifier {
	out := make([]deppy.Identifier, len(in))
	for i, s := range in {
		out[i] = deppy.IdentifierFromString(s)
	}
	return out
}

func build(p inProblem) ([]deppy.Variable, error) {
	vars := make([]deppy.Variable, 0, len(p.Variables))
	for _, v := range p.Variables {
		cs := make([]deppy.Constraint, 0, len(v.Constraints))
		for _, c := range v.Constraints {
			switch c.Kind {
			case "mandatory":
				cs = append(cs, constraint.Mandatory())
			case "prohibited":
				cs = append(cs, constraint.Prohibited())
			case "dependency":
				cs = append(cs, constraint.Dependency(ids(c.IDs)...))
			case "conflict":
				cs = append(cs, constraint.Conflict(deppy.IdentifierFromString(c.ID)))
			case "atMost":
				cs = append(cs, constraint.AtMost(c.N, ids(c.IDs)...))
			default:
				return nil, fmt.Errorf("variable %s: unknown constraint kind %q", v.ID, c.Kind)
			}
		}
		vars = append(vars, input.NewSimpleVariable(deppy.IdentifierFromString(v.ID), cs...))
	}
	return vars, nil
}

func main() {
	var in inFile
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		fmt.Fprintf(os.Stderr, "deppy-bench: reading problems: %v\n", err)
		os.Exit(1)
	}
	if in.Repeat < 1 {
		in.Repeat = 1
	}
	results := make([]outResult, 0, len(in.Problems))
	for _, p := range in.Problems {
		vars, err := build(p)
		if err != nil {
			results = append(results, outResult{Name: p.Name, Error: err.Error()})
			continue
		}
		var r outResult
		times := make([]float64, 0, in.Repeat)
		for i := 0; i < in.Repeat; i++ {
			s, err := solver.New()
			if err != nil {
				fmt.Fprintf(os.Stderr, "deppy-bench: %v\n", err)
				os.Exit(1)
			}
			start := time.Now()
			sel, err := s.Solve(vars)
			times = append(times, float64(time.Since(start).Nanoseconds())/1e6)
			r = outResult{Name: p.Name}
			var ns deppy.NotSatisfiable
			switch {
			case err == nil:
				r.OK = true
				r.Selected = make([]string, 0, len(sel))
				for _, v := range sel {
					r.Selected = append(r.Selected, v.Identifier().String())
				}
			case errors.As(err, &ns):
				r.CoreSize = len(ns)
			default:
				r.Error = err.Error()
			}
		}
		sort.Float64s(times)
		r.MedianMs = times[len(times)/2]
		results = append(results, r)
	}
	enc := json.NewEncoder(os.Stdout)
	if err := enc.Encode(map[string]any{"results": results}); err != nil {
		os.Exit(1)
	}
}
