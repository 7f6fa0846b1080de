package translate

import (
	"strings"
	"testing"
)

func TestSafeConcatName(t *testing.T) {
	tests := []struct {
		name  string
		parts []string
		want  string
	}{
		{"short name kept", []string{"nginx-7d9f", "x", "default", "x", "my-vc"}, "nginx-7d9f-x-default-x-my-vc"},
		// A vCluster vector (its SafeConcatName,
		// https://github.com/loft-sh/vcluster/blob/main/pkg/util/translate/translate.go).
		{"long name hashed", []string{"my-very-long-deployment-name-with-many-chars-7d9fb5c6d4-abcde", "x", "production", "x", "my-vc"},
			"my-very-long-deployment-name-with-many-chars-7d9fb5c-5aba847dca"},
		{"exactly 63 kept", []string{strings.Repeat("a", 63)}, strings.Repeat("a", 63)},
		{"dot before dash removed", []string{strings.Repeat("a", 51) + ".b", strings.Repeat("c", 20)},
			strings.Repeat("a", 51) + "-" + hash10(strings.Repeat("a", 51)+".b-"+strings.Repeat("c", 20))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SafeConcatName(tt.parts...)
			if got != tt.want {
				t.Fatalf("SafeConcatName(%q) = %q, want %q", tt.parts, got, tt.want)
			}
			if len(got) > MaxNameLength {
				t.Fatalf("result %q is %d characters long", got, len(got))
			}
		})
	}
}

func TestTranslatorNames(t *testing.T) {
	tr := Translator{VCluster: "my-vc", HostNamespace: "vc-my-vc"}
	tests := []struct {
		got, want string
	}{
		{tr.HostName("nginx-7d9f", "default"), "nginx-7d9f-x-default-x-my-vc"},
		{tr.HostName("my-very-long-deployment-name-with-many-chars-7d9fb5c6d4-abcde", "production"),
			"my-very-long-deployment-name-with-many-chars-7d9fb5c-5aba847dca"},
		{tr.HostName("kube-root-ca.crt", "team-a"), "kube-root-ca.crt-x-team-a-x-my-vc"},
		{tr.HostClusterScopedName("fast"), "vcluster-fast-x-vc-my-vc-x-my-vc"},
		{tr.KubernetesServiceName(), "my-vc"},
		{tr.DNSServiceHostName(), "kube-dns-x-kube-system-x-my-vc"},
		{tr.NodeServiceName("kwok-node-0"), "my-vc-node-kwok-node-0"},
	}
	for i, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("case %d: got %q, want %q", i, tt.got, tt.want)
		}
	}
}
