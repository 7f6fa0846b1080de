package eks_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	awseks "github.com/aws/aws-sdk-go-v2/service/eks"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	"github.com/clustersync/clustersync/internal/hosted/eks"
	"github.com/clustersync/clustersync/internal/hosted/eks/ekstest"
	"github.com/clustersync/clustersync/internal/hosted/engine"
	"github.com/clustersync/clustersync/internal/hosted/hostedtest"
)

// env is a real kube-apiserver with the hosted-cluster CRDs, started once
// for the package; k is its client, set once (kOnce) by the first test
// that needs it, so that parallel tests read it safely.
var (
	env   *hostedtest.Env
	k     client.Client
	kOnce sync.Once
)

func TestMain(m *testing.M) {
	os.Exit(hostedtest.Main(m, &env))
}

func needServer(t *testing.T) {
	hostedtest.Require(t, env)
	kOnce.Do(func() {
		// A client of our own without client-go's default rate limit (5
		// requests a second), which would otherwise pace the scenarios.
		cfg := rest.CopyConfig(env.Config)
		cfg.QPS, cfg.Burst = 1000, 1000
		c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
		if err != nil {
			panic(err)
		}
		k = c
	})
}

// setup makes a namespace with a credential Secret, an emulator and a
// reconciler that talks to it.
// operator is the EKS operator: the engine with EKS's Traits and Provider.
type operator = engine.Operator[eksv1.EKSClusterConfigSpec, *eksv1.EKSClusterConfig]

// newOperator returns the EKS operator with the test's client, clients
// from factory, and a poll of one second.
func newOperator(factory eks.ClientsFactory) *operator {
	return &operator{Client: k, Traits: eks.Traits().Traits, Provider: &eks.Provider{Client: k, NewClients: factory}, Poll: time.Second}
}

func setup(t *testing.T) (string, *ekstest.Server, *hostedtest.Clock, *operator) {
	t.Helper()
	needServer(t)
	ns := env.Namespace(t)
	if err := k.Create(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "aws", Namespace: ns},
		StringData: map[string]string{eks.AccessKeyField: "AKIAEXAMPLE", eks.SecretKeyField: "secret"}}); err != nil {
		t.Fatal(err)
	}
	clk := hostedtest.NewClock(time.Date(2026, 11, 22, 11, 0, 0, 0, time.UTC))
	srv := ekstest.New(ekstest.Options{Now: clk.Now, CreateDelay: 10 * time.Minute, UpdateDelay: 5 * time.Minute,
		StackCreateDelay: 3 * time.Minute, StackDeleteDelay: 2 * time.Minute, Region: "us-west-2"})
	t.Cleanup(srv.Close)
	return ns, srv, clk, newOperator(eks.NewClientsFactory(srv.URL))
}

func spec(ns string) eksv1.EKSClusterConfigSpec {
	p := func(s string) *string { return &s }
	n := func(i int64) *int64 { return &i }
	return eksv1.EKSClusterConfigSpec{
		DisplayName: "prod", Region: "us-west-2", AmazonCredentialSecret: ns + ":aws",
		KubernetesVersion: p("1.31"), ServiceRole: p("arn:aws:iam::123456789012:role/eks"),
		Subnets:      &[]string{"subnet-a", "subnet-b"},
		PublicAccess: func() *bool { b := true; return &b }(),
		Tags:         &map[string]string{"team": "platform"},
		NodeGroups: &[]eksv1.NodeGroup{{NodegroupName: "workers", DesiredSize: n(2), MinSize: n(1), MaxSize: n(3),
			InstanceType: p("t3.large"), NodeRole: p("arn:aws:iam::123456789012:role/nodes")}},
	}
}

func reconcile(t *testing.T, r *operator, key types.NamespacedName) (ctrl.Result, eksv1.EKSClusterConfig) {
	t.Helper()
	res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key})
	if err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	var c eksv1.EKSClusterConfig
	if err := k.Get(context.Background(), key, &c); err != nil {
		t.Fatal(err)
	}
	return res, c
}

