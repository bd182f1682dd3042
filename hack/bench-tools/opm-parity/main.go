// opm-parity: for each catalog directory named on stdin (one a line) or as an argument, runs
// what `opm validate` runs (operator-registry pkg/lib/config.Validate: declcfg.LoadFS, then
// declcfg.ConvertToModel, which ends in model.Validate) and prints one JSON line
// {"dir", "valid", "error"}. It also parses every channel entry's skipRange and every
// olm.package.required versionRange with blang/semver ParseRange (what OLM resolves them with;
// opm validate does not check them) and lists the ones that fail in "ranges".
//
// A line may name a stage before the directory, "load<TAB>dir": then only declcfg.LoadFS runs
// (the stage of operator-registry's own load tests). "failedAt" says which step refused.
//
// Files are loaded one at a time (WithConcurrency(1)) so that the first error reported for a
// directory does not depend on goroutine scheduling; the verdict is the same as opm's.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/property"
)

type rangeProblem struct {
	Where string `json:"where"`
	Range string `json:"range"`
	Error string `json:"error"`
}

type verdict struct {
	Dir    string         `json:"dir"`
	Valid  bool           `json:"valid"`
	Error  string         `json:"error,omitempty"`
	// FailedAt is the step that refused: "load" (declcfg.LoadFS) or "model" (ConvertToModel).
	FailedAt string `json:"failedAt,omitempty"`
	Ranges []rangeProblem `json:"ranges,omitempty"`
}

func check(line string) verdict {
	stage, dir, staged := strings.Cut(line, "\t")
	if !staged {
		stage, dir = "", line
	}
	v := verdict{Dir: dir}
	st, err := os.Stat(dir)
	if err != nil {
		v.Error, v.FailedAt = err.Error(), "load"
		return v
	}
	if !st.IsDir() {
		v.Error = fmt.Sprintf("%q is not a directory", dir)
		return v
	}
	var root fs.FS = os.DirFS(dir)
	cfg, err := declcfg.LoadFS(context.Background(), root, declcfg.WithConcurrency(1))
	if err != nil {
		v.Error, v.FailedAt = err.Error(), "load"
		return v
	}
	v.Ranges = ranges(cfg)
	if stage == "load" {
		v.Valid = true
		return v
	}
	if _, err := declcfg.ConvertToModel(*cfg); err != nil {
		v.Error, v.FailedAt = err.Error(), "model"
		return v
	}
	v.Valid = true
	return v
}

func ranges(cfg *declcfg.DeclarativeConfig) []rangeProblem {
	var out []rangeProblem
	for _, c := range cfg.Channels {
		for _, e := range c.Entries {
			if e.SkipRange == "" {
				continue
			}
			if _, err := semver.ParseRange(e.SkipRange); err != nil {
				out = append(out, rangeProblem{Where: fmt.Sprintf("channel %q entry %q skipRange", c.Name, e.Name), Range: e.SkipRange, Error: err.Error()})
			}
		}
	}
	for _, b := range cfg.Bundles {
		for i, p := range b.Properties {
			if p.Type != property.TypePackageRequired {
				continue
			}
			var r property.PackageRequired
			if json.Unmarshal(p.Value, &r) != nil {
				continue
			}
			if _, err := semver.ParseRange(r.VersionRange); err != nil {
				out = append(out, rangeProblem{Where: fmt.Sprintf("bundle %q properties[%d] versionRange", b.Name, i), Range: r.VersionRange, Error: err.Error()})
			}
		}
	}
	return out
}

func main() {
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	emit := func(dir string) {
		if err := enc.Encode(check(dir)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	if len(os.Args) > 1 {
		for _, d := range os.Args[1:] {
			emit(d)
		}
		return
	}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if d := sc.Text(); d != "" {
			emit(d)
		}
	}
}
