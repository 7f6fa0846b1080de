package registered_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	aksv1 "github.com/clustersync/clustersync/api/aks/v1"
	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	gkev1 "github.com/clustersync/clustersync/api/gke/v1"
	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/aks"
	"github.com/clustersync/clustersync/internal/hosted/aks/akstest"
	"github.com/clustersync/clustersync/internal/hosted/eks"
	"github.com/clustersync/clustersync/internal/hosted/eks/ekstest"
	"github.com/clustersync/clustersync/internal/hosted/gke"
	"github.com/clustersync/clustersync/internal/hosted/gke/gketest"
	"github.com/clustersync/clustersync/internal/hosted/hostedtest"
	"github.com/clustersync/clustersync/internal/hosted/management"
	"github.com/clustersync/clustersync/internal/manager"
	"github.com/clustersync/clustersync/internal/registered/agent"
	"github.com/clustersync/clustersync/internal/registered/controller"
	"github.com/clustersync/clustersync/internal/registered/kubetoken"
	"github.com/clustersync/clustersync/internal/registered/registration"
	"github.com/clustersync/clustersync/internal/registered/server"
)

// clouds are the three emulators of TestHostedClusterAgent, whose
// clusters' API server is cloud's, taking admin as their admin credential.
type clouds struct {
	eks   *ekstest.Server
	aks   *akstest.Server
	gke   *gketest.Server
	admin string
}

// startClouds starts the EKS, AKS and GKE emulators until t ends, every
// cluster's endpoint being cloud's API server, except EKS cluster private,
// whose endpoint has no DNS name (the manager cannot dial it), and writes
// their credential Secrets in the management cluster.
func startClouds(t *testing.T, private string) clouds {
	t.Helper()
	ctx := context.Background()
	endpoint, ca := cloud.APIServer(t)
	if _, err := cloud.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "cloud-admin"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	_ = cloud.Kube.CoreV1().ServiceAccounts("cloud-admin").Delete(ctx, "admin", metav1.DeleteOptions{})
	cs := clouds{admin: cloud.AdminToken(t, "cloud-admin")}
	caFor := func(string) []byte { return ca }
	cs.eks = ekstest.New(ekstest.Options{Region: "us-west-2", CertificateAuthorityFor: caFor,
		EndpointFor: func(name string) string {
			if name == private {
				return "https://" + private + ".invalid"
			}
			return endpoint
		}})
	cs.aks = akstest.New(akstest.Options{CertificateAuthorityFor: caFor, EndpointFor: func(string) string { return endpoint },
		TokenFor: func(string, string) string { return cs.admin }})
	cs.gke = gketest.New(gketest.Options{CertificateAuthorityFor: caFor, EndpointFor: func(string) string { return strings.TrimPrefix(endpoint, "https://") }})
	t.Cleanup(func() { cs.eks.Close(); cs.aks.Close(); cs.gke.Close() })
	if _, err := mgmt.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: hostedv1.Namespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	for name, data := range map[string]map[string]string{
		"aws": {eks.AccessKeyField: "a", eks.SecretKeyField: "b"},
		"azure": {aks.SubscriptionIDField: "sub", aks.TenantIDField: "tenant", aks.ClientIDField: "client", aks.ClientSecretField: "secret",
			aks.EnvironmentField: "AzurePublicCloud"},
		"google": {gke.AuthEncodedJSONField: `{"type": "service_account", "project_id": "clustersync-test"}`},
	} {
		cred := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: hostedv1.Namespace}, StringData: data}
		if err := mgmt.Client.Create(ctx, cred); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	return cs
}

// options are the manager's options for the emulators: short refresh
// and poll periods, the admin token for every cluster's API server.
func (cs clouds) options() manager.Options {
	return manager.Options{
		Clouds: map[string]management.CloudOptions{
			"eks": {Endpoint: cs.eks.URL, Refresh: 2 * time.Second, Poll: 500 * time.Millisecond,
				Credentials: eks.TokenFunc(func(context.Context, string, map[string][]byte, string) (string, error) { return cs.admin, nil })},
			"aks": {Endpoint: cs.aks.URL, Refresh: 2 * time.Second, Poll: 500 * time.Millisecond},
			"gke": {Endpoint: cs.gke.URL, Refresh: 2 * time.Second, Poll: 500 * time.Millisecond, Credentials: gke.StaticCredentials(cs.admin)},
		},
	}
}

// viewer is the read-only member of the clusters of
// TestHostedClusterAgent.
var viewer = []mgmtv1.ClusterMember{{Kind: "User", Name: "system:serviceaccount:team:viewer", Role: mgmtv1.RoleReadOnly}}