// Create with given subnets: "" → creating → (EKS ACTIVE) active, with the
// CA Secret written and the node group created.
func TestCreateWithGivenSubnets(t *testing.T) {
	ns, srv, clk, r := setup(t)
	key := types.NamespacedName{Namespace: ns, Name: "prod"}
	if err := k.Create(context.Background(), &eksv1.EKSClusterConfig{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: ns}, Spec: spec(ns)}); err != nil {
		t.Fatal(err)
	}
	res, c := reconcile(t, r, key)
	if c.Status.Phase != eksv1.PhaseCreating || c.Status.FailureMessage != "" || res.RequeueAfter == 0 {
		t.Fatalf("after create: phase %q failure %q requeue %v", c.Status.Phase, c.Status.FailureMessage, res.RequeueAfter)
	}
	snap, ok := srv.Cluster("prod")
	if !ok || snap.Status != "CREATING" || snap.Version != "1.31" {
		t.Fatalf("emulator cluster = %+v, %v", snap, ok)
	}
	// Still creating: nothing changes.
	if _, c = reconcile(t, r, key); c.Status.Phase != eksv1.PhaseCreating {
		t.Fatalf("phase %q while EKS is CREATING", c.Status.Phase)
	}
	clk.Advance(11 * time.Minute)
	_, c = reconcile(t, r, key)
	if c.Status.Phase != eksv1.PhaseActive || c.Status.VirtualNetwork == "" || len(c.Status.Subnets) != 2 {
		t.Fatalf("after ACTIVE: %+v", c.Status)
	}
	var ca corev1.Secret
	if err := k.Get(context.Background(), key, &ca); err != nil {
		t.Fatalf("CA secret: %v", err)
	}
	if len(ca.Data["endpoint"]) == 0 || len(ca.Data["ca"]) == 0 || ca.OwnerReferences[0].Name != "prod" {
		t.Errorf("CA secret = %v owners %v", ca.Data, ca.OwnerReferences)
	}
	if snap, _ = srv.Cluster("prod"); len(snap.Nodegroups) != 1 {
		t.Errorf("emulator node groups = %+v", snap.Nodegroups)
	}
	if calls := srv.Calls(); calls["CreateCluster"] != 1 || calls["CreateNodegroup"] != 1 {
		t.Errorf("calls = %v", calls)
	}
}

// A name already taken in the region is refused, and so is generating
// networking without CloudFormation clients, with a message naming the
// Reconciler field; nothing is created.
func TestCreateRefused(t *testing.T) {
	ns, srv, _, r := setup(t)
	if err := srv.ImportCluster(ekstest.ClusterSpec{Name: "prod", Version: "1.31"}); err != nil {
		t.Fatal(err)
	}
	key := types.NamespacedName{Namespace: ns, Name: "prod"}
	if err := k.Create(context.Background(), &eksv1.EKSClusterConfig{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: ns}, Spec: spec(ns)}); err != nil {
		t.Fatal(err)
	}
	if _, c := reconcile(t, r, key); c.Status.Phase != "" || !strings.Contains(c.Status.FailureMessage, "already exists in us-west-2") {
		t.Errorf("duplicate name: phase %q failure %q", c.Status.Phase, c.Status.FailureMessage)
	}
	s := spec(ns)
	s.DisplayName, s.Subnets = "fresh", nil
	key2 := types.NamespacedName{Namespace: ns, Name: "fresh"}
	if err := k.Create(context.Background(), &eksv1.EKSClusterConfig{ObjectMeta: metav1.ObjectMeta{Name: key2.Name, Namespace: ns}, Spec: s}); err != nil {
		t.Fatal(err)
	}
	all := eks.NewClientsFactory(srv.URL)
	eksOnly := newOperator(func(ctx context.Context, region string, secret map[string][]byte) (*eks.Clients, error) {
		cs, err := all(ctx, region, secret)
		if err != nil {
			return nil, err
		}
		return &eks.Clients{EKS: cs.EKS}, nil
	})
	if _, c := reconcile(t, eksOnly, key2); !strings.Contains(c.Status.FailureMessage, "spec.subnets") ||
		!strings.Contains(c.Status.FailureMessage, "Provider.NewClients") {
		t.Errorf("no subnets: failure %q", c.Status.FailureMessage)
	}
	if calls := srv.Calls(); calls["CreateCluster"] != 0 || calls["CreateStack"] != 0 {
		t.Errorf("CreateCluster called %d times, CreateStack %d", calls["CreateCluster"], calls["CreateStack"])
	}
}

