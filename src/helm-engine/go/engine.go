// Package main is Helm's own chart loader, values coalescing, schema validation and template
// engine (helm.sh/helm/v4, the same module and version as the `helm` CLI that
// src/helm-engine/build.sh builds), for Binnacle's src/helm-engine/engine.ts, built twice from this source:
//   - main_js.go: WebAssembly (GOOS=js), run inside Node's worker threads (helm.wasm);
//   - main_native.go: a native, static program (helm-engine), run as a child process that
//     speaks newline-delimited JSON over stdin/stdout.
//
// This file is what both share: render follows the steps of action.Install in dry-run mode, the
// path `helm template` takes; pkg/action itself is not imported because it pulls in kubectl's
// terminal code, which does not build for js/wasm. Loading, values, schema, templates, sorting
// and hooks are Helm's own packages. Nothing here talks to a cluster: `lookup` goes through a
// RoundTripper (hostTransport, one per entry point) that hands each HTTP request to the host,
// which answers it with its own Kubernetes client and its own policy.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"k8s.io/client-go/rest"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/loader"
	"helm.sh/helm/v4/pkg/chart/loader/archive"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	chartloader "helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/engine"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"
	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
	"helm.sh/helm/v4/pkg/strvals"
)

// request is one render. Values come either as Helm's CLI options (files and --set
// strings, merged by Helm's own code) or as a ready map (an operator's CR spec).
type request struct {
	Chart       string         `json:"chart"`
	ReleaseName string         `json:"releaseName"`
	Namespace   string         `json:"namespace"`
	ValueFiles  []string       `json:"valueFiles"`
	Set         []string       `json:"set"`
	SetString   []string       `json:"setString"`
	SetFile     []string       `json:"setFile"`
	SetJSON     []string       `json:"setJSON"`
	SetLiteral  []string       `json:"setLiteral"`
	Values      map[string]any `json:"values"`
	KubeVersion string         `json:"kubeVersion"`
	// APIVersions added to Helm's defaults, as `helm template --api-versions` does.
	APIVersions []string `json:"apiVersions"`
	// ClusterAPIVersions, when set, are the cluster's exact served versions (from
	// discovery), used instead of Helm's defaults, as `helm install` does.
	ClusterAPIVersions []string `json:"clusterAPIVersions"`
	// Revision > 1 renders an upgrade (.Release.IsUpgrade, .Release.Revision).
	Revision     int      `json:"revision"`
	IsUpgrade    bool     `json:"isUpgrade"`
	IncludeCRDs  bool     `json:"includeCRDs"`
	SkipTests    bool     `json:"skipTests"`
	DisableHooks bool     `json:"disableHooks"`
	ShowOnly     []string `json:"showOnly"`
	// Lookup lets `lookup` read the cluster through the host; without it, lookup answers
	// empty, as `helm template` does.
	Lookup               bool `json:"lookup"`
	SkipSchemaValidation bool `json:"skipSchemaValidation"`
	// CallID names the host call this render belongs to, so lookups reach its client.
	CallID int `json:"callId"`
	// Subchart renders one subchart on its own (path of dependency names or aliases, "a/b"):
	// a Helm operator kind served by a subchart, whose values are that subchart's.
	Subchart string `json:"subchart"`
	// OmitRelease leaves the release object out of the response (`helm template` prints no
	// release): encoding it, chart files and all, is most of a render's output by size.
	OmitRelease bool `json:"omitRelease"`
	// MaxObjects and MaxManifestBytes are the release's limits (limits.go); 0 is none.
	MaxObjects       int `json:"maxObjects"`
	MaxManifestBytes int `json:"maxManifestBytes"`
}

type response struct {
	// Output is what `helm template` prints for the request.
	Output string `json:"output,omitempty"`
	// Release is Helm's release object (chart, config, manifest, hooks, notes) as Helm
	// stores it, for release records that `helm get`/`history`/`rollback` read.
	Release json.RawMessage `json:"release,omitempty"`
	// CRDs are the crds/ files of the chart and its enabled subcharts (chart.CRDObjects),
	// which Helm installs before anything else and never upgrades.
	CRDs []crdFile `json:"crds,omitempty"`
	// Charts describes the loaded chart and its subcharts, for schema and bundle work.
	Charts []chartInfo `json:"charts,omitempty"`
	Error  string      `json:"error,omitempty"`
	// Phase says where an error arose: load, values, render, limits.
	Phase string `json:"phase,omitempty"`
	// Exceeded names the release limit a render is past (phase limits), Size how far it got.
	Exceeded string `json:"exceeded,omitempty"`
	Size     int    `json:"size,omitempty"`
}

