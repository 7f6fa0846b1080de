package eks

import (
	"strings"
	"testing"
)

func TestNextVersion(t *testing.T) {
	tests := []struct {
		current, desired, want, err string
	}{
		{"1.30", "1.30", "", ""},
		{"1.30", "1.31", "1.31", ""},
		{"1.29", "1.32", "1.30", ""}, // one minor per step
		{"v1.31.4", "1.32", "1.32", ""},
		{"1.32", "1.31", "", "cannot downgrade"},
		{"1.31", "2.0", "", "major version"},
		{"1.x", "1.31", "", `"1.x"`},
		{"1.31", "latest", "", `"latest"`},
	}
	for _, tt := range tests {
		got, err := NextVersion(tt.current, tt.desired)
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