func reconcileRequest(key types.NamespacedName) ctrl.Request {
	return ctrl.Request{NamespacedName: key}
}

// NewClientsFactory points all three clients at one endpoint: the
// emulator answers EKS, CloudFormation and EC2 calls at the same URL.
func TestClientsFactoryOneEndpoint(t *testing.T) {
	srv := ekstest.New(ekstest.Options{})
	t.Cleanup(srv.Close)
	cs, err := eks.NewClientsFactory(srv.URL)(context.Background(), "us-west-2", map[string][]byte{eks.AccessKeyField: []byte("a"), eks.SecretKeyField: []byte("b")})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := cs.EKS.ListNodegroups(ctx, &awseks.ListNodegroupsInput{ClusterName: aws.String("none")}); err == nil {
		t.Error("EKS: want ResourceNotFound for an unknown cluster")
	}
	if _, err := cs.CloudFormation.DescribeStacks(ctx, &cloudformation.DescribeStacksInput{}); err != nil {
		t.Errorf("CloudFormation: %v", err)
	}
	if _, err := cs.EC2.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{}); err != nil {
		t.Errorf("EC2: %v", err)
	}
	if calls := srv.Calls(); calls["ListNodegroups"] != 1 || calls["DescribeStacks"] != 1 || calls["DescribeLaunchTemplates"] != 1 {
		t.Errorf("calls %v", calls)
	}
	if _, err := eks.NewClientsFactory("")(ctx, "us-west-2", map[string][]byte{}); err == nil || !strings.Contains(err.Error(), eks.AccessKeyField) {
		t.Errorf("missing keys: %v", err)
	}
}

// Deleting a created cluster deletes its node groups, then the managed
// launch template and the cluster, and only then lets the EKSClusterConfig
// go.
func TestDeleteCreated(t *testing.T) {
	key, srv, clk, r := activeCluster(t)
	var c eksv1.EKSClusterConfig
	if err := k.Get(context.Background(), key, &c); err != nil || fmt.Sprint(c.Finalizers) != "["+eks.Finalizer+"]" {
		t.Fatalf("finalizers of a created cluster = %v (%v)", c.Finalizers, err)
	}
	if err := k.Delete(context.Background(), &eksv1.EKSClusterConfig{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace}}); err != nil {
		t.Fatal(err)
	}
	var sequence []string
	for pass := 0; pass < 10; pass++ {
		before := srv.Calls()
		if _, err := r.Reconcile(context.Background(), reconcileRequest(key)); err != nil {
			t.Fatalf("pass %d: %v", pass, err)
		}
		after := srv.Calls()
		for _, op := range []string{"DeleteNodegroup", "DeleteLaunchTemplate", "DeleteCluster", "DeleteStack"} {
			for range after[op] - before[op] {
				sequence = append(sequence, op)
			}
		}
		if err := k.Get(context.Background(), key, &eksv1.EKSClusterConfig{}); apierrors.IsNotFound(err) {
			break
		}
		clk.Advance(6 * time.Minute)
	}
	if err := k.Get(context.Background(), key, &eksv1.EKSClusterConfig{}); !apierrors.IsNotFound(err) {
		t.Fatalf("config still there after deletion (%v)", err)
	}
	if fmt.Sprint(sequence) != "[DeleteNodegroup DeleteLaunchTemplate DeleteCluster]" {
		t.Errorf("calls = %v, want node group, launch template, cluster", sequence)
	}
	if _, ok := srv.Cluster("prod"); ok {
		t.Error("the EKS cluster still exists")
	}
	if names := srv.LaunchTemplateNames(); len(names) != 0 {
		t.Errorf("launch templates left: %v", names)
	}
}