type chartInfo struct {
	Path       string          `json:"path"`
	Metadata   *chart.Metadata `json:"metadata"`
	Values     json.RawMessage `json:"values"`
	Schema     string          `json:"schema,omitempty"`
	ValuesYAML string          `json:"valuesYaml,omitempty"`
	CRDs       []crdFile       `json:"crds,omitempty"`
}

type crdFile struct {
	Name string `json:"name"`
	Data string `json:"data"`
}

// handleJSON decodes one request, runs fn and encodes its response; a panic in Helm's code
// is the call's error, not the engine's end.
func handleJSON(data []byte, fn func(request) response) (out []byte) {
	defer func() {
		if r := recover(); r != nil {
			out, _ = json.Marshal(response{Error: fmt.Sprintf("helm engine panic: %v", r), Phase: "internal"})
		}
	}()
	var req request
	var res response
	if err := json.Unmarshal(data, &req); err != nil {
		res = response{Error: "bad request: " + err.Error(), Phase: "request"}
	} else {
		res = fn(req)
	}
	b, err := json.Marshal(res)
	if err != nil {
		b, _ = json.Marshal(response{Error: "cannot encode response: " + err.Error(), Phase: "internal"})
	}
	return b
}

func loadChart(path string) (*chart.Chart, error) {
	// As action.ChartPathOptions.LocateChart words a missing local chart.
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("path %q not found", path)
	}
	ch, err := loadV2(path)
	if err != nil {
		return nil, err
	}
	// As `helm install` and `helm template` check (pkg/cmd/install.go checkIfInstallable).
	switch ch.Metadata.Type {
	case "", "application":
	default:
		return nil, fmt.Errorf("%s charts are not installable", ch.Metadata.Type)
	}
	if reqs := ch.Metadata.Dependencies; reqs != nil {
		// action.CheckDependencies, worded as runInstall (pkg/cmd/install.go) wraps it.
		var missing []string
	outer:
		for _, r := range reqs {
			for _, d := range ch.Dependencies() {
				if d.Name() == r.Name {
					continue outer
				}
			}
			missing = append(missing, r.Name)
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("an error occurred while checking for chart dependencies. You may need to run 'helm dependency build' to fetch missing dependencies: found in Chart.yaml, but missing in charts/ directory: %s", strings.Join(missing, ", "))
		}
	}
	return ch, nil
}

// loadV2 loads a chart as `helm template` does (pkg/chart/loader, which reads Chart.yaml's
// apiVersion first), for the chart API versions Helm 4 installs (v1, v2): action.Install
// refuses any other loaded chart with this error.
func loadV2(path string) (*chart.Chart, error) {
	c, err := loader.Load(path)
	if err != nil {
		return nil, err
	}
	ch, ok := c.(*chart.Chart)
	if !ok {
		return nil, errors.New("invalid chart apiVersion")
	}
	return ch, nil
}

// subchart finds a dependency by name or alias, path by path ("exporters", "a/b").
func subchart(ch *chart.Chart, path string) (*chart.Chart, error) {
	cur := ch
	for _, name := range strings.Split(path, "/") {
		var found *chart.Chart
		for _, d := range cur.Dependencies() {
			if d.Name() == name {
				found = d
			}
		}
		if found == nil {
			for _, dep := range cur.Metadata.Dependencies {
				if dep.Alias == name {
					for _, d := range cur.Dependencies() {
						if d.Name() == dep.Name {
							found = d
						}
					}
				}
			}
		}
		if found == nil {
			var have []string
			for _, d := range cur.Dependencies() {
				have = append(have, d.Name())
			}
			return nil, fmt.Errorf("chart %s has no subchart %q (it has: %s)", cur.Name(), name, strings.Join(have, ", "))
		}
		cur = found
	}
	// Loaded again from its own files, so it is a root chart: template names and
	// .Chart paths are the subchart's own, as if it had been installed by itself.
	files := make([]*archive.BufferedFile, 0, len(cur.Raw))
	for _, f := range cur.Raw {
		files = append(files, &archive.BufferedFile{Name: f.Name, ModTime: f.ModTime, Data: f.Data})
	}
	return chartloader.LoadFiles(files)
}

