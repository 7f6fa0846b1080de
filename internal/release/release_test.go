package release

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/clustersync/clustersync/internal/images"
)

// The SBOM of a Go binary lists the modules it was built with, each with
// its package URL and go.sum hash, under the binary at the release's
// version; it carries nothing that changes between two runs.
func TestSBOM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go code")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(t.TempDir(), "clustersync")
	if err := images.GoBuildFor(context.Background(), root, "./cmd/clustersync", exe, runtime.GOOS, runtime.GOARCH, ""); err != nil {
		t.Fatal(err)
	}
	out, err := SBOM(exe, "v0.2.0")
	if err != nil {
		t.Fatal(err)
	}
	var bom struct {
		BOMFormat, SpecVersion, SerialNumber string
		Metadata                             struct {
			Timestamp string
			Component struct{ Name, Version, Purl string }
		}
		Components []struct {
			Name, Version, Purl string
			Properties          []struct{ Name, Value string }
		}
	}
	if err := json.Unmarshal(out, &bom); err != nil {
		t.Fatal(err)
	}
	if bom.BOMFormat != "CycloneDX" || bom.SpecVersion != "1.6" || bom.SerialNumber != "" || bom.Metadata.Timestamp != "" {
		t.Errorf("format %s %s, serial %q, timestamp %q", bom.BOMFormat, bom.SpecVersion, bom.SerialNumber, bom.Metadata.Timestamp)
	}
	if m := bom.Metadata.Component; m.Version != "v0.2.0" || !strings.HasSuffix(m.Purl, "@v0.2.0") {
		t.Errorf("main component %+v", m)
	}
	// What go.mod and go.sum say of a module clustersync is built with.
	mod, err := exec.Command("go", "list", "-m", "-json", "github.com/CycloneDX/cyclonedx-go").Output()
	if err != nil {
		t.Fatal(err)
	}
	var want struct{ Path, Version, GoModSum string }
	if err := json.Unmarshal(mod, &want); err != nil {
		t.Fatal(err)
	}
	sums, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	var sum string
	for _, line := range strings.Split(string(sums), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == want.Path && f[1] == want.Version {
			sum = f[2]
		}
	}
	found := false
	for _, c := range bom.Components {
		if c.Name == want.Path {
			found = c.Version == want.Version && c.Purl == "pkg:golang/"+want.Path+"@"+want.Version &&
				len(c.Properties) == 1 && c.Properties[0].Value == sum
		}
	}
	if want.Path == "" || !found {
		t.Errorf("the SBOM lacks %+v:\n%s", want, out)
	}
	again, _ := SBOM(exe, "v0.2.0")
	if !bytes.Equal(out, again) {
		t.Error("two SBOMs of one binary differ")
	}
	if _, err := SBOM(filepath.Join(t.TempDir(), "none"), "v0.2.0"); err == nil || !strings.Contains(err.Error(), "none") {
		t.Errorf("SBOM of a missing file: %v", err)
	}
}

// The checksums file is sha256sum's format, in name order.
func TestChecksums(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{"b": "two", "a": "one"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	got, err := Checksums(dir, []string{"b", "a"})
	if want := sum("one") + "  a\n" + sum("two") + "  b\n"; err != nil || string(got) != want {
		t.Errorf("Checksums = %q, %v; want %q", got, err, want)
	}
	if _, err := Checksums(dir, []string{"c"}); err == nil || !strings.Contains(err.Error(), "c") {
		t.Errorf("a missing file: %v", err)
	}
}

// Two builds of one package for another architecture are byte-identical
// and hold that architecture's executable (ELF machine).
func TestReproducibleCrossBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go code")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var bins [][]byte
	for range 2 {
		out := filepath.Join(t.TempDir(), "pause")
		if err := images.GoBuildFor(context.Background(), root, "./internal/images/pause", out, "linux", "arm64", ""); err != nil {
			t.Fatal(err)
		}
		if err := images.RequireStatic(out, "arm64"); err != nil {
			t.Error(err)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		bins = append(bins, b)
	}
	if !bytes.Equal(bins[0], bins[1]) {
		t.Error("two builds of one package differ")
	}
}

// A development version is not released.
func TestBinariesRefuseDev(t *testing.T) {
	if _, err := Binaries(context.Background(), Options{Version: "dev", Commit: "abc", Out: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "VERSION=") {
		t.Errorf("err = %v", err)
	}
}

func TestParsePlatforms(t *testing.T) {
	for _, tc := range []struct {
		in, err string
		want    []Platform
		arches  []string
	}{
		{in: "", want: Platforms(), arches: []string{"amd64", "arm64"}},
		{in: "linux/amd64", want: []Platform{{"linux", "amd64"}}, arches: []string{"amd64"}},
		{in: "darwin/arm64, linux/arm64", want: []Platform{{"darwin", "arm64"}, {"linux", "arm64"}}, arches: []string{"arm64"}},
		{in: "darwin/amd64", want: []Platform{{"darwin", "amd64"}}},
		{in: "linux/amd64,windows/amd64", err: `platform "windows/amd64"`},
	} {
		got, err := ParsePlatforms(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParsePlatforms(%q): %v, want %s", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) || !slices.Equal(ImageArches(got), tc.arches) {
			t.Errorf("ParsePlatforms(%q) = %v, %v (arches %v), want %v (arches %v)", tc.in, got, err, ImageArches(got), tc.want, tc.arches)
		}
	}
}
