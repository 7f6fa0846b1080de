package apps

import (
	"errors"
	"strings"
	"testing"
)

func TestSummarize(t *testing.T) {
	ok := ChartStatus{Name: "a", Namespace: "default", Phase: PhaseSuccess}
	failed := ChartStatus{Name: "b", Namespace: "tools", Phase: PhaseFailed, Reason: ReasonChartPull, Message: "no such host"}
	tests := []struct {
		name       string
		st         Status
		wantCharts int
		phase      string
		summary    string
	}{
		{"nothing applied yet", Status{}, 1, PhasePending, "Pending: manifests pending"},
		{"manifests only", Status{Manifests: ManifestsStatus{Phase: PhaseSuccess}}, 0, PhaseSuccess, "Success: manifests success"},
		{"a chart to go", Status{Manifests: ManifestsStatus{Phase: PhaseSuccess}, Charts: []ChartStatus{ok}}, 2, PhasePending, "Pending: manifests success, 1 of 1 charts installed"},
		{"all", Status{Manifests: ManifestsStatus{Phase: PhaseSuccess}, Charts: []ChartStatus{ok}}, 1, PhaseSuccess, "Success: manifests success, 1 of 1 charts installed"},
		{"chart failed", Status{Manifests: ManifestsStatus{Phase: PhaseSuccess}, Charts: []ChartStatus{ok, failed}}, 2, PhaseFailed,
			"Failed: manifests success, 1 of 2 charts installed; chart tools/b: ChartPullFailed: no such host"},
		{"manifests failed", Status{Manifests: ManifestsStatus{Phase: PhaseFailed, Reason: ReasonInstall, Message: "apply ConfigMap x: forbidden"}}, 0, PhaseFailed,
			"Failed: manifests failed; manifests: InstallFailed: apply ConfigMap x: forbidden"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.st.summarize(tt.wantCharts)
			if tt.st.Phase != tt.phase {
				t.Errorf("phase = %s, want %s", tt.st.Phase, tt.phase)
			}
			if got := tt.st.Summary(); got != tt.summary {
				t.Errorf("summary = %q, want %q", got, tt.summary)
			}
		})
	}
}

func TestCompressRoundTrip(t *testing.T) {
	in := strings.Repeat("apiVersion: v1\nkind: ConfigMap\n---\n", 50)
	c, err := compress(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(c) >= len(in) {
		t.Errorf("compressed %d bytes to %d", len(in), len(c))
	}
	out, err := uncompress(c)
	if err != nil || out != in {
		t.Fatalf("round trip: %v, equal %v", err, out == in)
	}
	if st, err := ParseStatus(`{"phase":"Success","charts":[{"name":"a","namespace":"default","phase":"Success","lastAppliedChartConfigHash":"x"}]}`); err != nil || st.Charts[0].LastAppliedChartConfigHash != "x" {
		t.Errorf("vCluster's status: %+v, %v", st, err)
	}
}

func TestDropUnlisted(t *testing.T) {
	charts := func(names ...string) []ChartStatus {
		var out []ChartStatus
		for _, n := range names {
			out = append(out, ChartStatus{Namespace: "ns", Name: n, Phase: PhaseSuccess})
		}
		return out
	}
	names := func(cs []ChartStatus) string {
		var out []string
		for _, c := range cs {
			out = append(out, c.Name+":"+c.Phase)
		}
		return strings.Join(out, ",")
	}
	tests := []struct {
		name        string
		charts      []ChartStatus
		listed      []string
		failOn      string
		wantCharts  string
		wantDropped string
		wantErr     string
	}{
		{"all listed", charts("a", "b"), []string{"a", "b"}, "", "a:Success,b:Success", "", ""},
		{"drop some", charts("a", "x", "b", "y"), []string{"a", "b"}, "", "a:Success,b:Success", "ns/x,ns/y", ""},
		// x went, y fails: y is Failed and z, not reached, stays; b, kept
		// before, is not duplicated and x is not brought back.
		{"fail midway", charts("a", "x", "b", "y", "z", "c"), []string{"a", "b", "c"}, "y",
			"a:Success,b:Success,y:Failed,z:Success,c:Success", "ns/x", "release ns/y, dropped from experimental.deploy.vcluster.helm: boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := Status{Charts: tt.charts}
			listed := map[string]bool{}
			for _, n := range tt.listed {
				listed["ns/"+n] = true
			}
			dropped, err := st.dropUnlisted(listed, func(_, name string) error {
				if name == tt.failOn {
					return errors.New("boom")
				}
				return nil
			})
			if got := names(st.Charts); got != tt.wantCharts {
				t.Errorf("charts = %s, want %s", got, tt.wantCharts)
			}
			if got := strings.Join(dropped, ","); got != tt.wantDropped {
				t.Errorf("dropped = %s, want %s", got, tt.wantDropped)
			}
			if (err == nil) != (tt.wantErr == "") || (err != nil && err.Error() != tt.wantErr) {
				t.Errorf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}
