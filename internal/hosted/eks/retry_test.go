package eks_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/smithy-go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	"github.com/clustersync/clustersync/internal/hosted/eks"
	"github.com/clustersync/clustersync/internal/hosted/eks/ekstest"
)

// sdkAttempts is how many attempts the SDK makes per call in these tests
// (its own retries, without backoff delays).
const sdkAttempts = 2

type noBackoff struct{}

func (noBackoff) BackoffDelay(int, error) (time.Duration, error) { return 0, nil }

// quickRetries makes the SDK retry sdkAttempts times without waiting.
func quickRetries(c *aws.Config) {
	c.Retryer = func() aws.Retryer {
		return retry.NewStandard(func(o *retry.StandardOptions) { o.MaxAttempts = sdkAttempts; o.Backoff = noBackoff{} })
	}
}

// pass runs one reconcile pass and returns its error, which must be nil or
// the retryable AWS error code wantCode.
func pass(t *testing.T, r *operator, key types.NamespacedName, wantCode string) (error, eksv1.EKSClusterConfig) {
	t.Helper()
	_, err := r.Reconcile(context.Background(), reconcileRequest(key))
	var ae smithy.APIError
	if err != nil && (!errors.As(err, &ae) || ae.ErrorCode() != wantCode) {
		t.Fatalf("reconcile: %v (want nil or %s)", err, wantCode)
	}
	var c eksv1.EKSClusterConfig
	if gerr := k.Get(context.Background(), key, &c); gerr != nil {
		t.Fatal(gerr)
	}
	return err, c
}

// Throttling that outlasts the SDK's own retries — EKS, CloudFormation and
// EC2 alike — fails the pass with the error in failureMessage and a
// retry; a later pass applies the change.
func TestThrottlingRetried(t *testing.T) {
	t.Parallel()
	ns, srv, clk, _ := setup(t)
	r := newOperator(eks.NewClientsFactory(srv.URL, quickRetries))
	key := types.NamespacedName{Namespace: ns, Name: "prod"}
	if err := k.Create(context.Background(), &eksv1.EKSClusterConfig{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: ns}, Spec: scratchSpec(ns)}); err != nil {
		t.Fatal(err)
	}
	// Creation: a throttled stack, cluster and launch template version.
	srv.FailNext("CreateStack", "Throttling", 400, sdkAttempts+1)
	srv.FailNext("CreateCluster", "ThrottlingException", 400, sdkAttempts+1)
	srv.FailNext("CreateLaunchTemplateVersion", "RequestLimitExceeded", 503, sdkAttempts+1)
	throttled := map[string]bool{}
	var c eksv1.EKSClusterConfig
	for i := 0; i < 20 && !(c.Status.Phase == eksv1.PhaseActive && c.Status.FailureMessage == ""); i++ {
		var err error
		code := "Throttling"
		switch c.Status.Phase {
		case eksv1.PhaseCreating:
			code = "RequestLimitExceeded"
		case "":
			if srv.Calls()["CreateStack"] > sdkAttempts {
				code = "ThrottlingException"
			}
		}
		if err, c = pass(t, r, key, code); err != nil {
			throttled[code] = true
			if !strings.Contains(c.Status.FailureMessage, code) || !strings.HasSuffix(c.Status.FailureMessage, "(retrying)") {
				t.Errorf("failure message %q for %v", c.Status.FailureMessage, err)
			}
			continue
		}
		clk.Advance(5 * time.Minute)
	}
	if len(throttled) != 3 || c.Status.Phase != eksv1.PhaseActive || c.Status.FailureMessage != "" {
		t.Fatalf("throttled %v; status %+v", throttled, c.Status)
	}
	if snap := mustCluster(t, srv); len(snap.Nodegroups) != 1 {
		t.Errorf("node groups %v", snap.Nodegroups)
	}

	// An update: tags throttled beyond the SDK's retries.
	clk.Advance(11 * time.Minute)
	until(t, r, clk, key, time.Minute, 3, func(c eksv1.EKSClusterConfig) bool { return c.Status.Phase == eksv1.PhaseActive })
	editSpec(t, key, func(s *eksv1.EKSClusterConfigSpec) { (*s.Tags)["cost"] = "42" })
	srv.FailNext("TagResource", "ThrottlingException", 400, sdkAttempts+1)
	before := srv.Calls()["TagResource"]
	if err, c := pass(t, r, key, "ThrottlingException"); err == nil || !strings.Contains(c.Status.FailureMessage, "tag cluster: ") {
		t.Fatalf("throttled tag update: %v, failure %q", err, c.Status.FailureMessage)
	}
	if mustCluster(t, srv).Tags["cost"] != "" {
		t.Fatal("tagged despite the throttling")
	}
	if err, c := pass(t, r, key, ""); err != nil || c.Status.FailureMessage != "" {
		t.Fatalf("retry: %v, failure %q", err, c.Status.FailureMessage)
	}
	if got := srv.Calls()["TagResource"] - before; mustCluster(t, srv).Tags["cost"] != "42" || got != sdkAttempts+2 {
		t.Errorf("tags %v after %d TagResource calls", mustCluster(t, srv).Tags, got)
	}
}

