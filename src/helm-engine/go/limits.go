package main

import (
	"regexp"
	"strings"

	release "helm.sh/helm/v4/pkg/release/v1"
)

// The release's limits on a render (src/apply/limits.ts), checked here, where the render
// happens: a render past them is answered by a few bytes naming the limit, never encoded,
// sent and parsed (a 100,000-object render is ~30 MB of answer, read on the host's main
// thread). The host checks the same limits again on what it receives.

// documentMarker is src/apply/limits.ts's DOCUMENT_MARKER: a line that is `---`, then blanks
// or a comment.
var documentMarker = regexp.MustCompile(`(?m)^---[ \t]*(?:#.*)?$`)

var commentLine = regexp.MustCompile(`(?m)^\s*#.*$`)

// countDocuments is src/apply/limits.ts's countDocuments: the markers, and the text before the
// first one when it is more than blanks and comments; it stops counting past stop.
func countDocuments(text string, stop int) int {
	locs := documentMarker.FindAllStringIndex(text, stop+1)
	n := len(locs)
	if n > stop {
		return n
	}
	first := len(text)
	if n > 0 {
		first = locs[0][0]
	}
	if first != 0 && strings.TrimSpace(commentLine.ReplaceAllString(text[:first], "")) != "" {
		n++
	}
	return n
}

// exceededLimit names the first of the request's limits the render is past ("" when none
// is): the manifest, the chart's CRD files and the hooks, as the host counts them.
func exceededLimit(req request, manifest string, crds []crdFile, hooks []*release.Hook) (limit string, size int) {
	if req.MaxManifestBytes <= 0 && req.MaxObjects <= 0 {
		return "", 0
	}
	texts := []string{manifest}
	for _, c := range crds {
		texts = append(texts, c.Data)
	}
	for _, h := range hooks {
		texts = append(texts, h.Manifest)
	}
	bytes := 0
	for _, t := range texts {
		bytes += len(t)
	}
	if req.MaxManifestBytes > 0 && bytes > req.MaxManifestBytes {
		return "maxManifestBytes", bytes
	}
	if req.MaxObjects > 0 {
		objects := 0
		for _, t := range texts {
			objects += countDocuments(t, req.MaxObjects-objects)
			if objects > req.MaxObjects {
				return "maxObjects", objects
			}
		}
	}
	return "", 0
}
