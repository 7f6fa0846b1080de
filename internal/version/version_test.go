package version

import "testing"

// A release's tags and chart version follow its version; a development
// build's are the ones `dev image` pushes.
func TestVersions(t *testing.T) {
	for _, tt := range []struct {
		v, tag, chart, str string
		released           bool
	}{
		{"v0.2.0", "v0.2.0", "0.2.0", "v0.2.0 (commit abc)", true},
		{"v1.0.0-rc.1", "v1.0.0-rc.1", "1.0.0-rc.1", "v1.0.0-rc.1 (commit abc)", true},
		{Dev, DevImageTag, "", "dev (commit abc)", false},
		{"", DevImageTag, "", " (commit abc)", false},
	} {
		if got := ImageTag(tt.v); got != tt.tag {
			t.Errorf("ImageTag(%q) = %q, want %q", tt.v, got, tt.tag)
		}
		if got := ChartVersion(tt.v); got != tt.chart {
			t.Errorf("ChartVersion(%q) = %q, want %q", tt.v, got, tt.chart)
		}
		if got := Released(tt.v); got != tt.released {
			t.Errorf("Released(%q) = %v", tt.v, got)
		}
		if got := String(tt.v, "abc"); got != tt.str {
			t.Errorf("String(%q) = %q, want %q", tt.v, got, tt.str)
		}
	}
	if String("v0.2.0", "") != "v0.2.0" {
		t.Error("String without a commit")
	}
	if Version() != Dev || Commit() != "" {
		t.Errorf("a test binary is a development build: %q %q", Version(), Commit())
	}
}

// LDFlags names this package's variables, the ones the linker sets.
func TestLDFlags(t *testing.T) {
	if got, want := LDFlags("v0.2.0", "abc"), "-X github.com/clustersync/clustersync/internal/version.version=v0.2.0 -X github.com/clustersync/clustersync/internal/version.commit=abc"; got != want {
		t.Errorf("LDFlags = %q, want %q", got, want)
	}
	if got := LDFlags("dev", ""); got != "-X "+Path+".version=dev" {
		t.Errorf("LDFlags without a commit = %q", got)
	}
}
