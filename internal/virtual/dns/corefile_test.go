package dns

import (
	"strings"
	"testing"
)

func TestCorefile(t *testing.T) {
	tests := []struct {
		name    string
		o       Options
		want    []string // lines the Corefile must hold
		wantErr string
	}{
		{
			name: "defaults",
			o:    Options{Kubeconfig: "/data/kubeconfig.yaml"},
			want: []string{".:1053 {", "health :8180", "ready :8181", "kubernetes cluster.local in-addr.arpa ip6.arpa {",
				"kubeconfig /data/kubeconfig.yaml", "pods insecure", "ttl 30", "prometheus :9153",
				"forward . /etc/resolv.conf", "cache 30 {", "disable success cluster.local", "disable denial cluster.local", "loop"},
		},
		{
			name: "domain, upstreams, ports and TTL",
			o: Options{Kubeconfig: "/k", ClusterDomain: "tenant.local", Upstream: []string{"10.0.0.10", "10.0.0.11:5353"},
				TTL: 5, Port: 5300, HealthPort: 1, ReadyPort: 2, MetricsPort: 3},
			want: []string{".:5300 {", "health :1", "ready :2", "prometheus :3", "kubernetes tenant.local in-addr.arpa ip6.arpa {",
				"forward . 10.0.0.10 10.0.0.11:5353", "ttl 5", "cache 5 {", "disable success tenant.local"},
		},
		{
			name: "fallback to the host's DNS",
			o:    Options{Kubeconfig: "/k", FallbackHostCluster: true},
			want: []string{"fallthrough cluster.local in-addr.arpa ip6.arpa", "forward . /etc/resolv.conf"},
		},
		{name: "no kubeconfig", o: Options{}, wantErr: `Kubeconfig ""`},
		{name: "a brace in the domain", o: Options{Kubeconfig: "/k", ClusterDomain: "x}"}, wantErr: `ClusterDomain "x}"`},
		{name: "a space in an upstream", o: Options{Kubeconfig: "/k", Upstream: []string{"1.1.1.1 evil"}}, wantErr: "Upstream[0]"},
		{name: "TTL too long", o: Options{Kubeconfig: "/k", TTL: 86400}, wantErr: "TTL 86400"},
		{name: "port out of range", o: Options{Kubeconfig: "/k", ReadyPort: 70000}, wantErr: "ReadyPort 70000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Corefile(tt.o)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkLines(t, got, tt.want, nil)
		})
	}
}

// checkLines fails t when the Corefile got lacks a line of want or holds
// one of notWant, lines compared without their indentation.
func checkLines(t *testing.T, got string, want, notWant []string) {
	t.Helper()
	lines := map[string]bool{}
	for _, l := range strings.Split(got, "\n") {
		lines[strings.TrimSpace(l)] = true
	}
	for _, w := range want {
		if !lines[w] {
			t.Errorf("Corefile lacks line %q:\n%s", w, got)
		}
	}
	for _, w := range notWant {
		if lines[w] {
			t.Errorf("Corefile holds line %q:\n%s", w, got)
		}
	}
}
