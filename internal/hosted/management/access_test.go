package management_test

import (
	"context"
	"net"
	"reflect"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/access"
	"github.com/clustersync/clustersync/internal/hosted/eks/ekstest"
	"github.com/clustersync/clustersync/internal/hosted/management"
)

// condition returns c's condition typ, failing t when it is missing.
func condition(t *testing.T, c mgmtv1.Cluster, typ string) metav1.Condition {
	t.Helper()
	cond := meta.FindStatusCondition(c.Status.Conditions, typ)
	if cond == nil {
		t.Fatalf("no condition %s among %+v", typ, c.Status.Conditions)
	}
	return *cond
}

// An imported cluster: condition Pending is Unknown until the operator has
// seen EKS report it, then True; no nillable field of the config gets set
// (nothing becomes managed by being imported), the node groups are
// discovered into the upstream spec, and nothing is written to EKS.
func TestImportKeepsNilFields(t *testing.T) {
	w := register(t, ekstest.ClusterSpec{Name: "legacy", Version: "1.30", EndpointPublicAccess: true, Tags: map[string]string{"team": "b"},
		Nodegroups: []ekstest.NodegroupSpec{{Name: "ng-b"}, {Name: "ng-a"}}}, nil, nil)
	if _, err := w.mgmt.Reconcile(context.Background(), ctrl.Request{NamespacedName: w.key}); err != nil {
		t.Fatal(err)
	}
	if cond := condition(t, w.cluster(t), mgmtv1.ConditionPending); cond.Status != metav1.ConditionUnknown {
		t.Errorf("Pending before the operator ran = %s %s", cond.Status, cond.Reason)
	}
	w.settle(t)
	c := w.cluster(t)
	if cond := condition(t, c, mgmtv1.ConditionPending); cond.Status != metav1.ConditionTrue {
		t.Errorf("Pending once imported = %s %s", cond.Status, cond.Reason)
	}
	if c.Status.Phase != mgmtv1.PhaseActive || c.Status.Version != "1.30" {
		t.Errorf("phase %q version %q", c.Status.Phase, c.Status.Version)
	}
	cfg := reflect.ValueOf(*c.Spec.EKSConfig)
	for i := range cfg.NumField() {
		if f := cfg.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
			t.Errorf("spec.eksConfig.%s was set by the import: %v", cfg.Type().Field(i).Name, f.Elem())
		}
	}
	var names []string
	for _, ng := range *c.Status.EKSStatus.UpstreamSpec.NodeGroups {
		names = append(names, ng.NodegroupName)
	}
	if strings.Join(names, ",") != "ng-a,ng-b" {
		t.Errorf("upstream node groups %v, want ng-a,ng-b", names)
	}
	for op, n := range w.srv.Calls() {
		if !strings.HasPrefix(op, "Describe") && !strings.HasPrefix(op, "List") {
			t.Errorf("the import called %s %d times", op, n)
		}
	}
}