// importEKS creates Cluster name importing the emulator's cluster of that
// name (public or private endpoint), viewer a member.
func (cs clouds) importEKS(t *testing.T, name string, public bool) {
	t.Helper()
	if err := cs.eks.ImportCluster(ekstest.ClusterSpec{Name: name, Version: "1.31", EndpointPublicAccess: public, EndpointPrivateAccess: !public,
		Nodegroups: []ekstest.NodegroupSpec{{Name: "pool1", MinSize: 1, MaxSize: 3, DesiredSize: 1}}}); err != nil {
		t.Fatal(err)
	}
	createCluster(t, mgmtv1.ClusterSpec{DisplayName: name, Members: viewer,
		EKSConfig: &eksv1.EKSClusterConfigSpec{DisplayName: name, Region: "us-west-2", AmazonCredentialSecret: hostedv1.Namespace + ":aws", Imported: true}})
}

// importAKS is importEKS for AKS.
func (cs clouds) importAKS(t *testing.T, name string) {
	t.Helper()
	if err := cs.aks.ImportCluster("sub", "rg", akstest.ClusterSpec{Name: name, KubernetesVersion: "1.31", DNSPrefix: name,
		Pools: []akstest.PoolSpec{{Name: "system", Mode: "System", Count: 1}}}); err != nil {
		t.Fatal(err)
	}
	createCluster(t, mgmtv1.ClusterSpec{DisplayName: name, Members: viewer,
		AKSConfig: &aksv1.AKSClusterConfigSpec{ResourceGroup: "rg", ResourceLocation: akstest.DefaultLocation, ClusterName: name,
			AzureCredentialSecret: hostedv1.Namespace + ":azure", Imported: true}})
}

// importGKE is importEKS for GKE.
func (cs clouds) importGKE(t *testing.T, name string) {
	t.Helper()
	if err := cs.gke.ImportCluster("clustersync-test", "us-central1-a", &containerpb.Cluster{Name: name, InitialClusterVersion: "1.31",
		NodePools: []*containerpb.NodePool{{Name: "pool1", InitialNodeCount: 1}}}); err != nil {
		t.Fatal(err)
	}
	createCluster(t, mgmtv1.ClusterSpec{DisplayName: name, Members: viewer,
		GKEConfig: &gkev1.GKEClusterConfigSpec{ProjectID: "clustersync-test", Zone: "us-central1-a", ClusterName: name,
			GoogleCredentialSecret: hostedv1.Namespace + ":google", Imported: true}})
}

// createCluster creates Cluster spec.displayName with spec, deleted when
// t ends.
func createCluster(t *testing.T, spec mgmtv1.ClusterSpec) {
	t.Helper()
	if err := mgmt.Client.Create(context.Background(), &mgmtv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: spec.DisplayName}, Spec: spec}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteCluster(t, spec.DisplayName) })
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
	cs := startClouds(t, "private")
	serverURL := startManagerWith(t, cs.options())
	ca := fetchInsecure(t, serverURL+"/v1/cacerts")

	// One cloud after the other: they share the API server, which one
	// Cluster at a time may have Active with the agent.
	var lastCleanup types.UID
	for _, tc := range []struct {
		driver string
		create func(t *testing.T, name string)
	}{
		{mgmtv1.DriverEKS, func(t *testing.T, name string) { cs.importEKS(t, name, true) }},
		{mgmtv1.DriverAKS, cs.importAKS},
		{mgmtv1.DriverGKE, cs.importGKE},
	} {
		t.Run(tc.driver, func(t *testing.T) {
			name := strings.ToLower(tc.driver) + "-public"
			tc.create(t, name)
			lastCleanup = agentLifecycle(t, serverURL, ca, name, tc.driver, lastCleanup)
			deleteCluster(t, name)
		})
	}

	t.Run("private endpoint", func(t *testing.T) {
		cs.importEKS(t, "private", false)
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
		if job, err := cloud.Kube.BatchV1().Jobs(agent.CleanupNamespace).Get(ctx, agent.CleanupName, metav1.GetOptions{}); err != nil || job.UID == lastCleanup {
			t.Errorf("the cleanup Job after deleting the Cluster: %v (the earlier one: %v)", err, job.UID == lastCleanup)
		}
		if err := agent.Cleanup(ctx, cloud.Kube); err != nil {
			t.Fatal(err)
		}
		removeCleanupJob(t)
	})
}

