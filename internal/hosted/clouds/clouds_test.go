package clouds

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
)

// Every row is complete, and its names are unique and derived as the
// consumers expect.
func TestTable(t *testing.T) {
	seen := map[string]bool{}
	for _, d := range All() {
		for what, v := range map[string]string{"Name": d.Name, "Key": d.Key, "ConfigField": d.ConfigField, "Product": d.Product,
			"Endpoint": d.Endpoint, "Credentials": d.Credentials, "PollWhat": d.PollWhat} {
			if v == "" {
				t.Errorf("%s: %s is empty", d.Name, what)
			}
		}
		if d.AddToScheme == nil || d.Register == nil || d.View == nil {
			t.Errorf("%s: AddToScheme, Register and View are required", d.Name)
		}
		if d.Key != strings.ToLower(d.Name) || d.ConfigField != d.Key+"Config" {
			t.Errorf("%s: key %q, config field %q; want %q and %q", d.Name, d.Key, d.ConfigField, strings.ToLower(d.Name), strings.ToLower(d.Name)+"Config")
		}
		if seen[d.Key] {
			t.Errorf("%s: key %q twice", d.Name, d.Key)
		}
		seen[d.Key] = true
		if got, ok := ByKey(d.Key); !ok || got.Name != d.Name {
			t.Errorf("ByKey(%q) = %s, %v", d.Key, got.Name, ok)
		}
	}
	if _, ok := ByKey("nope"); ok {
		t.Error(`ByKey("nope") found a cloud`)
	}
}

// The scheme knows every cloud's operator object, and a Cluster is seen
// through the cloud its config is of, and only that one.
func TestSchemeAndHosted(t *testing.T) {
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	for _, d := range All() {
		if !s.Recognizes(schemaGVK(d.Key)) {
			t.Errorf("%s: the scheme lacks %s", d.Name, schemaGVK(d.Key))
		}
	}
	if _, ok := Hosted(&mgmtv1.Cluster{}); ok {
		t.Error("a Cluster of no cloud is seen as hosted")
	}
	for _, c := range []*mgmtv1.Cluster{
		{Spec: mgmtv1.ClusterSpec{EKSConfig: emptyEKS()}},
		{Spec: mgmtv1.ClusterSpec{AKSConfig: emptyAKS()}},
		{Spec: mgmtv1.ClusterSpec{GKEConfig: emptyGKE()}},
	} {
		v, ok := Hosted(c)
		if !ok {
			t.Errorf("%+v not seen as hosted", c.Spec)
			continue
		}
		var matches []string
		for _, d := range All() {
			if _, ok := d.View(c); ok {
				matches = append(matches, d.Name)
			}
		}
		if len(matches) != 1 || matches[0] != v.Driver() {
			t.Errorf("driver %s, clouds that see it %v", v.Driver(), matches)
		}
	}
}

// Outside a cloud's own folders (internal/hosted/<cloud>, api/<cloud>),
// the Cluster API types, test helpers, the per-cloud emulator commands
// and the benches, only this table imports a cloud's packages.
func TestOnlyTheTableImportsClouds(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	var cloudPkgs, allowed []string
	for _, d := range All() {
		cloudPkgs = append(cloudPkgs, "internal/hosted/"+d.Key+"/", "api/"+d.Key+"/")
		allowed = append(allowed, "internal/hosted/"+d.Key+"/", "api/"+d.Key+"/", "cmd/clustersync/dev"+d.Key+".go")
	}
	allowed = append(allowed, "internal/hosted/clouds/", "api/management/", "internal/hosted/hostedtest/", "test/bench/")
	var offenders []string
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if e.IsDir() {
			if rel != "." && (strings.HasPrefix(e.Name(), ".") || e.Name() == "bin" || e.Name() == "node_modules" || rel == "hack/tools") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || slices.ContainsFunc(allowed, func(a string) bool { return strings.HasPrefix(rel, a) }) {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			p = strings.TrimPrefix(p, "github.com/clustersync/clustersync/")
			for _, c := range cloudPkgs {
				if strings.HasPrefix(p+"/", c) {
					offenders = append(offenders, rel+" imports "+p)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(offenders) > 0 {
		t.Errorf("outside the table, files import a cloud's packages (range over clouds.All instead):\n  %s", strings.Join(offenders, "\n  "))
	}
}

// The manager chart's values and flags of the clouds are the table's (go
// generate ran).
func TestChartIsGenerated(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "charts", "manager")
	values, err := os.ReadFile(filepath.Join(dir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if want, err := ReplaceValues(string(values)); err != nil || want != string(values) {
		t.Errorf("charts/manager/values.yaml's clouds block is not the table's (%v): run go generate ./internal/hosted/clouds", err)
	}
	args, err := os.ReadFile(filepath.Join(dir, "templates", "_clouds.tpl"))
	if err != nil {
		t.Fatal(err)
	}
	if string(args) != ChartArgs() {
		t.Error("charts/manager/templates/_clouds.tpl is not the table's: run go generate ./internal/hosted/clouds")
	}
	if _, err := ReplaceValues("no markers"); err == nil {
		t.Error("ReplaceValues without markers: no error")
	}
}