// Once active, the cluster's API server is reached (condition Connected),
// clustersync's service account is made in it and its token is kept in
// the Secret status.serviceAccountTokenSecret names, owned by the Cluster.
func TestConnectedStoresServiceAccountToken(t *testing.T) {
	w := imported(t, "reach")
	c := w.cluster(t)
	for _, typ := range []string{mgmtv1.ConditionConnected, mgmtv1.ConditionWaiting, mgmtv1.ConditionReady} {
		if cond := condition(t, c, typ); cond.Status != metav1.ConditionTrue {
			t.Errorf("%s = %s %s: %s", typ, cond.Status, cond.Reason, cond.Message)
		}
	}
	if c.Status.ServiceAccountTokenSecret != management.SATokenSecretName("reach") {
		t.Fatalf("status.serviceAccountTokenSecret = %q", c.Status.ServiceAccountTokenSecret)
	}
	if c.Status.EKSStatus.PrivateRequiresTunnel != nil {
		t.Errorf("privateRequiresTunnel = %v for a public endpoint, want unset", *c.Status.EKSStatus.PrivateRequiresTunnel)
	}
	key := types.NamespacedName{Namespace: eksv1.Namespace, Name: c.Status.ServiceAccountTokenSecret}
	creds, err := access.LoadToken(context.Background(), k, key)
	if err != nil {
		t.Fatal(err)
	}
	var secret corev1.Secret
	if err := k.Get(context.Background(), key, &secret); err != nil {
		t.Fatal(err)
	}
	if refs := secret.OwnerReferences; len(refs) != 1 || refs[0].UID != c.UID {
		t.Errorf("owner references %+v, want the Cluster %s", refs, c.UID)
	}
	cfg, err := access.RESTConfig(creds.Endpoint, creds.CAData, access.StaticToken(creds.Token))
	if err != nil {
		t.Fatal(err)
	}
	review, err := kubernetes.NewForConfigOrDie(cfg).AuthenticationV1().SelfSubjectReviews().Create(context.Background(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := review.Status.UserInfo.Username, "system:serviceaccount:kube-system:clustersync"; got != want {
		t.Errorf("stored token authenticates as %q, want %q", got, want)
	}
}

// No managed node group and no node: condition Waiting is False with
// Rancher's message; a self-managed node turns it True.
func TestNoNodeGroupsWaiting(t *testing.T) {
	w := importedWith(t, ekstest.ClusterSpec{Name: "bare", Version: "1.31", EndpointPublicAccess: true}, nil, nil)
	c := w.cluster(t)
	cond := condition(t, c, mgmtv1.ConditionWaiting)
	if cond.Status != metav1.ConditionFalse || cond.Message != management.NoNodesMessage {
		t.Errorf("Waiting = %s %q, want False %q", cond.Status, cond.Message, management.NoNodesMessage)
	}
	if ready := condition(t, c, mgmtv1.ConditionReady); ready.Status != metav1.ConditionFalse || !strings.Contains(ready.Message, mgmtv1.ConditionWaiting) {
		t.Errorf("Ready = %s %q", ready.Status, ready.Message)
	}

	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "self-managed-1"}}
	if err := k.Create(context.Background(), node); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Delete(context.Background(), node) })
	w.settle(t)
	if cond := condition(t, w.cluster(t), mgmtv1.ConditionWaiting); cond.Status != metav1.ConditionTrue || !strings.Contains(cond.Message, "1 self-managed node") {
		t.Errorf("Waiting with a node = %s %q", cond.Status, cond.Message)
	}
}

// A cluster whose endpoint has no public access: a DNS failure means the
// management server needs a tunnel (privateRequiresTunnel true, Connected
// False TunnelRequired); another dial error leaves it undetermined and is
// retried; a connection means no tunnel is needed.
func TestPrivateEndpointRequiresTunnel(t *testing.T) {
	var dialErr atomic.Pointer[error]
	set := func(err error) { dialErr.Store(&err) }
	set(&net.DNSError{Err: "no such host", Name: "private.eks.local", IsNotFound: true})
	dial := func(ctx context.Context, network, address string) (net.Conn, error) {
		if err := *dialErr.Load(); err != nil {
			return nil, err
		}
		return (&net.Dialer{}).DialContext(ctx, network, address)
	}
	w := importedWith(t, ekstest.ClusterSpec{Name: "private", Version: "1.31", EndpointPrivateAccess: true,
		Nodegroups: []ekstest.NodegroupSpec{{Name: "workers"}}}, nil, dial)
	check := func(wantTunnel *bool, status metav1.ConditionStatus, reason string) {
		t.Helper()
		c := w.cluster(t)
		got := c.Status.EKSStatus.PrivateRequiresTunnel
		if (got == nil) != (wantTunnel == nil) || got != nil && *got != *wantTunnel {
			t.Errorf("privateRequiresTunnel = %v, want %v", show(got), show(wantTunnel))
		}
		if cond := condition(t, c, mgmtv1.ConditionConnected); cond.Status != status || cond.Reason != reason {
			t.Errorf("Connected = %s %s (%s), want %s %s", cond.Status, cond.Reason, cond.Message, status, reason)
		}
	}
	yes, no := true, false
	check(&yes, metav1.ConditionFalse, management.ReasonTunnelRequired)

	set(&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED})
	w.settle(t)
	check(&yes, metav1.ConditionFalse, management.ReasonUnreachable)

	set(nil)
	w.settle(t)
	check(&no, metav1.ConditionTrue, "Connected")
}

func show(b *bool) string {
	if b == nil {
		return "unset"
	}
	if *b {
		return "true"
	}
	return "false"
}
