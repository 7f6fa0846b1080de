package runner

import (
	"strings"
	"testing"

	"github.com/clustersync/clustersync/internal/virtual/syncer"
)

func TestKubeletEndpoint(t *testing.T) {
	tests := []struct {
		addr    string
		want    syncer.KubeletEndpoint
		wantErr string
	}{
		{addr: "127.0.0.1:10250", want: syncer.KubeletEndpoint{IP: "127.0.0.1", Port: 10250}},
		{addr: ":10250", want: syncer.KubeletEndpoint{IP: "127.0.0.1", Port: 10250}},
		{addr: "0.0.0.0:10251", want: syncer.KubeletEndpoint{IP: "127.0.0.1", Port: 10251}},
		{addr: "10.244.0.5:10250", want: syncer.KubeletEndpoint{IP: "10.244.0.5", Port: 10250}},
		{addr: "localhost:10250", wantErr: "want an IP"},
		{addr: "127.0.0.1", wantErr: "missing port"},
		{addr: "127.0.0.1:0", wantErr: "port must be 1 to 65535"},
		{addr: "127.0.0.1:70000", wantErr: "port must be 1 to 65535"},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			got, err := KubeletOptions{Addr: tt.addr}.endpoint()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), tt.addr) {
					t.Fatalf("error %v, want one naming %q and saying %q", err, tt.addr, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("endpoint() = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestKubeletTenantAddr(t *testing.T) {
	for addr, want := range map[string]string{"127.0.0.1:10250": ":10250", "10.244.0.5:10251": ":10251", ":10250": ":10250"} {
		if got := (KubeletOptions{Addr: addr}).tenantAddr(); got != want {
			t.Errorf("tenantAddr(%s) = %s, want %s", addr, got, want)
		}
	}
}