// mergeValues is pkg/cli/values.Options.MergeValues for local files (that package pulls in
// Helm's getters, which do not build for js/wasm). A ready map (a CR's spec) goes first,
// under the files and --set flags.
func mergeValues(req request) (map[string]any, error) {
	base := map[string]any{}
	if req.Values != nil {
		base = chartloader.MergeMaps(base, req.Values)
	}
	for _, filePath := range req.ValueFiles {
		raw, err := os.ReadFile(filePath)
		if err != nil {
			return nil, err
		}
		currentMap, err := chartloader.LoadValues(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("failed to parse %s: %w", filePath, err)
		}
		base = chartloader.MergeMaps(base, currentMap)
	}
	for _, value := range req.SetJSON {
		// A whole JSON object merges into the values; anything else is key=json.
		if trimmed := strings.TrimSpace(value); trimmed != "" && trimmed[0] == '{' {
			var jsonMap map[string]any
			if err := json.Unmarshal([]byte(trimmed), &jsonMap); err != nil {
				return nil, fmt.Errorf("failed parsing --set-json data JSON: %s", value)
			}
			base = chartloader.MergeMaps(base, jsonMap)
		} else if err := strvals.ParseJSON(value, base); err != nil {
			return nil, fmt.Errorf("failed parsing --set-json data %s", value)
		}
	}
	for _, value := range req.Set {
		if err := strvals.ParseInto(value, base); err != nil {
			return nil, fmt.Errorf("failed parsing --set data: %w", err)
		}
	}
	for _, value := range req.SetString {
		if err := strvals.ParseIntoString(value, base); err != nil {
			return nil, fmt.Errorf("failed parsing --set-string data: %w", err)
		}
	}
	for _, value := range req.SetFile {
		reader := func(rs []rune) (any, error) {
			data, err := os.ReadFile(string(rs))
			if err != nil {
				return nil, err
			}
			return string(data), err
		}
		if err := strvals.ParseIntoFile(value, base, reader); err != nil {
			return nil, fmt.Errorf("failed parsing --set-file data: %w", err)
		}
	}
	for _, value := range req.SetLiteral {
		if err := strvals.ParseLiteralInto(value, base); err != nil {
			return nil, fmt.Errorf("failed parsing --set-literal data: %w", err)
		}
	}
	return base, nil
}

func capabilities(req request) (*common.Capabilities, error) {
	caps := common.DefaultCapabilities.Copy()
	if req.KubeVersion != "" {
		kv, err := common.ParseKubeVersion(req.KubeVersion)
		if err != nil {
			return nil, fmt.Errorf("invalid kube version '%s': %w", req.KubeVersion, err)
		}
		caps.KubeVersion = *kv
	}
	if req.ClusterAPIVersions != nil {
		caps.APIVersions = common.VersionSet(req.ClusterAPIVersions)
	} else {
		caps.APIVersions = append(caps.APIVersions, req.APIVersions...)
	}
	return caps, nil
}

const notesFileSuffix = "NOTES.txt"

