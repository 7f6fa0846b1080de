package main

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/managed"
)

// cluster show prints the registration command of a cluster whose agent
// must be installed by hand (a private endpoint), and nothing of it
// otherwise.
func TestPrintClusterRegistration(t *testing.T) {
	c := &mgmtv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "private"}, Status: mgmtv1.ClusterStatus{Driver: "EKS", Phase: "Active",
		Conditions: []metav1.Condition{{Type: mgmtv1.ConditionAgentConnected, Status: metav1.ConditionFalse, Reason: "RegistrationRequired",
			Message: "the API endpoint is private"}}}}
	reg := &mgmtv1.ClusterRegistrationToken{Status: mgmtv1.ClusterRegistrationTokenStatus{
		Command:         "kubectl apply -f https://m.example/v1/import/abc_private.yaml",
		InsecureCommand: "curl --insecure -sfL https://m.example/v1/import/abc_private.yaml | kubectl apply -f -"}}
	rows := []managed.Row{{Path: "tags", Managed: true, Config: "{}"}}
	for _, tc := range []struct {
		name string
		reg  *mgmtv1.ClusterRegistrationToken
		want []string
		not  []string
	}{
		{"private", reg, []string{"AgentConnected=False: the API endpoint is private", "from inside the cluster's network", reg.Status.Command, reg.Status.InsecureCommand, "tags"}, nil},
		{"reachable", nil, []string{"tags"}, []string{"kubectl apply", "inside the cluster's network"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := printCluster(&b, c, rows, tc.reg); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, b.String())
				}
			}
			for _, w := range tc.not {
				if strings.Contains(b.String(), w) {
					t.Errorf("output has %q:\n%s", w, b.String())
				}
			}
		})
	}
}

// cluster show -o json prints each row with Kubernetes' lowerCamel keys
// and the values as JSON values, unset ones left out.
func TestClusterShowJSON(t *testing.T) {
	rows := []managed.Row{
		{Path: "tags", Managed: true, Config: `{"team":"a"}`, Upstream: `{"team":"b"}`, Applied: `{"team":"b"}`, Effective: `{"team":"a"}`, Drift: true},
		{Path: "privateAccess", Upstream: "false", Effective: "false"},
	}
	out, err := json.Marshal(jsonRows(rows))
	if err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if keys := strings.Join(slices.Sorted(maps.Keys(got[0])), ","); keys != "applied,config,drift,effective,managed,path,upstream" {
		t.Errorf("keys %s", keys)
	}
	if tags, ok := got[0]["config"].(map[string]any); !ok || tags["team"] != "a" || got[0]["drift"] != true || got[0]["path"] != "tags" {
		t.Errorf("row %v: want config as a JSON object", got[0])
	}
	if _, set := got[1]["config"]; set || got[1]["upstream"] != false || got[1]["managed"] != false {
		t.Errorf("row %v: want config left out, upstream false", got[1])
	}
}
