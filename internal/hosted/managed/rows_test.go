package managed

import "testing"

func TestRows(t *testing.T) {
	config := spec{DisplayName: "prod", Region: "us-west-2", Tags: p(map[string]string{"team": "x"}),
		NodeGroups: &[]nodeGroup{ng("ng-a", 5)}}
	upstream := spec{DisplayName: "prod", Region: "us-west-2", Tags: p(map[string]string{"team": "y"}), KubernetesVersion: p("1.31"),
		NodeGroups: &[]nodeGroup{ng("ng-a", 3), ng("ng-b", 1)}}
	byPath := map[string]Row{}
	applied := spec{Tags: p(map[string]string{"team": "y"}), NodeGroups: &[]nodeGroup{ng("ng-a", 3)}}
	for _, r := range Rows(config, upstream, applied, opts) {
		byPath[r.Path] = r
	}
	check := func(path string, managed, drift bool, cfg, up, eff string) {
		t.Helper()
		r, ok := byPath[path]
		if !ok {
			t.Fatalf("no row %s in %v", path, byPath)
		}
		if r.Managed != managed || r.Drift != drift || r.Config != cfg || r.Upstream != up || r.Effective != eff {
			t.Errorf("%s = %+v, want managed=%v drift=%v config=%q upstream=%q effective=%q", path, r, managed, drift, cfg, up, eff)
		}
	}
	check("region", true, false, `"us-west-2"`, `"us-west-2"`, `"us-west-2"`)
	check("tags", true, true, `{"team":"x"}`, `{"team":"y"}`, `{"team":"x"}`)
	check("kubernetesVersion", false, false, "", `"1.31"`, `"1.31"`)
	check("privateAccess", false, false, "", "", "")
	check("nodeGroups[ng-a].desiredSize", true, true, "5", "3", "5")
	check("nodeGroups[ng-b].desiredSize", false, false, "", "1", "")
	for path, want := range map[string]string{"tags": `{"team":"y"}`, "nodeGroups[ng-a].desiredSize": "3", "kubernetesVersion": "", "nodeGroups[ng-b].desiredSize": ""} {
		if got := byPath[path].Applied; got != want {
			t.Errorf("%s applied = %q, want %q", path, got, want)
		}
	}
}
