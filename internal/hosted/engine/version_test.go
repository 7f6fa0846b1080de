package engine

import (
	"strings"
	"testing"
)

func TestNextVersion(t *testing.T) {
	for _, tt := range []struct {
		current, desired, want, err string
	}{
		{"1.30", "1.30", "", ""},
		{"1.30", "1.31", "1.31", ""},
		{"1.29", "1.32", "1.30", ""}, // one minor per step
		{"v1.31.4", "1.32", "1.32", ""},
		{"1.31.2", "1.31", "", ""},         // a minor matches its patches
		{"1.31.2", "1.31.5", "1.31.5", ""}, // a patch upgrade
		{"1.31.2", "1.32.1", "1.32.1", ""}, // the next minor, with its patch
		{"1.30.9", "1.32.1", "1.31", ""},   // one minor per step
		{"1.31.5", "1.31.2", "", "cannot downgrade"},
		{"1.32", "1.31", "", "Cloud cannot downgrade a cluster; set kubernetesVersion to 1.32 or later"},
		{"1.31", "2.0", "", "major version"},
		{"1.x", "1.31", "", `"1.x"`},
		{"1.31", "latest", "", `"latest"`},
		{"1.31.2.1", "1.31", "", `"1.31.2.1"`},
	} {
		got, err := NextVersion("Cloud", tt.current, tt.desired)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("NextVersion(%s, %s) error = %v, want one containing %q", tt.current, tt.desired, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("NextVersion(%s, %s) = %q, %v; want %q", tt.current, tt.desired, got, err, tt.want)
		}
	}
}