// Deleting the config of an imported cluster makes no cloud call: the
// cluster is only disconnected.
func TestDeleteImportedDisconnects(t *testing.T) {
	ns, srv, _, r := setup(t)
	if err := srv.ImportCluster(ekstest.ClusterSpec{Name: "legacy", Version: "1.31"}); err != nil {
		t.Fatal(err)
	}
	key := types.NamespacedName{Namespace: ns, Name: "legacy"}
	s := spec(ns)
	s.DisplayName, s.Imported = "legacy", true
	if err := k.Create(context.Background(), &eksv1.EKSClusterConfig{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: ns}, Spec: s}); err != nil {
		t.Fatal(err)
	}
	if _, c := reconcile(t, r, key); len(c.Finalizers) != 0 {
		t.Fatalf("an imported cluster got finalizers %v", c.Finalizers)
	}
	srv.ResetCalls()
	if err := k.Delete(context.Background(), &eksv1.EKSClusterConfig{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: ns}}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Reconcile(context.Background(), reconcileRequest(key)); err != nil {
		t.Fatal(err)
	}
	if err := k.Get(context.Background(), key, &eksv1.EKSClusterConfig{}); !apierrors.IsNotFound(err) {
		t.Errorf("imported config not deleted at once (%v)", err)
	}
	if calls := srv.Calls(); len(calls) != 0 {
		t.Errorf("cloud calls on disconnect: %v", calls)
	}
	if snap, ok := srv.Cluster("legacy"); !ok || snap.Status != "ACTIVE" {
		t.Errorf("imported cluster after disconnect: %+v %v", snap, ok)
	}

}

// Import: an existing cluster becomes active without any write; its nil
// fields stay unmanaged, so nothing is pushed until the user sets a field,
// and then only that field is.
func TestImport(t *testing.T) {
	ns, srv, _, r := setup(t)
	if err := srv.ImportCluster(ekstest.ClusterSpec{Name: "legacy", Version: "1.31", Tags: map[string]string{"owner": "ops"}}); err != nil {
		t.Fatal(err)
	}
	key := types.NamespacedName{Namespace: ns, Name: "legacy"}
	s := eksv1.EKSClusterConfigSpec{DisplayName: "legacy", Region: "us-west-2", AmazonCredentialSecret: ns + ":aws", Imported: true}
	if err := k.Create(context.Background(), &eksv1.EKSClusterConfig{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: ns}, Spec: s}); err != nil {
		t.Fatal(err)
	}
	srv.ResetCalls()
	for range 2 { // import, then an update pass
		if _, c := reconcile(t, r, key); c.Status.Phase != eksv1.PhaseActive || c.Status.FailureMessage != "" {
			t.Fatalf("phase %q failure %q", c.Status.Phase, c.Status.FailureMessage)
		}
	}
	if w := writes(map[string]int{}, srv.Calls()); len(w) != 0 {
		t.Errorf("import wrote %v", w)
	}
	editSpec(t, key, func(s *eksv1.EKSClusterConfigSpec) { s.Tags = &map[string]string{"owner": "ops", "cost": "42"} })
	srv.ResetCalls()
	reconcile(t, r, key)
	if w := writes(map[string]int{}, srv.Calls()); fmt.Sprint(w) != "[TagResource]" {
		t.Errorf("after setting tags: %v, want [TagResource]", w)
	}
	// A name that does not exist is refused, naming the field.
	s.DisplayName = "ghost"
	if err := k.Create(context.Background(), &eksv1.EKSClusterConfig{ObjectMeta: metav1.ObjectMeta{Name: "ghost", Namespace: ns}, Spec: s}); err != nil {
		t.Fatal(err)
	}
	if _, c := reconcile(t, r, types.NamespacedName{Namespace: ns, Name: "ghost"}); c.Status.FailureMessage != "spec.displayName: no EKS cluster named ghost in us-west-2 to import" {
		t.Errorf("failure %q", c.Status.FailureMessage)
	}
}

