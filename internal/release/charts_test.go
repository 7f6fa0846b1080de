package release

import (
	"bytes"
	"slices"
	"testing"

	"github.com/clustersync/clustersync/internal/testenv/ocitest"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/registry"
)

// The release's charts carry its version, and reach an OCI registry where
// Helm finds them by that version: pulled back, each deploys the
// release's images.
func TestCharts(t *testing.T) {
	out := t.TempDir()
	files, err := Charts(out, "v0.2.0")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"manager-0.2.0.tgz", "virtual-cluster-0.2.0.tgz"}; !slices.Equal(files, want) {
		t.Fatalf("packaged %v, want %v", files, want)
	}
	repo := ocitest.Registry(t) + "/clustersync"
	refs, err := PushCharts(out, files, repo, true)
	if err != nil {
		t.Fatal(err)
	}
	client, err := registry.NewClient(registry.ClientOptPlainHTTP())
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range ChartNames() {
		if refs[i] != repo+"/charts/"+name+":0.2.0" {
			t.Errorf("pushed %s, want %s", refs[i], repo+"/charts/"+name+":0.2.0")
		}
		tags, err := client.Tags(repo + "/charts/" + name)
		if err != nil || !slices.Equal(tags, []string{"0.2.0"}) {
			t.Errorf("%s tags %v, %v", name, tags, err)
		}
		pulled, err := client.Pull(refs[i], registry.PullOptWithChart(true))
		if err != nil {
			t.Fatal(err)
		}
		c, err := loader.LoadArchive(bytes.NewReader(pulled.Chart.Data))
		if err != nil {
			t.Fatal(err)
		}
		if c.Metadata.Version != "0.2.0" || c.Metadata.AppVersion != "v0.2.0" {
			t.Errorf("%s pulled: version %s appVersion %s", name, c.Metadata.Version, c.Metadata.AppVersion)
		}
	}
	if _, err := Charts(out, "dev"); err == nil {
		t.Error("charts of a development build were packaged")
	}
}
