package v1alpha1

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
)

func TestAgentWanted(t *testing.T) {
	hosted := ClusterSpec{EKSConfig: &eksv1.EKSClusterConfigSpec{}}
	registered := ClusterSpec{ImportedConfig: &ImportedConfig{}}
	for _, tc := range []struct {
		name        string
		spec        ClusterSpec
		annotations map[string]string
		want        bool
	}{
		{"registered", registered, nil, true},
		{"registered, annotation false is ignored", registered, map[string]string{AnnotationAgent: "false"}, true},
		{"hosted", hosted, nil, true},
		{"hosted, annotation true", hosted, map[string]string{AnnotationAgent: "true"}, true},
		{"hosted, annotation false", hosted, map[string]string{AnnotationAgent: "false"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Cluster{ObjectMeta: metav1.ObjectMeta{Annotations: tc.annotations}, Spec: tc.spec}
			if got := c.AgentWanted(); got != tc.want {
				t.Errorf("AgentWanted() = %v, want %v", got, tc.want)
			}
		})
	}
}
