// Records what operator-controller v1.11 leaves in its system namespace for a ClusterExtension:
// helm-operator-plugins' chunked release Secrets (its storage driver, with operator-controller's
// owner and chunk size), for two revisions of one release. The JSON it prints is the fixture
// src/apply/testdata/olmv1-chunked-history.json (regenerate: go run . > that file).
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"sort"
	"strings"

	helmclient "github.com/operator-framework/helm-operator-plugins/pkg/client"
	"github.com/operator-framework/helm-operator-plugins/pkg/storage"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"time"

	helmtime "helm.sh/helm/v3/pkg/time"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

func main() {
	const ns = "olmv1-system"
	client := fake.NewSimpleClientset()
	// As operator-controller's ChunkedStorageDriverMapper: the ClusterExtension is the index Secrets' controller.
	ce := []metav1.OwnerReference{{APIVersion: "olm.operatorframework.io/v1", Kind: "ClusterExtension", Name: "argocd", UID: "ce-uid-argocd", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	secrets := helmclient.NewOwnerRefSecretClient(client.CoreV1().Secrets(ns), ce, func(s *corev1.Secret) bool { return s.Type == storage.SecretTypeChunkedIndex })
	// operator-controller's chunk size; a small one here too, so that one revision spans chunks.
	big := storage.NewChunkedSecrets(secrets, "operator-controller", storage.ChunkedSecretsConfig{ChunkSize: (1024 - 8) * 1024, MaxReadChunks: 11, MaxWriteChunks: 11})
	small := storage.NewChunkedSecrets(secrets, "operator-controller", storage.ChunkedSecretsConfig{ChunkSize: 512, MaxReadChunks: 11, MaxWriteChunks: 11})
	at := helmtime.Time{Time: mustTime("2026-11-30T10:00:00Z")}
	manifest := func(v string) string {
		return "---\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: argocd-operator-controller-manager\n  namespace: argocd\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: argocd-operator-controller-manager\n  namespace: argocd\nspec:\n  template:\n    spec:\n      containers:\n      - image: quay.io/argoprojlabs/argocd-operator:v" + v + "\n        name: manager\n" + padding()
	}
	rel := func(v int, status release.Status, bundle string) *release.Release {
		return &release.Release{
			Name:      "argocd",
			Namespace: "argocd",
			Version:   v,
			Info:      &release.Info{FirstDeployed: at, LastDeployed: at, Status: status, Description: "Install complete"},
			Chart:     &chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: "argocd-operator", Version: bundle}},
			Config:    map[string]interface{}{},
			Manifest:  manifest(bundle),
			Labels:    map[string]string{"olm.operatorframework.io/bundle-name": "argocd-operator.v" + bundle, "olm.operatorframework.io/package-name": "argocd-operator", "olm.operatorframework.io/bundle-version": bundle},
		}
	}
	must(big.Create("sh.helm.release.v1.argocd.v1", rel(1, release.StatusSuperseded, "0.1.0")))
	must(small.Create("sh.helm.release.v1.argocd.v2", rel(2, release.StatusDeployed, "0.2.0")))
	list, err := client.CoreV1().Secrets(ns).List(context.Background(), metav1.ListOptions{})
	must(err)
	items := list.Items
	sort.Slice(items, func(i, j int) bool { return items[i].Name < items[j].Name })
	out := []interface{}{}
	for _, s := range items {
		s.APIVersion, s.Kind = "v1", "Secret"
		s.Namespace = ns
		out = append(out, s)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	must(enc.Encode(out))
}

// Lines that do not compress, so that the second revision spans several chunks.
func padding() string {
	var b strings.Builder
	sum := sha256.Sum256([]byte("binnacle"))
	for i := 0; i < 60; i++ {
		sum = sha256.Sum256(sum[:])
		b.WriteString("# " + hex.EncodeToString(sum[:]) + "\n")
	}
	return b.String()
}

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	must(err)
	return t
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
