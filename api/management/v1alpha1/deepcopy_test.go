package v1alpha1

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
)

func ptr[T any](v T) *T { return &v }

func cluster() *Cluster {
	spec := func() *eksv1.EKSClusterConfigSpec {
		return &eksv1.EKSClusterConfigSpec{DisplayName: "prod", Region: "us-west-2", AmazonCredentialSecret: "ns:aws",
			Tags: ptr(map[string]string{"a": "1"}), NodeGroups: ptr([]eksv1.NodeGroup{{NodegroupName: "ng-a", DesiredSize: ptr(int64(2))}})}
	}
	return &Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "prod"},
		Spec:       ClusterSpec{DisplayName: "Prod", EKSConfig: spec()},
		Status: ClusterStatus{
			Driver: DriverEKS, Phase: PhaseActive,
			Conditions: []metav1.Condition{{Type: ConditionReady, Status: metav1.ConditionTrue, Reason: "Ready"}},
			EKSStatus: &EKSStatus{UpstreamSpec: spec(), AppliedSpec: spec(), Subnets: []string{"s"}, PrivateRequiresTunnel: ptr(false),
				ManagedLaunchTemplateVersions: map[string]string{"ng-a": "1"}},
		},
	}
}

// A Cluster's copy shares nothing with it: spec.eksConfig, the upstream and
// applied specs, conditions and maps are all new.
func TestClusterDeepCopyIsDeep(t *testing.T) {
	orig := cluster()
	c := orig.DeepCopyObject().(*Cluster)
	if !reflect.DeepEqual(c, orig) {
		t.Fatal("the copy differs from the original")
	}
	(*c.Spec.EKSConfig.Tags)["a"] = "2"
	*(*c.Status.EKSStatus.UpstreamSpec.NodeGroups)[0].DesiredSize = 5
	(*c.Status.EKSStatus.AppliedSpec.NodeGroups)[0].NodegroupName = "x"
	c.Status.Conditions[0].Status = metav1.ConditionFalse
	c.Status.EKSStatus.ManagedLaunchTemplateVersions["ng-a"] = "9"
	*c.Status.EKSStatus.PrivateRequiresTunnel = true
	if !reflect.DeepEqual(orig, cluster()) {
		t.Errorf("mutating the copy changed the original:\n%+v", orig)
	}
}