// Deleting a cluster created from scratch removes, in order, the node
// groups, the managed launch template, the cluster, then the generated
// stacks — node role, service role, VPC — each once the previous one is
// gone, the first only once the cluster is gone.
func TestDeleteGenerated(t *testing.T) {
	t.Parallel()
	ns, srv, clk, r := setup(t)
	key := types.NamespacedName{Namespace: ns, Name: "prod"}
	if err := k.Create(context.Background(), &eksv1.EKSClusterConfig{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: ns}, Spec: scratchSpec(ns)}); err != nil {
		t.Fatal(err)
	}
	until(t, r, clk, key, 6*time.Minute, 10, func(c eksv1.EKSClusterConfig) bool {
		snap, ok := srv.Cluster("prod")
		return c.Status.Phase == eksv1.PhaseActive && ok && snap.Nodegroups["workers"].Status == ekstest.StatusActive
	})
	vpc, role, node := eks.StackNames("prod")
	if got := srv.StackNames(); len(got) != 3 || len(srv.LaunchTemplateNames()) != 1 {
		t.Fatalf("stacks %v templates %v", got, srv.LaunchTemplateNames())
	}
	if err := k.Delete(context.Background(), &eksv1.EKSClusterConfig{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace}}); err != nil {
		t.Fatal(err)
	}
	var sequence []string
	deleting := map[string]bool{}
	for pass := 0; pass < 20; pass++ {
		before := srv.Calls()
		if _, err := r.Reconcile(context.Background(), reconcileRequest(key)); err != nil {
			t.Fatalf("pass %d: %v", pass, err)
		}
		after := srv.Calls()
		for _, op := range []string{"DeleteNodegroup", "DeleteLaunchTemplate", "DeleteCluster"} {
			for range after[op] - before[op] {
				sequence = append(sequence, op)
			}
		}
		order := []string{node, role, vpc}
		for i, name := range order {
			st, ok := srv.Stack(name)
			if deleting[name] || (ok && st.Status != "DELETE_IN_PROGRESS") {
				continue
			}
			deleting[name] = true
			sequence = append(sequence, "DeleteStack "+name)
			if _, exists := srv.Cluster("prod"); exists {
				t.Errorf("stack %s deleted while the cluster exists", name)
			}
			if i > 0 {
				if _, prev := srv.Stack(order[i-1]); prev {
					t.Errorf("stack %s deleted before %s was gone", name, order[i-1])
				}
			}
		}
		if err := k.Get(context.Background(), key, &eksv1.EKSClusterConfig{}); apierrors.IsNotFound(err) {
			break
		}
		clk.Advance(time.Minute)
	}
	if err := k.Get(context.Background(), key, &eksv1.EKSClusterConfig{}); !apierrors.IsNotFound(err) {
		t.Fatalf("config still there (%v)", err)
	}
	want := []string{"DeleteNodegroup", "DeleteLaunchTemplate", "DeleteCluster", "DeleteStack " + node, "DeleteStack " + role, "DeleteStack " + vpc}
	if !slices.Equal(sequence, want) {
		t.Errorf("sequence %v\nwant     %v", sequence, want)
	}
	if names, lts := srv.StackNames(), srv.LaunchTemplateNames(); len(names) != 0 || len(lts) != 0 {
		t.Errorf("left behind: stacks %v templates %v", names, lts)
	}
	if calls := srv.Calls(); calls["DeleteStack"] != 3 {
		t.Errorf("DeleteStack calls %d", calls["DeleteStack"])
	}
}

// A cluster someone else creates under the name after this config claimed
// it (its CreateCluster refused) is not this config's: deleting the config
// leaves it alone (its client request token is not the config's UID).
func TestDeleteLeavesSomeoneElsesCluster(t *testing.T) {
	ns, srv, _, r := setup(t)
	key := types.NamespacedName{Namespace: ns, Name: "taken"}
	s := spec(ns)
	s.DisplayName = "taken"
	if err := k.Create(context.Background(), &eksv1.EKSClusterConfig{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: ns}, Spec: s}); err != nil {
		t.Fatal(err)
	}
	srv.FailNext("CreateCluster", "InvalidParameterException", 400, 1)
	if _, c := reconcile(t, r, key); len(c.Finalizers) == 0 || c.Status.FailureMessage == "" {
		t.Fatalf("finalizers %v, failure %q: want the name claimed and the refusal reported", c.Finalizers, c.Status.FailureMessage)
	}
	if err := srv.ImportCluster(ekstest.ClusterSpec{Name: "taken", Version: "1.31"}); err != nil {
		t.Fatal(err)
	}
	if err := k.Delete(context.Background(), &eksv1.EKSClusterConfig{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: ns}}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := r.Reconcile(context.Background(), reconcileRequest(key)); err != nil {
			t.Fatal(err)
		}
	}
	if err := k.Get(context.Background(), key, &eksv1.EKSClusterConfig{}); !apierrors.IsNotFound(err) {
		t.Errorf("config not deleted (%v)", err)
	}
	if snap, ok := srv.Cluster("taken"); !ok || snap.Status != "ACTIVE" {
		t.Errorf("someone else's cluster after the delete: %+v %v", snap, ok)
	}
}
