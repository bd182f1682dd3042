// Helm 4 reads the release records Binnacle writes. testdata/ holds revision record Secrets as
// Binnacle's encoder writes them (make-fixtures.ts); this test hands them to Helm 4's own Secrets
// storage driver and runs the actions behind `helm list`, `helm history`, `helm get values|manifest|
// hooks|notes` and `helm status`, as the helm CLI of the same module does.
//
// usage: cd test/helm-records && go test ./...
package records

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"helm.sh/helm/v4/pkg/action"
	kubefake "helm.sh/helm/v4/pkg/kube/fake"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
)

// secrets answers the two calls Helm's Secrets driver reads with: Get and List (by label selector).
type secrets struct {
	typedcorev1.SecretInterface // nil: any other call panics
	items                       []corev1.Secret
}

func (s *secrets) Get(_ context.Context, name string, _ metav1.GetOptions) (*corev1.Secret, error) {
	for i := range s.items {
		if s.items[i].Name == name {
			return &s.items[i], nil
		}
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
}

func (s *secrets) List(_ context.Context, opts metav1.ListOptions) (*corev1.SecretList, error) {
	sel, err := labels.Parse(opts.LabelSelector)
	if err != nil {
		return nil, err
	}
	list := &corev1.SecretList{}
	for _, it := range s.items {
		if sel.Matches(labels.Set(it.Labels)) {
			list.Items = append(list.Items, it)
		}
	}
	return list, nil
}

func config(t *testing.T) *action.Configuration {
	t.Helper()
	files, err := filepath.Glob("testdata/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no records in testdata (run make-fixtures.ts): %v", err)
	}
	impl := &secrets{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var s corev1.Secret
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		impl.items = append(impl.items, s)
	}
	d := driver.NewSecrets(impl)
	cfg := action.NewConfiguration()
	cfg.Releases = storage.Init(d)
	cfg.KubeClient = &kubefake.PrintingKubeClient{Out: io.Discard}
	return cfg
}

func v1(t *testing.T, r any) *release.Release {
	t.Helper()
	rel, ok := r.(*release.Release)
	if !ok {
		t.Fatalf("not a v1 release: %T", r)
	}
	return rel
}

func TestList(t *testing.T) {
	l := action.NewList(config(t))
	l.SetStateMask()
	got, err := l.Run()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range got {
		rel := v1(t, r)
		names = append(names, rel.Name+"/"+rel.Chart.Metadata.Name+"-"+rel.Chart.Metadata.Version+"/"+string(rel.Info.Status))
	}
	want := []string{"op/op-bundle-1.2.3/deployed", "pg/prometheus-pushgateway-3.8.0/deployed"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("helm list: %v, want %v", names, want)
	}
}

func TestHistory(t *testing.T) {
	got, err := action.NewHistory(config(t)).Run("pg")
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, r := range got {
		rel := v1(t, r)
		rows = append(rows, strings.Join([]string{rel.Name, string(rel.Info.Status), rel.Info.Description, rel.Info.LastDeployed.UTC().Format("15:04")}, " "))
	}
	want := []string{"pg superseded Install complete 10:00", "pg deployed Upgrade complete 11:00"}
	if !reflect.DeepEqual(rows, want) {
		t.Fatalf("helm history: %v, want %v", rows, want)
	}
	for _, r := range got {
		if rel := v1(t, r); !rel.Info.Deleted.IsZero() {
			t.Fatalf("revision %d: deleted %v, want none (Binnacle writes \"\")", rel.Version, rel.Info.Deleted)
		}
	}
}

func TestGet(t *testing.T) {
	cfg := config(t)
	r, err := action.NewGet(cfg).Run("pg")
	if err != nil {
		t.Fatal(err)
	}
	rel := v1(t, r)
	if rel.Version != 2 || !strings.Contains(rel.Manifest, "kind: Deployment") || rel.Chart == nil || len(rel.Chart.Templates) == 0 {
		t.Fatalf("helm get manifest: revision %d, manifest %d bytes, chart %v", rel.Version, len(rel.Manifest), rel.Chart != nil)
	}
	vals, err := action.NewGetValues(cfg).Run("pg")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := json.Marshal(vals); string(got) != `{"replicaCount":2}` {
		t.Fatalf("helm get values: %s", got)
	}
	all := action.NewGetValues(cfg)
	all.AllValues = true
	if vals, err = all.Run("pg"); err != nil || vals["replicaCount"] != float64(2) {
		t.Fatalf("helm get values --all: %v, %v", vals["replicaCount"], err)
	}
	old := action.NewGet(cfg)
	old.Version = 1
	if r, err = old.Run("pg"); err != nil || v1(t, r).Info.Status != rcommon.StatusSuperseded {
		t.Fatalf("helm get --revision 1: %v", err)
	}
	b, err := action.NewGet(cfg).Run("op")
	if err != nil || !strings.Contains(v1(t, b).Manifest, "kind: ConfigMap") {
		t.Fatalf("helm get manifest op: %v", err)
	}
}

func TestStatus(t *testing.T) {
	r, err := action.NewStatus(config(t)).Run("pg")
	if err != nil {
		t.Fatal(err)
	}
	rel := v1(t, r)
	if rel.Info.Status != rcommon.StatusDeployed || rel.Version != 2 || rel.Namespace != "team-a" {
		t.Fatalf("helm status: %s revision %d in %s", rel.Info.Status, rel.Version, rel.Namespace)
	}
	if _, err := json.Marshal(rel); err != nil {
		t.Fatalf("helm status -o json: %v", err)
	}
}
