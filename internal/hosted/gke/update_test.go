package gke

import (
	"strings"
	"testing"
)

func TestNextVersion(t *testing.T) {
	for _, tt := range []struct{ current, desired, want, err string }{
		{"1.31.5-gke.1000", "1.32", "1.32", ""},
		{"1.31.5-gke.1000", "1.33", "1.32", ""},
		{"1.31.5-gke.1000", "1.31", "", ""},
		{"1.31.5-gke.1000", "1.31.5-gke.1200", "1.31.5-gke.1200", ""},
		{"1.31.5-gke.1000", "1.32.1-gke.5", "1.32.1-gke.5", ""},
		{"1.31.5-gke.1000", "1.30", "", "GKE cannot downgrade"},
	} {
		got, err := nextVersion(tt.current, tt.desired)
		if got != tt.want || (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("nextVersion(%q, %q) = %q, %v; want %q, an error containing %q", tt.current, tt.desired, got, err, tt.want, tt.err)
		}
	}
}
