// Command manager stands in for quay.io/olmtest/webhook-operator:0.0.4, the operator of
// operator-controller's "Install operator having webhooks" scenario (install.feature), on a
// machine that reaches neither quay.io nor the operator's source
// (github.com/perdasilva/webhook-operator). It serves what that scenario observes of the real
// one, from the same flags, ports and paths its bundle's CSV names: a mutating webhook that sets
// spec.mutate, a validating webhook that refuses spec.valid false with the operator's own
// message, and the conversion webhook between WebhookTest v1 (the hub) and v2. It is a test
// fixture, not a Binnacle part: what the scenario tests is that Binnacle installs a bundle's
// webhooks (their configurations, the certificate it issues, the CRD's conversion) so that the
// API server reaches them. Standard library only; real-node.sh builds it into an image.
package main

import (
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"path/filepath"
	"time"
)

const group = "webhook.operators.coreos.io"

func main() {
	probeAddr := flag.String("health-probe-bind-address", ":8081", "the address the probe endpoint binds to")
	certDir := flag.String("webhook-cert-path", "", "the directory that contains the webhook certificate")
	certName := flag.String("webhook-cert-name", "tls.crt", "the name of the webhook certificate file")
	keyName := flag.String("webhook-cert-key", "tls.key", "the name of the webhook key file")
	// The real operator's other flags: accepted, as its CSV may pass them; this one has no
	// controller to elect a leader for and no metrics.
	flag.Bool("leader-elect", false, "accepted; nothing to elect")
	flag.String("metrics-bind-address", "0", "accepted; no metrics")
	flag.Bool("metrics-secure", true, "accepted; no metrics")
	flag.Bool("enable-http2", false, "accepted; HTTP/1.1 only")
	flag.Parse()
	if *certDir == "" {
		log.Fatal("--webhook-cert-path is required: the directory holding the serving certificate")
	}
	certFile, keyFile := filepath.Join(*certDir, *certName), filepath.Join(*certDir, *keyName)

	probes := http.NewServeMux()
	ok := func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }
	probes.HandleFunc("/healthz", ok)
	probes.HandleFunc("/readyz", ok)
	go func() {
		log.Fatal((&http.Server{Addr: *probeAddr, Handler: probes, ReadHeaderTimeout: 10 * time.Second}).ListenAndServe())
	}()

	hooks := http.NewServeMux()
	hooks.HandleFunc("/mutate-webhook-operators-coreos-io-v1-webhooktest", admission(mutate))
	hooks.HandleFunc("/validate-webhook-operators-coreos-io-v1-webhooktest", admission(validate))
	hooks.HandleFunc("/convert", convert)
	server := &http.Server{
		Addr:              ":9443",
		Handler:           hooks,
		ReadHeaderTimeout: 10 * time.Second,
		// Read at every handshake, as controller-runtime's certificate watcher follows a rotation.
		TLSConfig: &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			c, err := tls.LoadX509KeyPair(certFile, keyFile)
			return &c, err
		}},
	}
	log.Printf("serving webhooks on :9443 with %s, probes on %s", certFile, *probeAddr)
	log.Fatal(server.ListenAndServeTLS("", ""))
}

type admissionReview struct {
	APIVersion string             `json:"apiVersion"`
	Kind       string             `json:"kind"`
	Request    *admissionRequest  `json:"request,omitempty"`
	Response   *admissionResponse `json:"response,omitempty"`
}

type admissionRequest struct {
	UID    string          `json:"uid"`
	Name   string          `json:"name"`
	Object json.RawMessage `json:"object"`
}

