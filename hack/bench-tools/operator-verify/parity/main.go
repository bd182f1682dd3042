// Command parity runs operator-framework/api's validators over many bundle directories in one
// process and prints one JSON line per directory: the load error, or the errors and warnings of
// the default suite plus the suites named by -suites. It exists for Binnacle's parity figures
// (test/corpus/validator-parity.test.ts); operator-verify itself prints logrus lines and runs
// only the default, operatorhub and object suites.
//
// Usage: parity -suites=community,operatorhub,object,operatorgroup < dirs.txt
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/validation"
	"github.com/operator-framework/api/pkg/validation/errors"
	interfaces "github.com/operator-framework/api/pkg/validation/interfaces"
)

type line struct {
	Dir      string   `json:"dir"`
	Load     string   `json:"load,omitempty"`
	Errors   []string `json:"errors"`
	Warnings []string `json:"warnings"`
}

var suites = map[string]interfaces.Validator{
	"operatorhub":           validation.OperatorHubValidator,
	"operatorhubv2":         validation.OperatorHubV2Validator,
	"capabilities":          validation.StandardCapabilitiesValidator,
	"categories":            validation.StandardCategoriesValidator,
	"object":                validation.ObjectValidator,
	"operatorgroup":         validation.OperatorGroupValidator,
	"community":             validation.CommunityOperatorValidator,
	"good-practices":        validation.GoodPracticesValidator,
	"alpha-deprecated-apis": validation.AlphaDeprecatedAPIsValidator,
}

func main() {
	names := flag.String("suites", "", "comma-separated optional suites")
	flag.Parse()
	validators := validation.DefaultBundleValidators
	for _, n := range strings.Split(*names, ",") {
		if n == "" {
			continue
		}
		v, ok := suites[n]
		if !ok {
			fmt.Fprintf(os.Stderr, "unknown suite %q\n", n)
			os.Exit(2)
		}
		validators = validators.WithValidators(v)
	}
	in := bufio.NewScanner(os.Stdin)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		dir := strings.TrimSpace(in.Text())
		if dir == "" {
			continue
		}
		l := line{Dir: dir, Errors: []string{}, Warnings: []string{}}
		bundle, err := manifests.GetBundleFromDir(dir)
		if err != nil || bundle == nil {
			if err != nil {
				l.Load = err.Error()
			} else {
				l.Load = "no bundle"
			}
			_ = out.Encode(l)
			continue
		}
		results := validators.Validate(bundle.ObjectsToValidate()...)
		for _, r := range results {
			for _, e := range r.Errors {
				l.Errors = append(l.Errors, describe(e))
			}
			for _, w := range r.Warnings {
				l.Warnings = append(l.Warnings, describe(w))
			}
		}
		_ = out.Encode(l)
	}
}

func describe(e errors.Error) string { return e.Error() }