// agentLifecycle is a hosted cluster's agent, for Cluster name of driver
// just created: the manager installs it (server-side apply), the agent
// (run in process, as its Deployment would) dials back, projects,
// capabilities and a member's kubeconfig work; annotation
// clustersync.io/agent: "false" removes it with a cleanup Job, which
// replaces the finished one of an earlier disconnect (UID earlier). It
// returns the UID of its cleanup Job, left finished.
func agentLifecycle(t *testing.T, serverURL string, ca []byte, name, driver string, earlier types.UID) types.UID {
	t.Helper()
	ctx := context.Background()
	c := waitCondition(t, name, mgmtv1.ConditionAgentConnected, metav1.ConditionFalse, controller.ReasonAgentInstalled)
	var crt mgmtv1.ClusterRegistrationToken
	if err := mgmt.Client.Get(ctx, types.NamespacedName{Namespace: server.TokenNamespace, Name: name}, &crt); err != nil {
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
	if c.Status.Driver != driver || c.Status.Phase != mgmtv1.PhaseActive {
		t.Errorf("driver %q phase %q: the hosted controller's, not the registered one's", c.Status.Driver, c.Status.Phase)
	}

	// The agent, as its Deployment would run it.
	stopAgent, _ := startAgentIn(t, cloud, "", "")
	c = waitCondition(t, name, mgmtv1.ConditionAgentConnected, metav1.ConditionTrue, "Connected")
	if a := c.Status.Agent; a == nil || a.LastPing == nil || a.KubeSystemUID == "" {
		t.Errorf("status.agent %+v", a)
	}
	var note string
	waitFor(t, "event AgentConnected", func(ctx context.Context) (bool, error) {
		list, err := mgmt.Kube.EventsV1().Events("").List(ctx, metav1.ListOptions{FieldSelector: "reason=AgentConnected,regarding.name=" + name})
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
			err := mgmt.Client.Get(ctx, types.NamespacedName{Name: name + "-system"}, &sys)
			return err == nil && strings.Contains(strings.Join(sys.Status.Namespaces, ","), "kube-system"), nil
		})
		c = waitCondition(t, name, mgmtv1.ConditionCapabilitiesValid, metav1.ConditionTrue, "Valid")
		if c.Status.Capabilities == nil {
			t.Error("no status.capabilities")
		}
		cfg := rest.AnonymousClientConfig(mgmt.Config)
		cfg.BearerToken = token(t, mgmt, "team", "viewer")
		kc, _, err := kubetoken.Request(ctx, cfg, serverURL, ca, name, time.Hour)
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

	var cleanup types.UID
	t.Run("the agent goes away and comes back", func(t *testing.T) {
		// Within a minute of the install: the condition follows the
		// tunnel, not the last apply.
		_ = stopAgent()
		down := time.Now()
		waitCondition(t, name, mgmtv1.ConditionAgentConnected, metav1.ConditionFalse, controller.ReasonAgentInstalled)
		if d := time.Since(down); d > controller.Reinstall/2 {
			t.Errorf("AgentConnected turned False %s after the agent went, want it at once (the ping), not at the next install", d.Round(time.Second))
		}
		stopAgent, _ = startAgentIn(t, cloud, "", "")
		waitCondition(t, name, mgmtv1.ConditionAgentConnected, metav1.ConditionTrue, "Connected")
	})

	t.Run("annotation agent false removes it", func(t *testing.T) {
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			c, err := cluster(t, name)
			if err != nil {
				return err
			}
			metav1.SetMetaDataAnnotation(&c.ObjectMeta, mgmtv1.AnnotationAgent, "false")
			return mgmt.Client.Update(ctx, c)
		}); err != nil {
			t.Fatal(err)
		}
		c = waitCondition(t, name, mgmtv1.ConditionAgentConnected, metav1.ConditionFalse, controller.ReasonAgentDisabled)
		if c.Status.Agent != nil {
			t.Errorf("status.agent after removal: %+v", c.Status.Agent)
		}
		// The earlier cluster's cleanup Job, finished, is still there
		// (for 10 minutes): a new one replaced it.
		job, err := cloud.Kube.BatchV1().Jobs(agent.CleanupNamespace).Get(ctx, agent.CleanupName, metav1.GetOptions{})
		if err != nil || job.UID == earlier {
			t.Fatalf("the cleanup Job: %v (the earlier one: %v)", err, job.UID == earlier)
		}
		finishJob(t, job)
		cleanup = job.UID
		if err := mgmt.Client.Get(ctx, types.NamespacedName{Namespace: server.TokenNamespace, Name: name}, &crt); !apierrors.IsNotFound(err) {
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
		if c, _ := cluster(t, name); c.Status.Phase != mgmtv1.PhaseActive {
			t.Errorf("phase %s after removing the agent, want Active", c.Status.Phase)
		}
	})
	return cleanup
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