// render follows action.Install.RunWithContext (and Upgrade for revision > 1) in dry-run
// mode, with action.Configuration.renderResources inlined: the steps `helm template` runs.
func render(req request) response {
	ch, err := loadChart(req.Chart)
	if err == nil && req.Subchart != "" {
		ch, err = subchart(ch, req.Subchart)
	}
	if err != nil {
		return response{Error: err.Error(), Phase: "load"}
	}
	vals, err := mergeValues(req)
	if err != nil {
		return response{Error: err.Error(), Phase: "values"}
	}
	caps, err := capabilities(req)
	if err != nil {
		return response{Error: err.Error(), Phase: "request"}
	}
	name := req.ReleaseName
	if name == "" {
		name = "release-name"
	}
	// action.Install.availableName, worded as RunWithContext wraps it.
	if err := chartutil.ValidateReleaseName(name); err != nil {
		return response{Error: fmt.Errorf("release name check failed: release name %q: %w", name, err).Error(), Phase: "request"}
	}
	if err := chartutil.ProcessDependencies(ch, vals); err != nil {
		return response{Error: fmt.Errorf("chart dependencies processing failed: %w", err).Error(), Phase: "values"}
	}
	revision := req.Revision
	if revision < 1 {
		revision = 1
	}
	isUpgrade := req.IsUpgrade || revision > 1
	options := common.ReleaseOptions{Name: name, Namespace: req.Namespace, Revision: revision, IsInstall: !isUpgrade, IsUpgrade: isUpgrade}
	valuesToRender, err := util.ToRenderValuesWithSchemaValidation(ch, vals, options, caps, req.SkipSchemaValidation)
	if err != nil {
		return response{Error: err.Error(), Phase: "values"}
	}
	now := time.Now()
	// Helm 4 applies server-side unless told otherwise and records how (action.Install's
	// createRelease); Binnacle applies server-side too.
	rel := &release.Release{
		Name: name, Namespace: req.Namespace, Chart: ch, Config: vals, Version: revision,
		Info:        &release.Info{FirstDeployed: now, LastDeployed: now, Status: rcommon.StatusPendingInstall, Description: "Dry run complete"},
		ApplyMethod: string(release.ApplyMethodServerSideApply),
	}
	if isUpgrade && revision > 1 {
		rel.Info.Status = rcommon.StatusPendingUpgrade
	}
	hooks, manifest, notes, err := renderResources(ch, valuesToRender, caps, req)
	if manifest != nil {
		rel.Manifest = manifest.String()
	}
	if err != nil {
		msg := err.Error()
		if manifest != nil {
			// As `helm template` words it when a partial release exists.
			msg += "\n\nUse --debug flag to render out invalid YAML"
		}
		return response{Error: msg, Phase: "render"}
	}
	rel.Hooks = hooks
	rel.Info.Notes = notes
	var crds []crdFile
	for _, c := range ch.CRDObjects() {
		crds = append(crds, crdFile{Name: c.Filename, Data: string(c.File.Data)})
	}
	if limit, size := exceededLimit(req, rel.Manifest, crds, hooks); limit != "" {
		return response{Error: "the render is past the release's " + limit, Phase: "limits", Exceeded: limit, Size: size}
	}
	out, err := templateOutput(rel, req)
	if err != nil {
		return response{Error: err.Error(), Phase: "render"}
	}
	var b []byte
	if !req.OmitRelease {
		if b, err = json.Marshal(rel); err != nil {
			return response{Error: "cannot encode release: " + err.Error(), Phase: "internal"}
		}
	}
	return response{Output: out, Release: b, CRDs: crds}
}

// renderResources is action.Configuration.renderResources without output-dir, post-renderer
// or hidden Secrets: render, pull NOTES.txt out, sort hooks from manifests, join them.
func renderResources(ch *chart.Chart, values common.Values, caps *common.Capabilities, req request) ([]*release.Hook, *bytes.Buffer, string, error) {
	hs := []*release.Hook{}
	b := bytes.NewBuffer(nil)
	if ch.Metadata.KubeVersion != "" {
		if !chartutil.IsCompatibleRange(ch.Metadata.KubeVersion, caps.KubeVersion.String()) {
			return hs, b, "", fmt.Errorf("chart requires kubeVersion: %s which is incompatible with Kubernetes %s", ch.Metadata.KubeVersion, caps.KubeVersion.Version)
		}
	}
	var files map[string]string
	var err error
	if req.Lookup {
		files, err = engine.New(bridgeConfig(req.CallID)).RenderWithContext(context.Background(), ch, values)
	} else {
		var e engine.Engine
		files, err = e.RenderWithContext(context.Background(), ch, values)
	}
	if err != nil {
		return hs, b, "", err
	}
	var notesBuffer bytes.Buffer
	for k, v := range files {
		if strings.HasSuffix(k, notesFileSuffix) {
			if k == path.Join(ch.Name(), "templates", notesFileSuffix) {
				if notesBuffer.Len() > 0 {
					notesBuffer.WriteString("\n")
				}
				notesBuffer.WriteString(v)
			}
			delete(files, k)
		}
	}
	notes := notesBuffer.String()
	hs, manifests, err := releaseutil.SortManifests(files, nil, releaseutil.InstallOrder)
	if err != nil {
		for name, content := range files {
			if strings.TrimSpace(content) == "" {
				continue
			}
			fmt.Fprintf(b, "---\n# Source: %s\n%s\n", name, content)
		}
		return hs, b, "", err
	}
	if req.IncludeCRDs {
		for _, crd := range ch.CRDObjects() {
			fmt.Fprintf(b, "---\n# Source: %s\n%s\n", crd.Filename, string(crd.File.Data[:]))
		}
	}
	for _, m := range manifests {
		fmt.Fprintf(b, "---\n# Source: %s\n%s\n", m.Name, m.Content)
	}
	return hs, b, notes, nil
}

