package testenv

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/registry"
	"helm.sh/helm/v3/pkg/repo"
	"sigs.k8s.io/yaml"
)

// Chart packages a Helm chart name-version whose templates are the given
// files (name → content, below templates/) and whose values.yaml is
// values, and returns the archive (.tgz).
func Chart(t testing.TB, name, version string, templates map[string]string, values map[string]any) []byte {
	t.Helper()
	ch := &chart.Chart{Metadata: &chart.Metadata{APIVersion: chart.APIVersionV2, Name: name, Version: version, Type: "application"}, Values: values}
	for file, content := range templates {
		ch.Templates = append(ch.Templates, &chart.File{Name: "templates/" + file, Data: []byte(content)})
	}
	if raw, err := yaml.Marshal(values); err == nil {
		ch.Raw = append(ch.Raw, &chart.File{Name: chartutil.ValuesfileName, Data: raw})
	}
	path, err := chartutil.Save(ch, t.TempDir())
	if err != nil {
		t.Fatalf("package chart %s: %v", name, err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// ServeChartRepo serves an HTTP chart repository (index.yaml and the
// archives) holding archives, each made by Chart, until t ends, and
// returns its URL.
func ServeChartRepo(t testing.TB, archives ...[]byte) string {
	t.Helper()
	dir := t.TempDir()
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	index := repo.NewIndexFile()
	for _, a := range archives {
		md, err := chartMetadata(a)
		if err != nil {
			t.Fatal(err)
		}
		file := fmt.Sprintf("%s-%s.tgz", md.Name, md.Version)
		if err := os.WriteFile(filepath.Join(dir, file), a, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := index.MustAdd(md, file, srv.URL, ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := index.WriteFile(filepath.Join(dir, "index.yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
	return srv.URL
}

// PushChart pushes archive (made by Chart) as an OCI artifact to the
// registry at host (host:port, plain HTTP) under repository path (e.g.
// "charts"), as `helm push ARCHIVE oci://HOST/PATH --plain-http` does, and
// returns the registry path, "oci://HOST/PATH".
func PushChart(t testing.TB, host, path string, archive []byte) string {
	t.Helper()
	md, err := chartMetadata(archive)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := registry.NewClient(registry.ClientOptPlainHTTP())
	if err != nil {
		t.Fatal(err)
	}
	ref := fmt.Sprintf("%s/%s/%s:%s", host, path, md.Name, md.Version)
	if _, err := rc.Push(archive, ref); err != nil {
		t.Fatalf("push chart %s: %v", ref, err)
	}
	return "oci://" + host + "/" + path
}

// chartMetadata reads Chart.yaml of archive.
func chartMetadata(archive []byte) (*chart.Metadata, error) {
	ch, err := loader.LoadArchive(bytes.NewReader(archive))
	if err != nil {
		return nil, err
	}
	return ch.Metadata, nil
}