// ResourceInUseException on an update or a create (EKS busy with another
// change) is retried on a later pass; the change is not lost.
func TestResourceInUseRetried(t *testing.T) {
	t.Parallel()
	key, srv, clk, r := activeCluster(t)
	editSpec(t, key, func(s *eksv1.EKSClusterConfigSpec) {
		size := int64(3)
		(*s.NodeGroups)[0].DesiredSize = &size
		p := func(s string) *string { return &s }
		*s.NodeGroups = append(*s.NodeGroups, eksv1.NodeGroup{NodegroupName: "extra", InstanceType: p("t3.small"), NodeRole: p("arn:aws:iam::123456789012:role/nodes")})
	})
	srv.FailNext("CreateNodegroup", "ResourceInUseException", 409, 1)
	err, c := pass(t, r, key, "ResourceInUseException")
	if err == nil || !strings.Contains(c.Status.FailureMessage, "create node group extra") || !strings.HasSuffix(c.Status.FailureMessage, "(retrying)") {
		t.Fatalf("busy create: %v, failure %q", err, c.Status.FailureMessage)
	}
	if _, ok := mustCluster(t, srv).Nodegroups["extra"]; ok {
		t.Fatal("node group created despite the error")
	}
	if err, c = pass(t, r, key, ""); err != nil || c.Status.FailureMessage != "" {
		t.Fatalf("retried create: %v, failure %q", err, c.Status.FailureMessage)
	}
	clk.Advance(11 * time.Minute) // node group "extra" ACTIVE
	srv.FailNext("UpdateNodegroupConfig", "ResourceInUseException", 409, 1)
	if err, c = pass(t, r, key, "ResourceInUseException"); err == nil || !strings.Contains(c.Status.FailureMessage, "node group workers desiredSize") {
		t.Fatalf("busy update: %v, failure %q", err, c.Status.FailureMessage)
	}
	c = until(t, r, clk, key, 6*time.Minute, 4, func(c eksv1.EKSClusterConfig) bool { return c.Status.Phase == eksv1.PhaseActive })
	snap := mustCluster(t, srv)
	if c.Status.FailureMessage != "" || snap.Nodegroups["workers"].DesiredSize != 3 || snap.Nodegroups["extra"].Status != ekstest.StatusActive {
		t.Errorf("failure %q, node groups %+v", c.Status.FailureMessage, snap.Nodegroups)
	}
	if calls := srv.Calls(); calls["UpdateNodegroupConfig"] != 2 || calls["CreateNodegroup"] != 3 {
		t.Errorf("calls %v", calls)
	}
}