// templateOutput prints the release as pkg/cmd/template.go does (stdout, no --output-dir).
func templateOutput(rel *release.Release, req request) (string, error) {
	var manifests bytes.Buffer
	fmt.Fprintln(&manifests, strings.TrimSpace(rel.Manifest))
	if !req.DisableHooks {
		for _, m := range rel.Hooks {
			if req.SkipTests && isTestHook(m) {
				continue
			}
			fmt.Fprintf(&manifests, "---\n# Source: %s\n%s\n", m.Path, m.Manifest)
		}
	}
	if len(req.ShowOnly) == 0 {
		return manifests.String(), nil
	}
	return showOnly(manifests.String(), req.ShowOnly)
}

func isTestHook(h *release.Hook) bool {
	for _, e := range h.Events {
		if e == release.HookTest {
			return true
		}
	}
	return false
}

// inspect loads a chart and describes it and every subchart: metadata, default values,
// values.schema.json, the raw values.yaml (for comments), and files under crds/.
func inspect(req request) response {
	ch, err := loadV2(req.Chart)
	if err != nil {
		return response{Error: err.Error(), Phase: "load"}
	}
	var charts []chartInfo
	var walk func(c *chart.Chart, path string)
	walk = func(c *chart.Chart, path string) {
		info := chartInfo{Path: path, Metadata: c.Metadata, Schema: string(c.Schema)}
		info.Values, _ = json.Marshal(c.Values)
		for _, f := range c.Raw {
			if f.Name == "values.yaml" {
				info.ValuesYAML = string(f.Data)
			}
		}
		for _, f := range c.Files {
			if strings.HasPrefix(f.Name, "crds/") {
				info.CRDs = append(info.CRDs, crdFile{Name: f.Name, Data: string(f.Data)})
			}
		}
		charts = append(charts, info)
		for _, d := range c.Dependencies() {
			walk(d, path+"/charts/"+d.Name())
		}
	}
	walk(ch, ch.Name())
	return response{Charts: charts}
}

// --- lookup through the host --------------------------------------------------------

// bridgeConfig is a client configuration whose every request goes to the host; the host
// name carries the call, so the host answers with that render's own client.
func bridgeConfig(callID int) *rest.Config {
	return &rest.Config{Host: fmt.Sprintf("http://call-%d", callID), Transport: hostTransport{}, QPS: -1}
}

// requestBody reads the body of a request for the host ("" when it has none), for the
// hostTransport of either entry point.
func requestBody(r *http.Request) (string, error) {
	if r.Body == nil {
		return "", nil
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// hostResponse is the host's answer as the HTTP response client-go reads.
func hostResponse(r *http.Request, status int, body string) *http.Response {
	return &http.Response{
		StatusCode: status,
		Status:     fmt.Sprintf("%d %s", status, http.StatusText(status)),
		Header:     http.Header{"Content-Type": []string{"application/json"}},
		Body:       io.NopCloser(strings.NewReader(body)),
		Request:    r,
		ProtoMajor: 1, ProtoMinor: 1,
	}
}

// showOnly keeps the manifests of the named templates, as `helm template --show-only` does.
func showOnly(all string, files []string) (string, error) {
	split := releaseutil.SplitManifests(all)
	keys := make([]string, 0, len(split))
	for k := range split {
		keys = append(keys, k)
	}
	sort.Sort(releaseutil.BySplitManifestsOrder(keys))
	nameRe := regexp.MustCompile("# Source: [^/]+/(.+)")
	var out strings.Builder
	for _, f := range files {
		missing := true
		f = filepath.ToSlash(f)
		for _, k := range keys {
			m := split[k]
			sub := nameRe.FindStringSubmatch(m)
			if len(sub) == 0 {
				continue
			}
			if matched, _ := filepath.Match(f, sub[1]); !matched {
				continue
			}
			fmt.Fprintf(&out, "---\n%s\n", m)
			missing = false
		}
		if missing {
			return "", fmt.Errorf("could not find template %s in chart", f)
		}
	}
	return out.String(), nil
}
