package controller

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
)

func TestRegistrationRequired(t *testing.T) {
	agent := func(status metav1.ConditionStatus, reason string) []metav1.Condition {
		return []metav1.Condition{{Type: mgmtv1.ConditionAgentConnected, Status: status, Reason: reason}}
	}
	hosted := mgmtv1.ClusterSpec{EKSConfig: &eksv1.EKSClusterConfigSpec{}}
	for _, tc := range []struct {
		name       string
		spec       mgmtv1.ClusterSpec
		conditions []metav1.Condition
		want       bool
	}{
		{"private endpoint", hosted, agent(metav1.ConditionFalse, ReasonAgentRegistrationRequired), true},
		{"installed by the manager", hosted, agent(metav1.ConditionFalse, ReasonAgentInstalled), false},
		{"connected", hosted, agent(metav1.ConditionTrue, "Connected"), false},
		{"no agent condition yet", hosted, nil, false},
		{"a registered cluster always shows its import command, not this", mgmtv1.ClusterSpec{ImportedConfig: &mgmtv1.ImportedConfig{}},
			agent(metav1.ConditionFalse, ReasonAgentRegistrationRequired), false},
	} {
		c := &mgmtv1.Cluster{Spec: tc.spec, Status: mgmtv1.ClusterStatus{Conditions: tc.conditions}}
		if got := RegistrationRequired(c); got != tc.want {
			t.Errorf("%s: RegistrationRequired = %v, want %v", tc.name, got, tc.want)
		}
	}
}
