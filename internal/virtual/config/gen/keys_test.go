package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clustersync/clustersync/internal/virtual/config"
)

// docs/configuration.md's key table is the one the Go types, their
// defaults and runner's tables give now (go generate ran).
func TestDocsKeysAreGenerated(t *testing.T) {
	schema := schemaOfConfig(t)
	docsPath := filepath.Join("..", "..", "..", "docs", "configuration.md")
	got, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatal(err)
	}
	want, err := docsWithKeys(schema, string(got))
	if err != nil {
		t.Fatalf("%s: %v", docsPath, err)
	}
	if string(got) != want {
		t.Errorf("the key table of %s is stale: run go generate ./internal/virtual/config", docsPath)
	}
}

// schemaOfConfig returns config.Schema's output, from the package's
// folder (AddGoComments names packages after the folder it is given), which
// becomes the test's working directory.
func schemaOfConfig(t *testing.T) []byte {
	t.Helper()
	t.Chdir("..")
	schema, err := config.Schema(".")
	if err != nil {
		t.Fatal(err)
	}
	return schema
}

// rowsByKey returns the rows of w by their first key.
func rowsByKey(w *keyWalker) map[string]*keyRow {
	rows := map[string]*keyRow{}
	for _, g := range w.groups {
		for _, r := range g.rows {
			rows[r.keys[0]] = r
		}
	}
	return rows
}

func TestKeyStatuses(t *testing.T) {
	w, err := walkKeys(schemaOfConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	// The alias spelling of runner's messages, a map of kinds as a whole
	// and an ignored key.
	err = w.setStatuses([]string{"sync.toHost.pods.patches (translate)", "sync.fromHost.customResources"},
		[]string{"sync.toHost.endpointSlices.enabled"})
	if err != nil {
		t.Fatal(err)
	}
	rows := rowsByKey(w)
	for key, want := range map[string]string{
		"sync.toHost.pods.translate":                             statusUnsupported,
		"sync.toHost.secrets.translate":                          statusHonoured,
		"sync.fromHost.customResources.<plural>.<group>.enabled": statusUnsupported,
		"sync.toHost.customResources.<plural>.<group>.enabled":   statusHonoured,
		"sync.toHost.endpointSlices.enabled":                     statusNoEffect,
		"sync.toHost.pods.enabled":                               statusHonoured,
		"networking.serviceCIDR":                                 statusNoEffect,
		"networking.advanced.clusterDomain":                      statusHonoured,
		"exportKubeConfig.context":                               statusHonoured,
		"controlPlane.backingStore.database":                     statusNoEffect,
		"syncer.workers":                                         statusHonoured,
	} {
		r, ok := rows[key]
		if !ok {
			t.Errorf("no row %s", key)
			continue
		}
		if r.status != want {
			t.Errorf("%s: status %q, want %q", key, r.status, want)
		}
	}
	// Some lists of patches are refused, others not.
	if got := w.items[0].status; got != "as the list's" {
		t.Errorf("patch item status %q", got)
	}
}

func TestKeyStatusesUnknownPath(t *testing.T) {
	w, err := walkKeys(schemaOfConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	err = w.setStatuses([]string{"sync.toHost.podz.enabled"}, []string{"sync.toHost.pods"})
	if err == nil || !strings.Contains(err.Error(), `"sync.toHost.podz.enabled" matches no key`) {
		t.Errorf("error %v, want one naming sync.toHost.podz.enabled", err)
	}
}

func TestKeyRows(t *testing.T) {
	w, err := walkKeys(schemaOfConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	rows := rowsByKey(w)
	for _, tt := range []struct{ key, typ, def, desc string }{
		{"sync.toHost.pods.rewriteHosts.initContainer.image", "string or {registry, repository, tag}", "`\"ghcr.io/clustersync/busybox:1.35.0\"`",
			"Image is the image of the init container: a string, or an object {registry, repository, tag} as current vCluster writes it."},
		{"sync.toHost.pods.translateImage", "map of strings", none, ""},
		{"controlPlane.statefulSet.persistence.volumeClaim.size", "quantity", "`\"5Gi\"`", `Size is the claim's requested storage, e.g. "5Gi".`},
		{"controlPlane.statefulSet.resources.requests", "map of quantities", "`{\"cpu\":\"200m\",\"memory\":\"256Mi\"}`", ""},
		{"sync.fromHost.csiNodes.enabled", `true/false/"auto"`, "`\"auto\"`", ""},
		{"syncer.hostQPS", "number", "`1000`", ""},
		// The `enabled` of a shared switch type says what its parent says.
		{"sync.toHost.secrets.enabled", "boolean", "`true`",
			"Secrets defines if secrets created within the virtual cluster are synced to the host cluster."},
		{"sync.toHost.customResources.<plural>.<group>.translate", "list of patches", none, ""},
	} {
		r, ok := rows[tt.key]
		if !ok {
			t.Errorf("no row %s", tt.key)
			continue
		}
		if r.typ != tt.typ || r.def != tt.def || (tt.desc != "" && r.desc != tt.desc) {
			t.Errorf("%s: type %q, default %q, description %q; want %q, %q, %q", tt.key, r.typ, r.def, r.desc, tt.typ, tt.def, tt.desc)
		}
	}
	// A group of vCluster keys under one comment is one row.
	r := rows["controlPlane.hostPathMapper"]
	if r == nil || len(r.keys) != 3 || r.keys[1] != "controlPlane.endpoint" || r.keys[2] != "controlPlane.standalone" {
		t.Errorf("controlPlane's vCluster keys: %+v", r)
	}
	if _, ok := rows["controlPlane.endpoint"]; ok {
		t.Error("controlPlane.endpoint has a row of its own")
	}
}

func TestSpliceKeys(t *testing.T) {
	doc := "intro\n" + beginKeys + "\nold\ntable\n" + endKeys + "\nafter\n"
	got, err := spliceKeys(doc, "| new |\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := "intro\n" + beginKeys + "\n\n| new |\n\n" + endKeys + "\nafter\n"; got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	again, err := spliceKeys(got, "| new |\n")
	if err != nil || again != got {
		t.Errorf("splicing twice changed the file: %q, %v", again, err)
	}
	for name, doc := range map[string]string{
		"no markers":   "intro\n",
		"no end":       beginKeys + "\n",
		"out of order": endKeys + "\n" + beginKeys + "\n",
		"twice":        beginKeys + "\n" + endKeys + "\n" + beginKeys + "\n" + endKeys + "\n",
		"not alone":    "x " + beginKeys + "\n" + endKeys + "\n",
	} {
		if _, err := spliceKeys(doc, "t\n"); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestFirstSentence(t *testing.T) {
	for in, want := range map[string]string{
		"Path is a path. If the\npath is missing, nothing.": "Path is a path.",
		`Size is the size, e.g. "5Gi".`:                     `Size is the size, e.g. "5Gi".`,
		"No period":                                         "No period",
		"Ends with e.g. this. and lower. Then upper.":       "Ends with e.g. this. and lower.",
		"": "",
	} {
		if got := firstSentence(in); got != want {
			t.Errorf("firstSentence(%q) = %q, want %q", in, got, want)
		}
	}
}
