package eks_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	"github.com/clustersync/clustersync/internal/hosted/eks"
	"github.com/clustersync/clustersync/internal/hosted/managed"
)

// What the emulator reports for a cluster created from a spec reads back as
// that spec: the management controller's read (Management.Describe:
// UpstreamSpec and the managed launch template) is the inverse of the
// create requests.
func TestUpstreamSpecRoundTrip(t *testing.T) {
	ns, srv, clk, r := setup(t)
	key := types.NamespacedName{Namespace: ns, Name: "prod"}
	want := spec(ns)
	if err := k.Create(context.Background(), &eksv1.EKSClusterConfig{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: ns}, Spec: want}); err != nil {
		t.Fatal(err)
	}
	reconcile(t, r, key)
	clk.Advance(11 * time.Minute)
	reconcile(t, r, key)
	clk.Advance(11 * time.Minute) // node group ACTIVE

	cs, err := eks.NewClientsFactory(srv.URL)(context.Background(), "us-west-2", map[string][]byte{eks.AccessKeyField: []byte("a"), eks.SecretKeyField: []byte("b")})
	if err != nil {
		t.Fatal(err)
	}
	var c eksv1.EKSClusterConfig
	if err := k.Get(context.Background(), key, &c); err != nil {
		t.Fatal(err)
	}
	reading, found, err := (&eks.Management{Client: k, NewClients: eks.NewClientsFactory(srv.URL)}).Describe(context.Background(), want, &c)
	if err != nil || !found {
		t.Fatalf("describe: found %v, %v", found, err)
	}
	up := reading.Spec
	cl, ngs, err := eks.Describe(context.Background(), cs.EKS, want.DisplayName)
	if err != nil {
		t.Fatal(err)
	}
	if len(ngs) != 1 || aws.ToString(ngs[0].LaunchTemplate.Id) != c.Status.ManagedLaunchTemplateID || len(ngs[0].InstanceTypes) != 0 {
		t.Errorf("node groups %+v: want them on the managed launch template, instance types in the template", ngs)
	}
	if bare := eks.UpstreamSpec(want, cl, ngs, false); (*bare.NodeGroups)[0].InstanceType != nil {
		t.Errorf("EKS itself reports no instance type for a node group on a launch template: %v", *(*bare.NodeGroups)[0].InstanceType)
	}
	// Every field the spec set reads back unchanged: the managed plan of the
	// spec against its own upstream is empty.
	plan := managed.Reconcile(want, up, eksv1.EKSClusterConfigSpec{}, eks.ManagedOptions())
	if len(plan.Push)+len(plan.Adopt)+len(plan.Conflicts) != 0 {
		t.Errorf("spec and upstream differ: push %+v adopt %+v conflicts %+v", plan.Push, plan.Adopt, plan.Conflicts)
	}
	if up.PrivateAccess == nil || *up.PrivateAccess || up.LoggingTypes == nil || up.SecretsEncryption == nil {
		t.Errorf("fields EKS reports but the spec left unset are missing from upstream: %+v", up)
	}
}
