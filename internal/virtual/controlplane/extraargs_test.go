package controlplane

import (
	"slices"
	"strings"
	"testing"
)

func TestCheckExtraArgs(t *testing.T) {
	tests := []struct {
		component string
		args      []string
		want      []string
	}{
		{"apiServer", []string{"--oidc-issuer-url=https://issuer.example.com", "--oidc-client-id=vc", "--audit-log-maxage=7"}, nil},
		{"apiServer", []string{"--etcd-servers=https://elsewhere:2379", "oidc-client-id=vc", "--"}, []string{
			"[0]: --etcd-servers is set by clustersync's control plane", `[1]: "oidc-client-id=vc" is not a flag`, `[2]: "--" is not a flag`}},
		{"controllerManager", []string{"--controllers=*", "--terminated-pod-gc-threshold=100"}, []string{"[0]: --controllers is set"}},
		{"scheduler", []string{"--secure-port=1"}, []string{"[0]: --secure-port is set"}},
	}
	for _, tt := range tests {
		got := CheckExtraArgs(tt.component, tt.args)
		if len(got) != len(tt.want) {
			t.Errorf("%s %v: %v, want %v", tt.component, tt.args, got, tt.want)
			continue
		}
		for i, w := range tt.want {
			if !strings.HasPrefix(got[i], w) {
				t.Errorf("%s %v: problem %d %q, want %q…", tt.component, tt.args, i, got[i], w)
			}
		}
	}
	// Every flag the components are started with that an extra argument may
	// not give is one they are started with.
	all := slices.Concat(apiServerArgs(Layout{}, Options{}, Ports{}, "", EtcdTLS{}), controllerManagerArgs(Layout{}, Ports{}, "", false), schedulerArgs(Layout{}, Ports{}, ""))
	for component, flags := range ownedFlags() {
		for _, f := range flags {
			if f == "advertise-address" || f == "bind-address" {
				continue
			}
			if !slices.ContainsFunc(all, func(a string) bool { return strings.HasPrefix(a, "--"+f+"=") }) {
				t.Errorf("%s: owned flag --%s is not one the components are started with", component, f)
			}
		}
	}
}
