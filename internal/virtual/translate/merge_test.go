package translate

import (
	"maps"
	"testing"
)

func TestMerge3(t *testing.T) {
	type m = map[string]string
	tests := []struct {
		name        string
		base        *Pair
		cur         Pair
		managed     map[string]bool
		wantVirtual m
		wantHost    m
	}{
		{
			name:        "first sync copies virtual keys to host, keeps host-only keys",
			cur:         Pair{Virtual: m{"a": "1"}, Host: m{"host.io/x": "h"}},
			wantVirtual: m{"a": "1"},
			wantHost:    m{"a": "1", "host.io/x": "h"},
		},
		{
			name:        "no base: key once copied from virtual and gone there is removed from host",
			cur:         Pair{Virtual: m{}, Host: m{"a": "1", "host.io/x": "h"}},
			managed:     map[string]bool{"a": true},
			wantVirtual: m{},
			wantHost:    m{"host.io/x": "h"},
		},
		{
			name:        "virtual change flows to host",
			base:        &Pair{Virtual: m{"a": "1"}, Host: m{"a": "1"}},
			cur:         Pair{Virtual: m{"a": "2"}, Host: m{"a": "1"}},
			wantVirtual: m{"a": "2"},
			wantHost:    m{"a": "2"},
		},
		{
			name:        "virtual delete flows to host",
			base:        &Pair{Virtual: m{"a": "1"}, Host: m{"a": "1"}},
			cur:         Pair{Virtual: m{}, Host: m{"a": "1"}},
			wantVirtual: m{},
			wantHost:    m{},
		},
		{
			name:        "host change flows to virtual",
			base:        &Pair{Virtual: m{"a": "1"}, Host: m{"a": "1"}},
			cur:         Pair{Virtual: m{"a": "1"}, Host: m{"a": "9", "new": "n"}},
			wantVirtual: m{"a": "9", "new": "n"},
			wantHost:    m{"a": "9", "new": "n"},
		},
		{
			name:        "host delete flows to virtual",
			base:        &Pair{Virtual: m{"a": "1", "b": "2"}, Host: m{"a": "1", "b": "2"}},
			cur:         Pair{Virtual: m{"a": "1", "b": "2"}, Host: m{"a": "1"}},
			wantVirtual: m{"a": "1"},
			wantHost:    m{"a": "1"},
		},
		{
			name:        "conflict: virtual wins",
			base:        &Pair{Virtual: m{"a": "1"}, Host: m{"a": "1"}},
			cur:         Pair{Virtual: m{"a": "v"}, Host: m{"a": "h"}},
			wantVirtual: m{"a": "v"},
			wantHost:    m{"a": "v"},
		},
		{
			name:        "unchanged host-only key survives",
			base:        &Pair{Virtual: m{"a": "1"}, Host: m{"a": "1", "host.io/x": "h"}},
			cur:         Pair{Virtual: m{"a": "1"}, Host: m{"a": "1", "host.io/x": "h"}},
			wantVirtual: m{"a": "1"},
			wantHost:    m{"a": "1", "host.io/x": "h"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := Pair{Virtual: maps.Clone(tt.cur.Virtual), Host: maps.Clone(tt.cur.Host)}
			got := Merge3(tt.base, tt.cur, tt.managed)
			if !maps.Equal(got.Virtual, tt.wantVirtual) {
				t.Errorf("virtual = %v, want %v", got.Virtual, tt.wantVirtual)
			}
			if !maps.Equal(got.Host, tt.wantHost) {
				t.Errorf("host = %v, want %v", got.Host, tt.wantHost)
			}
			if !maps.Equal(before.Virtual, tt.cur.Virtual) || !maps.Equal(before.Host, tt.cur.Host) {
				t.Error("Merge3 modified its input")
			}
		})
	}
}
