package management

import (
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
)

func TestSetConditions(t *testing.T) {
	op := func(phase, failure string) *hostedv1.OperatorStatus {
		return &hostedv1.OperatorStatus{Phase: phase, FailureMessage: failure}
	}
	ok := &accessResult{nodes: 0}
	for _, tc := range []struct {
		name     string
		imported bool
		obs      observed
		phase    string
		want     map[string]metav1.ConditionStatus
		message  map[string]string
	}{
		{name: "no operator config yet", obs: observed{}, phase: mgmtv1.PhasePending,
			want: map[string]metav1.ConditionStatus{mgmtv1.ConditionPending: "Unknown", mgmtv1.ConditionProvisioned: "Unknown", mgmtv1.ConditionReady: "False"}},
		{name: "refused before create", obs: observed{op: op("", "an EKS cluster named x already exists")}, phase: mgmtv1.PhaseError,
			want:    map[string]metav1.ConditionStatus{mgmtv1.ConditionPending: "False", mgmtv1.ConditionProvisioned: "False"},
			message: map[string]string{mgmtv1.ConditionPending: "already exists"}},
		{name: "importing", imported: true, obs: observed{op: op(hostedv1.PhaseImporting, "")}, phase: mgmtv1.PhaseProvisioning,
			want: map[string]metav1.ConditionStatus{mgmtv1.ConditionPending: "Unknown"}},
		{name: "creating", obs: observed{op: op(hostedv1.PhaseCreating, "")}, phase: mgmtv1.PhaseProvisioning,
			want: map[string]metav1.ConditionStatus{mgmtv1.ConditionPending: "True", mgmtv1.ConditionProvisioned: "Unknown", mgmtv1.ConditionWaiting: "Unknown"}},
		{name: "active with node groups", obs: observed{op: op(hostedv1.PhaseActive, ""), pools: 1, access: ok}, phase: mgmtv1.PhaseActive,
			want: map[string]metav1.ConditionStatus{mgmtv1.ConditionProvisioned: "True", mgmtv1.ConditionUpdated: "True", mgmtv1.ConditionWaiting: "True",
				mgmtv1.ConditionConnected: "True", mgmtv1.ConditionConflict: "False", mgmtv1.ConditionReady: "True"}},
		{name: "no node groups and no nodes", obs: observed{op: op(hostedv1.PhaseActive, ""), pools: 0, access: ok}, phase: mgmtv1.PhaseActive,
			want:    map[string]metav1.ConditionStatus{mgmtv1.ConditionWaiting: "False", mgmtv1.ConditionReady: "False"},
			message: map[string]string{mgmtv1.ConditionWaiting: NoNodesMessage, mgmtv1.ConditionReady: "Waiting"}},
		{name: "self-managed nodes only", obs: observed{op: op(hostedv1.PhaseActive, ""), pools: 0, access: &accessResult{nodes: 3}}, phase: mgmtv1.PhaseActive,
			want: map[string]metav1.ConditionStatus{mgmtv1.ConditionWaiting: "True", mgmtv1.ConditionReady: "True"}},
		{name: "unreachable private endpoint", obs: observed{op: op(hostedv1.PhaseActive, ""), pools: 1,
			access: &accessResult{err: errors.New("private endpoint needs a tunnel"), reason: "TunnelRequired"}}, phase: mgmtv1.PhaseActive,
			want:    map[string]metav1.ConditionStatus{mgmtv1.ConditionConnected: "False", mgmtv1.ConditionReady: "False"},
			message: map[string]string{mgmtv1.ConditionConnected: "tunnel", mgmtv1.ConditionReady: "Connected"}},
		{name: "private endpoint, agent connected", obs: observed{op: op(hostedv1.PhaseActive, ""), pools: 1, agent: true,
			access: &accessResult{err: errors.New("private endpoint needs a tunnel"), reason: "TunnelRequired"}}, phase: mgmtv1.PhaseActive,
			want:    map[string]metav1.ConditionStatus{mgmtv1.ConditionConnected: "True", mgmtv1.ConditionReady: "True"},
			message: map[string]string{mgmtv1.ConditionConnected: "through the agent's tunnel (the manager cannot reach it directly: TunnelRequired"}},
		{name: "updating", obs: observed{op: op(hostedv1.PhaseUpdating, ""), pools: 1, access: ok}, phase: mgmtv1.PhaseUpdating,
			want: map[string]metav1.ConditionStatus{mgmtv1.ConditionUpdated: "Unknown", mgmtv1.ConditionReady: "False"}},
		{name: "update failed", obs: observed{op: op(hostedv1.PhaseActive, "version 1.30 is a downgrade"), pools: 1, access: ok}, phase: mgmtv1.PhaseError,
			want:    map[string]metav1.ConditionStatus{mgmtv1.ConditionUpdated: "False"},
			message: map[string]string{mgmtv1.ConditionUpdated: "downgrade"}},
		{name: "conflict", obs: observed{op: op(hostedv1.PhaseActive, ""), pools: 1, access: ok, conflicts: []string{"tags (config a, upstream b, last applied c)"}},
			phase:   mgmtv1.PhaseActive,
			want:    map[string]metav1.ConditionStatus{mgmtv1.ConditionConflict: "True", mgmtv1.ConditionUpdated: "False", mgmtv1.ConditionReady: "False"},
			message: map[string]string{mgmtv1.ConditionConflict: "tags (config a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &mgmtv1.Cluster{}
			obs := tc.obs
			obs.cloud, obs.field, obs.imported = "EKS", "eksConfig", tc.imported
			setConditions(c, obs)
			if c.Status.Phase != tc.phase {
				t.Errorf("phase %s, want %s", c.Status.Phase, tc.phase)
			}
			for typ, want := range tc.want {
				cond := meta.FindStatusCondition(c.Status.Conditions, typ)
				if cond == nil || cond.Status != want {
					t.Errorf("%s = %+v, want %s", typ, cond, want)
				}
			}
			for typ, want := range tc.message {
				if cond := meta.FindStatusCondition(c.Status.Conditions, typ); cond == nil || !strings.Contains(cond.Message, want) {
					t.Errorf("%s message = %+v, want it to contain %q", typ, cond, want)
				}
			}
		})
	}
}

func TestAgentAnswers(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *metav1.Time { return &metav1.Time{Time: now.Add(-d)} }
	for _, tc := range []struct {
		name  string
		agent *mgmtv1.AgentStatus
		want  bool
	}{
		{"no agent", nil, false},
		{"never pinged", &mgmtv1.AgentStatus{ConnectedSince: at(time.Second)}, false},
		{"pinged just now", &mgmtv1.AgentStatus{ConnectedSince: at(time.Minute), LastPing: at(time.Second)}, true},
		{"pinged 44 s ago", &mgmtv1.AgentStatus{ConnectedSince: at(time.Minute), LastPing: at(44 * time.Second)}, true},
		{"pinged 45 s ago", &mgmtv1.AgentStatus{ConnectedSince: at(time.Minute), LastPing: at(AgentFresh)}, false},
		{"disconnected", &mgmtv1.AgentStatus{LastPing: at(time.Second)}, false},
	} {
		if got := agentAnswers(tc.agent, now); got != tc.want {
			t.Errorf("%s: agentAnswers = %v, want %v", tc.name, got, tc.want)
		}
	}
}
