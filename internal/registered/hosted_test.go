package registered_test

import (
	"context"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/eks"
	"github.com/clustersync/clustersync/internal/hosted/eks/ekstest"
	"github.com/clustersync/clustersync/internal/hosted/hostedtest"
	"github.com/clustersync/clustersync/internal/hosted/management"
	"github.com/clustersync/clustersync/internal/manager"
	"github.com/clustersync/clustersync/internal/registered/agent"
	"github.com/clustersync/clustersync/internal/registered/controller"
	"github.com/clustersync/clustersync/internal/registered/kubetoken"
	"github.com/clustersync/clustersync/internal/registered/registration"
	"github.com/clustersync/clustersync/internal/registered/server"
)

// hostedCloud plays the API server of the EKS clusters the emulator
// reports (ekstest.Options.EndpointFor).
func hostedCloud(t *testing.T, private string) (*ekstest.Server, string) {
	t.Helper()
	ctx := context.Background()
	endpoint, ca := cloud.APIServer(t)
	if _, err := cloud.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "cloud-admin"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	_ = cloud.Kube.CoreV1().ServiceAccounts("cloud-admin").Delete(ctx, "admin", metav1.DeleteOptions{})
	admin := cloud.AdminToken(t, "cloud-admin")
	srv := ekstest.New(ekstest.Options{Region: "us-west-2", CertificateAuthorityFor: func(string) []byte { return ca },
		EndpointFor: func(name string) string {
			if name == private {
				return "https://" + private + ".invalid" // no DNS name: the manager cannot dial it
			}
			return endpoint
		}})
	t.Cleanup(srv.Close)
	if _, err := mgmt.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: hostedv1.Namespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	cred := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "aws", Namespace: hostedv1.Namespace},
		StringData: map[string]string{eks.AccessKeyField: "a", eks.SecretKeyField: "b"}}
	if err := mgmt.Client.Create(ctx, cred); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	return srv, admin
}

// importEKS creates Cluster name importing the emulator's cluster of that
// name, with the team's viewer as a read-only member.
func importEKS(t *testing.T, srv *ekstest.Server, name string, public bool) {
	t.Helper()
	if err := srv.ImportCluster(ekstest.ClusterSpec{Name: name, Version: "1.31", EndpointPublicAccess: public, EndpointPrivateAccess: !public,
		Nodegroups: []ekstest.NodegroupSpec{{Name: "pool1", MinSize: 1, MaxSize: 3, DesiredSize: 1}}}); err != nil {
		t.Fatal(err)
	}
	c := &mgmtv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: mgmtv1.ClusterSpec{DisplayName: name,
		Members:   []mgmtv1.ClusterMember{{Kind: "User", Name: "system:serviceaccount:team:viewer", Role: mgmtv1.RoleReadOnly}},
		EKSConfig: &eksv1.EKSClusterConfigSpec{DisplayName: name, Region: "us-west-2", AmazonCredentialSecret: hostedv1.Namespace + ":aws", Imported: true}}}
	if err := mgmt.Client.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
}

// conditionOf returns c's condition typ, a zero one when it has none.
func conditionOf(c *mgmtv1.Cluster, typ string) metav1.Condition {
	if cond := meta.FindStatusCondition(c.Status.Conditions, typ); cond != nil {
		return *cond
	}
	return metav1.Condition{}
}

// waitCondition waits for condition typ of Cluster name to have status and
// reason, and returns the Cluster.
func waitCondition(t *testing.T, name, typ string, status metav1.ConditionStatus, reason string) *mgmtv1.Cluster {
	t.Helper()
	var c *mgmtv1.Cluster
	waitFor(t, name+" "+typ+"="+string(status)+" ("+reason+")", func(context.Context) (bool, error) {
		var err error
		c, err = cluster(t, name)
		cond := conditionOf(c, typ)
		return err == nil && cond.Status == status && cond.Reason == reason, nil
	})
	return c
}

