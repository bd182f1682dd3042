// Command parity runs operator-framework/api's validators over many bundle directories in one
// process and prints one JSON line per directory: the load error, or the errors and warnings of
// the default suite plus the suites named by -suites. It exists for Binnacle's parity figures
// (test/corpus/validator-parity.test.ts); operator-verify itself prints logrus lines and runs
// only the default, operatorhub and object suites.
//
// Usage: parity -suites=community,operatorhub,object,operatorgroup < dirs.txt
//
// With -cases it instead reads one JSON case a line, {"id","validator","path","values"}, and runs
// that one validator on that file or directory as the reference's own tests do (test/corpus/
// validator-parity-reference.test.ts): a per-kind validator (csv, crd, object, operatorgroup,
// packagemanifest) on the object a file holds, "bundle" (BundleValidator) or "default"
// (DefaultBundleValidators) on a bundle directory, or an optional suite on the bundle with "values" as its optional key values
// (k8s-version, index-path).
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/operator-framework/api/pkg/manifests"
	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
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
	cases := flag.Bool("cases", false, "read JSON cases (one named validator per file or directory) instead of directories")
	flag.Parse()
	if *cases {
		runCases()
		return
	}
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

type refCase struct {
	ID        string            `json:"id"`
	Validator string            `json:"validator"`
	Path      string            `json:"path"`
	Values    map[string]string `json:"values,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
}

type caseLine struct {
	ID       string   `json:"id"`
	Load     string   `json:"load,omitempty"`
	Errors   []string `json:"errors"`
	Warnings []string `json:"warnings"`
}

func runCases() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		text := strings.TrimSpace(in.Text())
		if text == "" {
			continue
		}
		var c refCase
		if err := json.Unmarshal([]byte(text), &c); err != nil {
			fmt.Fprintf(os.Stderr, "bad case %q: %v\n", text, err)
			os.Exit(2)
		}
		l := caseLine{ID: c.ID, Errors: []string{}, Warnings: []string{}}
		for k, v := range c.Env {
			_ = os.Setenv(k, v)
		}
		results, err := runCase(c)
		for k := range c.Env {
			_ = os.Unsetenv(k)
		}
		if err != nil {
			l.Load = err.Error()
		}
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

// runCase decodes the input as the reference's own test does, then runs the named validator.
func runCase(c refCase) ([]errors.ManifestResult, error) {
	switch c.Validator {
	case "csv":
		csv := &v1alpha1.ClusterServiceVersion{}
		if err := readInto(c.Path, csv); err != nil {
			return nil, err
		}
		return validation.ClusterServiceVersionValidator.Validate(csv), nil
	case "crd":
		u := &unstructured.Unstructured{}
		if err := readInto(c.Path, u); err != nil {
			return nil, err
		}
		if u.GetAPIVersion() == "apiextensions.k8s.io/v1beta1" {
			crd := &apiextv1beta1.CustomResourceDefinition{}
			if err := readInto(c.Path, crd); err != nil {
				return nil, err
			}
			return validation.CustomResourceDefinitionValidator.Validate(crd), nil
		}
		crd := &apiextv1.CustomResourceDefinition{}
		if err := readInto(c.Path, crd); err != nil {
			return nil, err
		}
		return validation.CustomResourceDefinitionValidator.Validate(crd), nil
	case "object":
		u := &unstructured.Unstructured{}
		if err := readInto(c.Path, u); err != nil {
			return nil, err
		}
		return validation.ObjectValidator.Validate(u), nil
	case "operatorgroup":
		og := &operatorsv1.OperatorGroup{}
		if err := readInto(c.Path, og); err != nil {
			return nil, err
		}
		return validation.OperatorGroupValidator.Validate(og), nil
	case "packagemanifest":
		pkg := &manifests.PackageManifest{}
		if err := readInto(c.Path, pkg); err != nil {
			return nil, err
		}
		return validation.PackageManifestValidator.Validate(pkg), nil
	}
	bundle, err := manifests.GetBundleFromDir(c.Path)
	if err != nil {
		return nil, err
	}
	if bundle == nil {
		return nil, fmt.Errorf("no bundle")
	}
	switch c.Validator {
	case "default":
		return validation.DefaultBundleValidators.Validate(bundle.ObjectsToValidate()...), nil
	case "bundle":
		return validation.BundleValidator.Validate(bundle), nil
	}
	v, ok := suites[c.Validator]
	if !ok {
		return nil, fmt.Errorf("unknown validator %q", c.Validator)
	}
	objs := []interface{}{bundle}
	if len(c.Values) > 0 {
		objs = append(objs, c.Values)
	}
	return v.Validate(objs...), nil
}

func readInto(path string, v interface{}) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return yaml.Unmarshal(b, v)
}
