package registered_test

import (
	"strings"
	"testing"

	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/registered"
)

func TestParseMember(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want mgmtv1.ClusterMember
		err  string
	}{
		{"alice=read-only", mgmtv1.ClusterMember{Kind: "User", Name: "alice", Role: "read-only"}, ""},
		{"user:bob@example.com=cluster-owner", mgmtv1.ClusterMember{Kind: "User", Name: "bob@example.com", Role: "cluster-owner"}, ""},
		{"group:devs=cluster-member", mgmtv1.ClusterMember{Kind: "Group", Name: "devs", Role: "cluster-member"}, ""},
		{"sa:ci:deployer=cluster-member", mgmtv1.ClusterMember{Kind: "ServiceAccount", Name: "ci:deployer", Role: "cluster-member"}, ""},
		{"alice", mgmtv1.ClusterMember{}, "want [user:|group:|sa:]NAME=ROLE"},
		{"alice=admin", mgmtv1.ClusterMember{}, `role "admin"`},
		{"sa:deployer=read-only", mgmtv1.ClusterMember{}, "sa:NAMESPACE:NAME"},
		{"group:=read-only", mgmtv1.ClusterMember{}, "empty name"},
	} {
		got, err := registered.ParseMember(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), tc.in) {
				t.Errorf("ParseMember(%q): err %v, want one with %q naming the value", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseMember(%q) = %+v, %v", tc.in, got, err)
		}
	}
}