// deleteCluster deletes Cluster name and waits for it to be gone.
func deleteCluster(t *testing.T, name string) {
	t.Helper()
	if err := mgmt.Client.Delete(context.Background(), &mgmtv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	waitFor(t, "Cluster "+name+" gone", func(context.Context) (bool, error) {
		_, err := cluster(t, name)
		return apierrors.IsNotFound(err), nil
	})
}

// A hosted cluster gets the agent: the manager installs it with the
// service-account token it keeps, the agent dials back, and the proxy,
// members, projects and capabilities work as for a registered cluster;
// annotation clustersync.io/agent: "false" removes it. A cluster with a
// private endpoint gets the registration command instead; once that agent
// dials in, Connected turns True.
func TestHostedClusterAgent(t *testing.T) {
	hostedtest.Require(t, mgmt)
	ctx := context.Background()
	srv, admin := hostedCloud(t, "private")
	serverURL := startManagerWith(t, manager.Options{EKSEndpoint: srv.URL, EKSRefresh: 2 * time.Second, EKSPoll: 500 * time.Millisecond,
		Tokens: func(context.Context, string, map[string][]byte, string) (string, error) { return admin, nil }})
	ca := fetchInsecure(t, serverURL+"/v1/cacerts")

	importEKS(t, srv, "public", true)
	t.Cleanup(func() { deleteCluster(t, "public") })
	c := waitCondition(t, "public", mgmtv1.ConditionAgentConnected, metav1.ConditionFalse, controller.ReasonAgentInstalled)
	var crt mgmtv1.ClusterRegistrationToken
	if err := mgmt.Client.Get(ctx, types.NamespacedName{Namespace: server.TokenNamespace, Name: "public"}, &crt); err != nil {
		t.Fatal(err)
	}
	creds, err := cloud.Kube.CoreV1().Secrets(registration.AgentNamespace).Get(ctx, registration.CredentialsSecret, metav1.GetOptions{})
	if err != nil || string(creds.Data["token"]) != crt.Status.Token || string(creds.Data["url"]) != serverURL {
		t.Fatalf("the agent's credentials Secret: %v %v", creds, err)
	}
	dep, err := cloud.Kube.AppsV1().Deployments(registration.AgentNamespace).Get(ctx, registration.AgentName, metav1.GetOptions{})
	if err != nil || dep.Spec.Template.Spec.Containers[0].Image != "example.com/clustersync:test" {
		t.Fatalf("the agent's Deployment: %v %v", dep, err)
	}
	if m := dep.ManagedFields; len(m) == 0 || m[0].Manager != controller.FieldManager {
		t.Errorf("the Deployment's field managers: %+v, want %s by server-side apply", m, controller.FieldManager)
	}
	if c.Status.Driver != mgmtv1.DriverEKS || c.Status.Phase != mgmtv1.PhaseActive {
		t.Errorf("driver %q phase %q: the hosted controller's, not the registered one's", c.Status.Driver, c.Status.Phase)
	}

	// The agent, as its Deployment would run it.
	stopAgent, _ := startAgentIn(t, cloud, "", "")
	c = waitCondition(t, "public", mgmtv1.ConditionAgentConnected, metav1.ConditionTrue, "Connected")
	if a := c.Status.Agent; a == nil || a.LastPing == nil || a.KubeSystemUID == "" {
		t.Errorf("status.agent %+v", a)
	}
	var note string
	waitFor(t, "event AgentConnected", func(ctx context.Context) (bool, error) {
		list, err := mgmt.Kube.EventsV1().Events("").List(ctx, metav1.ListOptions{FieldSelector: "reason=AgentConnected,regarding.name=public"})
		if err != nil || len(list.Items) == 0 {
			return false, err
		}
		note = list.Items[0].Note
		return true, nil
	})
	if !strings.Contains(note, "after the cluster was provisioned") {
		t.Errorf("event AgentConnected: %q", note)
	}
	t.Logf("figure: %s (in process: the agent starts as soon as its Deployment exists)", note)
	if c.Status.Phase != mgmtv1.PhaseActive || conditionOf(c, mgmtv1.ConditionConnected).Reason != "Connected" {
		t.Errorf("phase %s, Connected %+v", c.Status.Phase, conditionOf(c, mgmtv1.ConditionConnected))
	}

	t.Run("projects, capabilities and members", func(t *testing.T) {
		waitFor(t, "the Default and System projects", func(ctx context.Context) (bool, error) {
			var sys mgmtv1.Project
			err := mgmt.Client.Get(ctx, types.NamespacedName{Name: "public-system"}, &sys)
			return err == nil && strings.Contains(strings.Join(sys.Status.Namespaces, ","), "kube-system"), nil
		})
		c = waitCondition(t, "public", mgmtv1.ConditionCapabilitiesValid, metav1.ConditionTrue, "Valid")
		if c.Status.Capabilities == nil {
			t.Error("no status.capabilities")
		}
		cfg := rest.AnonymousClientConfig(mgmt.Config)
		cfg.BearerToken = token(t, mgmt, "team", "viewer")
		kc, _, err := kubetoken.Request(ctx, cfg, serverURL, ca, "public", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		path := writeTemp(t, kc)
		if out := kubectl(t, nil, "--kubeconfig", path, "get", "ns", "-o", "name"); !strings.Contains(out, "namespace/kube-system") {
			t.Errorf("a member's get ns through the proxy: %s", out)
		}
		out, err := kubectlErr(nil, "--kubeconfig", path, "-n", "default", "create", "configmap", "nope")
		if err == nil || !strings.Contains(out, `User "system:serviceaccount:team:viewer" cannot create`) {
			t.Errorf("a read-only member's write: %v %s", err, out)
		}
	})

	var firstCleanup types.UID
	t.Run("annotation agent false removes it", func(t *testing.T) {
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			c, err := cluster(t, "public")
			if err != nil {
				return err
			}
			metav1.SetMetaDataAnnotation(&c.ObjectMeta, mgmtv1.AnnotationAgent, "false")
			return mgmt.Client.Update(ctx, c)
		}); err != nil {
			t.Fatal(err)
		}
		c = waitCondition(t, "public", mgmtv1.ConditionAgentConnected, metav1.ConditionFalse, controller.ReasonAgentDisabled)
		if c.Status.Agent != nil {
			t.Errorf("status.agent after removal: %+v", c.Status.Agent)
		}
		job, err := cloud.Kube.BatchV1().Jobs(agent.CleanupNamespace).Get(ctx, agent.CleanupName, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the cleanup Job: %v", err)
		}
		finishJob(t, job)
		firstCleanup = job.UID
		if err := mgmt.Client.Get(ctx, types.NamespacedName{Namespace: server.TokenNamespace, Name: "public"}, &crt); !apierrors.IsNotFound(err) {
			t.Errorf("the registration token after removal: %v", err)
		}
		// What the Job runs.
		if err := agent.Cleanup(ctx, cloud.Kube); err != nil {
			t.Fatal(err)
		}
		_ = stopAgent()
		waitFor(t, "namespace "+registration.AgentNamespace+" gone", func(ctx context.Context) (bool, error) {
			_, err := cloud.Kube.CoreV1().Namespaces().Get(ctx, registration.AgentNamespace, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		if c, _ := cluster(t, "public"); c.Status.Phase != mgmtv1.PhaseActive {
			t.Errorf("phase %s after removing the agent, want Active", c.Status.Phase)
		}
	})
	deleteCluster(t, "public")

	t.Run("private endpoint", func(t *testing.T) {
		importEKS(t, srv, "private", false)
		t.Cleanup(func() { deleteCluster(t, "private") })
		c := waitCondition(t, "private", mgmtv1.ConditionAgentConnected, metav1.ConditionFalse, controller.ReasonAgentRegistrationRequired)
		if got := conditionOf(c, mgmtv1.ConditionConnected); got.Reason != management.ReasonTunnelRequired {
			t.Fatalf("Connected %+v, want reason %s", got, management.ReasonTunnelRequired)
		}
		if _, err := cloud.Kube.AppsV1().Deployments(registration.AgentNamespace).Get(ctx, registration.AgentName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("the manager installed an agent it cannot reach: %v", err)
		}
		// Someone inside the network runs the registration command.
		var crt mgmtv1.ClusterRegistrationToken
		waitFor(t, "the registration command", func(ctx context.Context) (bool, error) {
			err := mgmt.Client.Get(ctx, types.NamespacedName{Namespace: server.TokenNamespace, Name: "private"}, &crt)
			return err == nil && crt.Status.ManifestURL != "", nil
		})
		kubectl(t, fetchInsecure(t, crt.Status.ManifestURL), "--kubeconfig", cloud.Kubeconfig, "apply", "-f", "-")
		startAgentIn(t, cloud, "", "")
		c = waitCondition(t, "private", mgmtv1.ConditionConnected, metav1.ConditionTrue, management.ReasonAgentConnected)
		if !meta.IsStatusConditionTrue(c.Status.Conditions, mgmtv1.ConditionReady) {
			t.Errorf("Ready %+v once connected through the agent", conditionOf(c, mgmtv1.ConditionReady))
		}
		cfg := rest.AnonymousClientConfig(mgmt.Config)
		cfg.BearerToken = token(t, mgmt, "team", "viewer")
		kc, _, err := kubetoken.Request(ctx, cfg, serverURL, ca, "private", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if out := kubectl(t, nil, "--kubeconfig", writeTemp(t, kc), "get", "ns", "-o", "name"); !strings.Contains(out, "namespace/kube-system") {
			t.Errorf("a member's get ns through the proxy: %s", out)
		}
		// Deleting the Cluster of an imported cluster disconnects it.
		// The first cleanup Job, finished, is still there (for 10 minutes):
		// a new one replaces it.
		deleteCluster(t, "private")
		if job, err := cloud.Kube.BatchV1().Jobs(agent.CleanupNamespace).Get(ctx, agent.CleanupName, metav1.GetOptions{}); err != nil || job.UID == firstCleanup {
			t.Errorf("the cleanup Job after deleting the Cluster: %v (the first one: %v)", err, job.UID == firstCleanup)
		}
		if err := agent.Cleanup(ctx, cloud.Kube); err != nil {
			t.Fatal(err)
		}
		removeCleanupJob(t)
	})
}

// finishJob marks job Complete, as the Job controller does when its pod
// succeeded (the cloud's cluster has no node to run it); the Job
// controller's own status (its start time) is kept.
func finishJob(t *testing.T, job *batchv1.Job) {
	t.Helper()
	jobs := cloud.Kube.BatchV1().Jobs(job.Namespace)
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		j, err := jobs.Get(context.Background(), job.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		now := metav1.Now()
		if j.Status.StartTime == nil {
			j.Status.StartTime = &now
		}
		j.Status.CompletionTime, j.Status.Succeeded, j.Status.Active, j.Status.Ready = &now, 1, 0, ptr.To(int32(0))
		j.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now}}
		_, err = jobs.UpdateStatus(context.Background(), j, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatalf("finishing Job %s/%s: %v", job.Namespace, job.Name, err)
	}
}

// removeCleanupJob deletes the cleanup Job and its ServiceAccount from the
// cloud's cluster (no node runs it there), so that the next one is seen.
func removeCleanupJob(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	bg := metav1.DeletePropagationBackground
	if err := cloud.Kube.BatchV1().Jobs(agent.CleanupNamespace).Delete(ctx, agent.CleanupName, metav1.DeleteOptions{PropagationPolicy: &bg}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the cleanup Job gone", func(ctx context.Context) (bool, error) {
		_, err := cloud.Kube.BatchV1().Jobs(agent.CleanupNamespace).Get(ctx, agent.CleanupName, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	_ = cloud.Kube.CoreV1().ServiceAccounts(agent.CleanupNamespace).Delete(ctx, agent.CleanupName, metav1.DeleteOptions{})
}