type status struct {
	Status  string `json:"status,omitempty"`
	Message string `json:"message,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Code    int    `json:"code,omitempty"`
}

type admissionResponse struct {
	UID       string  `json:"uid"`
	Allowed   bool    `json:"allowed"`
	Result    *status `json:"status,omitempty"` // AdmissionResponse names it status, not result
	PatchType string  `json:"patchType,omitempty"`
	Patch     string  `json:"patch,omitempty"`
}

type webhookTestV1 struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec map[string]any `json:"spec"`
}

func admission(decide func(*admissionRequest, *webhookTestV1) *admissionResponse) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var review admissionReview
		if err := json.NewDecoder(io.LimitReader(r.Body, 3<<20)).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, fmt.Sprintf("not an AdmissionReview: %v", err), http.StatusBadRequest)
			return
		}
		var obj webhookTestV1
		if err := json.Unmarshal(review.Request.Object, &obj); err != nil {
			http.Error(w, fmt.Sprintf("not a WebhookTest: %v", err), http.StatusBadRequest)
			return
		}
		resp := decide(review.Request, &obj)
		resp.UID = review.Request.UID
		writeJSON(w, admissionReview{APIVersion: review.APIVersion, Kind: review.Kind, Response: resp})
	}
}

// mutate: the operator's defaulter sets spec.mutate to true.
func mutate(_ *admissionRequest, obj *webhookTestV1) *admissionResponse {
	if m, _ := obj.Spec["mutate"].(bool); m {
		return &admissionResponse{Allowed: true}
	}
	op := "add"
	if _, has := obj.Spec["mutate"]; has {
		op = "replace"
	}
	patch := []map[string]any{{"op": op, "path": "/spec/mutate", "value": true}}
	if obj.Spec == nil {
		patch = []map[string]any{{"op": "add", "path": "/spec", "value": map[string]any{"mutate": true}}}
	}
	b, _ := json.Marshal(patch)
	return &admissionResponse{Allowed: true, PatchType: "JSONPatch", Patch: base64.StdEncoding.EncodeToString(b)}
}

// validate: the operator's validator refuses spec.valid false, in apimachinery's words for a
// field.Invalid on spec.schedule (the operator's own path) of group test.operators.coreos.com.
func validate(req *admissionRequest, obj *webhookTestV1) *admissionResponse {
	if v, _ := obj.Spec["valid"].(bool); v {
		return &admissionResponse{Allowed: true}
	}
	msg := fmt.Sprintf(`WebhookTest.test.operators.coreos.com %q is invalid: spec.schedule: Invalid value: false: Spec.Valid must be true`, obj.Metadata.Name)
	return &admissionResponse{Allowed: false, Result: &status{Status: "Failure", Message: msg, Reason: "Invalid", Code: 422}}
}

type conversionReview struct {
	APIVersion string              `json:"apiVersion"`
	Kind       string              `json:"kind"`
	Request    *conversionRequest  `json:"request,omitempty"`
	Response   *conversionResponse `json:"response,omitempty"`
}

type conversionRequest struct {
	UID               string           `json:"uid"`
	DesiredAPIVersion string           `json:"desiredAPIVersion"`
	Objects           []map[string]any `json:"objects"`
}

type conversionResponse struct {
	UID              string           `json:"uid"`
	ConvertedObjects []map[string]any `json:"convertedObjects"`
	Result           status           `json:"result"`
}

// convert: v1's spec {valid, mutate} is v2's spec.conversion {valid, mutate}; metadata as it is.
func convert(w http.ResponseWriter, r *http.Request) {
	var review conversionReview
	if err := json.NewDecoder(io.LimitReader(r.Body, 3<<20)).Decode(&review); err != nil || review.Request == nil {
		http.Error(w, fmt.Sprintf("not a ConversionReview: %v", err), http.StatusBadRequest)
		return
	}
	resp := &conversionResponse{UID: review.Request.UID, Result: status{Status: "Success"}}
	for _, obj := range review.Request.Objects {
		out, err := convertOne(obj, review.Request.DesiredAPIVersion)
		if err != nil {
			resp.ConvertedObjects, resp.Result = nil, status{Status: "Failure", Message: err.Error()}
			break
		}
		resp.ConvertedObjects = append(resp.ConvertedObjects, out)
	}
	writeJSON(w, conversionReview{APIVersion: review.APIVersion, Kind: review.Kind, Response: resp})
}

func convertOne(obj map[string]any, to string) (map[string]any, error) {
	from, _ := obj["apiVersion"].(string)
	if from == to {
		return obj, nil
	}
	spec, _ := obj["spec"].(map[string]any)
	var valid, mutated bool
	switch from {
	case group + "/v1":
		valid, _ = spec["valid"].(bool)
		mutated, _ = spec["mutate"].(bool)
	case group + "/v2":
		c, _ := spec["conversion"].(map[string]any)
		valid, _ = c["valid"].(bool)
		mutated, _ = c["mutate"].(bool)
	default:
		return nil, fmt.Errorf("cannot convert from %q", from)
	}
	fields := map[string]any{"valid": valid}
	if mutated {
		fields["mutate"] = true // omitempty, as the operator's types
	}
	out := map[string]any{"apiVersion": to, "kind": obj["kind"], "metadata": obj["metadata"]}
	if st, ok := obj["status"]; ok {
		out["status"] = st // both versions' status is the same
	}
	switch to {
	case group + "/v1":
		out["spec"] = fields
	case group + "/v2":
		out["spec"] = map[string]any{"conversion": fields}
	default:
		return nil, fmt.Errorf("cannot convert to %q", to)
	}
	return out, nil
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(v); err != nil {
		log.Printf("writing the answer: %v", err)
	}
}
