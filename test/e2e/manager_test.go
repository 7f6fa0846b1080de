package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"helm.sh/helm/v3/pkg/action"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubectl/pkg/util/podutils"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/charts"
	"github.com/clustersync/clustersync/internal/dashboard"
	"github.com/clustersync/clustersync/internal/hostcluster"
	"github.com/clustersync/clustersync/internal/manager"
	"github.com/clustersync/clustersync/internal/ports"
	"github.com/clustersync/clustersync/internal/registered/agent"
	"github.com/clustersync/clustersync/internal/registered/registration"
	"github.com/clustersync/clustersync/internal/testenv"
	"github.com/clustersync/clustersync/internal/testenv/chrome"
)

// charts/manager installed with Helm on the local host's real node, and a
// cluster imported through it as a user imports one:
//   - two manager replicas run, exactly one — the Lease holder — is Ready
//     (only the leader listens for registered clusters), and the Service's
//     endpoints are that pod;
//   - the external URL is set to the Service (by its cluster IP: the local
//     host has no cluster DNS), `cluster import` prints the curl | kubectl
//     apply command, the agent and its cleanup Job run as real pods of the
//     clustersync image, the agent dials the manager through the Service and
//     the Cluster turns Active;
//   - when the leader pod is deleted, the other replica takes the Lease,
//     becomes the Service's one endpoint, and the agent's tunnel comes back
//     to it (a ping through the tunnel after the failover);
//   - a user signed in to the dashboard in the browser through the
//     dashboard Service stays signed in on each replica (leader or not),
//     after the upgrade restarts every replica and after the leader's
//     deletion; signing out through the Service ends the session on every
//     replica;
//   - `kubectl delete cluster` runs the cleanup Job to completion and the
//     agent is gone;
//   - a hosted cluster gets the agent (hostedAgent): with `dev aks
//     --endpoint-of-host`, the AKS cluster of examples/hosted is the host
//     itself, the manager installs the agent as a pod of the real node and
//     it dials back; annotation clustersync.io/agent: "false" removes it;
//   - uninstalling removes the manager's pods.
func TestManagerChart(t *testing.T) {
	devUpReal(t)
	pushImages(t)
	kubeconfig := filepath.Join(tests.Dir, "host", "kubeconfig.yaml")
	host := clientFor(t, kubeconfig)
	const ns = "cs-manager"
	if err := host.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	c, err := charts.Load(charts.ManagerName)
	if err != nil {
		t.Fatal(err)
	}
	cfg := helmConfig(t, kubeconfig, ns)
	in := action.NewInstall(cfg)
	in.ReleaseName, in.Namespace = "mgr", ns
	values := map[string]any{"image": map[string]any{"tag": "e2e"}}
	if _, err := in.RunWithContext(ctx, c, values); err != nil {
		t.Fatalf("helm install charts/manager: %v", err)
	}
	leader := func() string {
		t.Helper()
		var ready string
		testenv.Eventually(t, 3*time.Minute, func() error {
			var err error
			ready, err = managerLeader(host, ns, "mgr")
			return err
		})
		return ready
	}
	leader()
	dash := signInDashboard(t, host, hostClientset(t, kubeconfig), ns, "mgr")

	// The Service's address as the external URL (helm upgrade: the
	// manager restarts with it and issues its serving certificate for it).
	var svc corev1.Service
	if err := host.Get(ctx, client.ObjectKey{Namespace: ns, Name: "mgr"}, &svc); err != nil {
		t.Fatal(err)
	}
	values["externalURL"] = "https://" + svc.Spec.ClusterIP
	up := action.NewUpgrade(cfg)
	up.Namespace = ns
	if _, err := up.RunWithContext(ctx, "mgr", c, values); err != nil {
		t.Fatalf("helm upgrade --set externalURL: %v", err)
	}
	testenv.Eventually(t, 3*time.Minute, func() error {
		var d appsv1.Deployment
		if err := host.Get(ctx, client.ObjectKey{Namespace: ns, Name: "mgr"}, &d); err != nil {
			return err
		}
		if d.Status.ObservedGeneration < d.Generation || d.Status.UpdatedReplicas != 2 || d.Status.Replicas != 2 {
			return fmt.Errorf("rollout: %d updated of %d replicas", d.Status.UpdatedReplicas, d.Status.Replicas)
		}
		return nil
	})
	first := leader()
	dash.signedInEverywhere(t, "after the upgrade restarted every replica")

	scheme, err := manager.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	mc, err := client.New(restConfig(t, kubeconfig), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	cs := hostClientset(t, kubeconfig)
	// The ClusterRegistrationToken's URL is the new leader's.
	importCluster(t, kubeconfig, values["externalURL"].(string), func() (string, error) {
		return cliErr("cluster", "import", "edge", "--kubeconfig", kubeconfig, "--member", "group:system:masters=cluster-owner")
	})
	pingedAfter := func(since time.Time) {
		t.Helper()
		testenv.Eventually(t, 2*time.Minute, func() error {
			var cl mgmtv1.Cluster
			if err := mc.Get(ctx, client.ObjectKey{Name: "edge"}, &cl); err != nil {
				return err
			}
			if cl.Status.Phase != mgmtv1.PhaseActive {
				return fmt.Errorf("cluster edge phase %q (agent: %s; %s)", cl.Status.Phase, podStates(host, registration.AgentNamespace),
					podLogs(cs, registration.AgentNamespace, ""))
			}
			if a := cl.Status.Agent; a == nil || a.LastPing == nil || a.LastPing.Time.Before(since) {
				return fmt.Errorf("cluster edge: no ping through the tunnel since %s", since.Format(time.RFC3339))
			}
			return nil
		})
	}
	pingedAfter(time.Time{})
	var pods corev1.PodList
	if err := host.List(ctx, &pods, client.InNamespace(registration.AgentNamespace)); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 1 || pods.Items[0].Spec.NodeName != hostcluster.RealNodeName || pods.Items[0].Status.Phase != corev1.PodRunning {
		t.Errorf("want the agent pod Running on %s: %s", hostcluster.RealNodeName, podStates(host, registration.AgentNamespace))
	}

	personKubeconfig(t, kubeconfig, pods.Items[0].Name, ns, first)

	if err := host.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: first, Namespace: ns}}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	second := leader()
	if second == first {
		t.Fatalf("pod %s still leads after its deletion", first)
	}
	t.Logf("leader %s deleted; %s leads and is the Service's endpoint after %.1f s", first, second, time.Since(start).Seconds())
	// LastPing has a resolution of one second.
	pingedAfter(start.Truncate(time.Second).Add(time.Second))
	t.Logf("the agent's tunnel answers a ping through the new leader %.1f s after the failover", time.Since(start).Seconds())
	dash.signedInEverywhere(t, "after the leader's deletion")
	dash.signOut(t)

	del := exec.Command("kubectl", "delete", "clusters.management.clustersync.io", "edge", "--wait=false")
	del.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	if out, err := del.CombinedOutput(); err != nil {
		t.Fatalf("kubectl delete cluster edge: %v\n%s", err, out)
	}
	cleanupSucceeded(t, host, cs)
	var jobPods corev1.PodList
	if err := host.List(ctx, &jobPods, client.InNamespace(agent.CleanupNamespace), client.MatchingLabels{"job-name": agent.CleanupName}); err != nil {
		t.Fatal(err)
	}
	for _, p := range jobPods.Items {
		if p.Spec.NodeName != hostcluster.RealNodeName || p.Status.Phase != corev1.PodSucceeded {
			t.Errorf("cleanup pod %s: node %q phase %s, want Succeeded on %s", p.Name, p.Spec.NodeName, p.Status.Phase, hostcluster.RealNodeName)
		}
	}
	testenv.Eventually(t, 2*time.Minute, func() error {
		err := host.Get(ctx, client.ObjectKey{Name: registration.AgentNamespace}, &corev1.Namespace{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("namespace %s still there (%v)", registration.AgentNamespace, err)
		}
		var cl mgmtv1.Cluster
		if err := mc.Get(ctx, client.ObjectKey{Name: "edge"}, &cl); !apierrors.IsNotFound(err) {
			return fmt.Errorf("cluster edge still there (phase %q, %v)", cl.Status.Phase, err)
		}
		return nil
	})

	t.Run("hosted cluster agent", func(t *testing.T) {
		values["aks"] = map[string]any{"endpoint": "http://" + hostedAgentEmulator(t), "refresh": 2, "poll": 1}
		up := action.NewUpgrade(cfg)
		up.Namespace = ns
		if _, err := up.RunWithContext(ctx, "mgr", c, values); err != nil {
			t.Fatalf("helm upgrade --set aks.endpoint: %v", err)
		}
		leader()
		hostedAgent(t, kubeconfig, host, mc, cs)
	})

	if _, err := action.NewUninstall(cfg).Run("mgr"); err != nil {
		t.Fatalf("helm uninstall: %v", err)
	}
	testenv.Eventually(t, 2*time.Minute, func() error {
		if n := containersOf(t, ns); n > 0 {
			return fmt.Errorf("%d manager containers still on the node", n)
		}
		return nil
	})
}

// importCluster runs `cluster import` (run, with the CLI under test) until
// it prints the command that connects a cluster to the manager at url, then
// runs that `curl | kubectl apply` against the cluster of kubeconfig as a
// user does (retried: kube-proxy programs a Service's new endpoint a moment
// after the Endpoints object names it). It returns import's output.
func importCluster(t *testing.T, kubeconfig, url string, run func() (string, error)) string {
	t.Helper()
	var out string
	testenv.Eventually(t, time.Minute, func() error {
		o, err := run()
		if err != nil || !strings.Contains(o, url+"/") {
			return fmt.Errorf("cluster import (want %s): %v\n%s", url, err, o)
		}
		out = o
		return nil
	})
	m := regexp.MustCompile(`(?m)^\s*(curl --insecure -sfL \S+ \| kubectl apply -f -)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("cluster import prints no curl | kubectl command:\n%s", out)
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		apply := exec.Command("bash", "-o", "pipefail", "-c", m[1])
		apply.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
		if o, err := apply.CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %v\n%s", m[1], err, o)
		}
		return nil
	})
	return out
}

// hostedAgentEmulator runs `clustersync dev aks --endpoint-of-host` on
// the real node's address (its pods reach this machine there) until t
// ends, and returns that address.
func hostedAgentEmulator(t *testing.T) string {
	t.Helper()
	addr := net.JoinHostPort(hostcluster.RealNodeIP().String(), fmt.Sprint(ports.ForTest(t, 1)[0]))
	background(t, "AKS emulator on", "dev", "aks", "--addr", addr, "--endpoint-of-host", "--create-delay", "2s", "--update-delay", "1s")
	return addr
}

// hostedAgent is a hosted cluster's agent as a user meets it, with the
// manager chart's manager using the AKS emulator of hostedAgentEmulator:
// kubectl apply of examples/hosted/aks-cluster.yaml (its members added),
// the manager installs the agent, which runs as a pod of the real node and
// dials back; AgentConnected turns True (the event AgentConnected gives
// the time since the cluster was provisioned); `clustersync cluster
// kubeconfig` of a member reaches the cluster through the proxy;
// annotation clustersync.io/agent: "false" runs the cleanup Job's pod to
// completion and the agent is gone; kubectl delete removes the Cluster.
func hostedAgent(t *testing.T, kubeconfig string, host, mc client.Client, cs kubernetes.Interface) {
	t.Helper()
	const name = "demo-aks"
	kubectl(t, kubeconfig, "apply", "-f", filepath.Join("..", "..", "examples", "hosted", "aks-cluster.yaml"))
	t.Cleanup(func() {
		_, _ = kubectlErr(kubeconfig, "delete", "clusters.management.clustersync.io", name, "--ignore-not-found")
	})
	kubectl(t, kubeconfig, "patch", "clusters.management.clustersync.io", name, "--type=merge",
		"-p", `{"spec":{"members":[{"kind":"Group","name":"system:masters","role":"cluster-owner"}]}}`)
	testenv.Eventually(t, 4*time.Minute, func() error {
		var cl mgmtv1.Cluster
		if err := mc.Get(ctx, client.ObjectKey{Name: name}, &cl); err != nil {
			return err
		}
		if cond := meta.FindStatusCondition(cl.Status.Conditions, mgmtv1.ConditionAgentConnected); cond == nil || cond.Status != metav1.ConditionTrue {
			return fmt.Errorf("cluster %s phase %q, AgentConnected %+v (agent: %s; %s)", name, cl.Status.Phase, cond,
				podStates(host, registration.AgentNamespace), podLogs(cs, registration.AgentNamespace, ""))
		}
		return nil
	})
	evs, err := cs.EventsV1().Events("").List(ctx, metav1.ListOptions{FieldSelector: "reason=AgentConnected,regarding.name=" + name})
	if err != nil || len(evs.Items) == 0 {
		t.Errorf("event AgentConnected on cluster %s: %v", name, err)
	} else {
		t.Logf("figure: %s (the agent as a pod of the real node; its image is already there, from cluster edge's agent)", evs.Items[0].Note)
	}
	var pods corev1.PodList
	if err := host.List(ctx, &pods, client.InNamespace(registration.AgentNamespace)); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 1 || pods.Items[0].Spec.NodeName != hostcluster.RealNodeName || pods.Items[0].Status.Phase != corev1.PodRunning {
		t.Errorf("want the agent pod Running on %s: %s", hostcluster.RealNodeName, podStates(host, registration.AgentNamespace))
	}
	path := filepath.Join(t.TempDir(), name+".yaml")
	if out, err := cliErr("cluster", "kubeconfig", name, "--kubeconfig", kubeconfig, "-o", path); err != nil {
		t.Fatalf("cluster kubeconfig %s: %v\n%s", name, err, out)
	}
	if out := kubectl(t, path, "get", "pods", "-n", registration.AgentNamespace, "-o", "name"); !strings.Contains(out, pods.Items[0].Name) {
		t.Errorf("get pods through the proxy lacks the agent pod %s:\n%s", pods.Items[0].Name, out)
	}

	kubectl(t, kubeconfig, "annotate", "clusters.management.clustersync.io", name, mgmtv1.AnnotationAgent+"=false")
	cleanupSucceeded(t, host, cs)
	testenv.Eventually(t, 2*time.Minute, func() error {
		err := host.Get(ctx, client.ObjectKey{Namespace: registration.AgentNamespace, Name: registration.AgentName}, &appsv1.Deployment{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("the agent's Deployment still there (%v)", err)
		}
		var cl mgmtv1.Cluster
		if err := mc.Get(ctx, client.ObjectKey{Name: name}, &cl); err != nil {
			return err
		}
		if cond := meta.FindStatusCondition(cl.Status.Conditions, mgmtv1.ConditionAgentConnected); cond == nil || cond.Reason != "AgentDisabled" {
			return fmt.Errorf("AgentConnected %+v, want reason AgentDisabled", cond)
		}
		return nil
	})
	// The Job's pod is gone with the Job; the next test's cleanup Job is
	// its own.
	bg := metav1.DeletePropagationBackground
	_ = cs.BatchV1().Jobs(agent.CleanupNamespace).Delete(ctx, agent.CleanupName, metav1.DeleteOptions{PropagationPolicy: &bg})
	kubectl(t, kubeconfig, "delete", "clusters.management.clustersync.io", name, "--timeout=2m")
}

// cleanupSucceeded waits (2 minutes at most) for the cleanup Job of a
// disconnect to succeed, showing its pods and log while it has not.
func cleanupSucceeded(t *testing.T, host client.Client, cs kubernetes.Interface) {
	t.Helper()
	testenv.Eventually(t, 2*time.Minute, func() error {
		var job batchv1.Job
		if err := host.Get(ctx, client.ObjectKey{Namespace: agent.CleanupNamespace, Name: agent.CleanupName}, &job); err != nil {
			return err
		}
		if job.Status.Succeeded < 1 {
			return fmt.Errorf("cleanup Job: %d succeeded, %d failed (pods: %s; log: %s)", job.Status.Succeeded, job.Status.Failed,
				podStates(host, agent.CleanupNamespace), podLogs(cs, agent.CleanupNamespace, "job-name="+agent.CleanupName))
		}
		return nil
	})
}

// personKubeconfig gets a kubeconfig of cluster edge as a member does,
// with `clustersync cluster kubeconfig` and the management cluster's admin
// kubeconfig (a client certificate of group system:masters, an owner of
// edge), at the URL the manager publishes, and uses it through the
// manager's proxy: Helm lists the manager's release (namespace ns), and
// kubectl gets, reads the logs of and execs in agent pod agentPod,
// port-forwards to manager pod managerPod's dashboard, and watches.
func personKubeconfig(t *testing.T, kubeconfig, agentPod, ns, managerPod string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "edge.yaml")
	start := time.Now()
	if out, err := cliErr("cluster", "kubeconfig", "edge", "--kubeconfig", kubeconfig, "--ttl", "1h", "-o", path); err != nil {
		t.Fatalf("cluster kubeconfig edge: %v\n%s", err, out)
	}
	t.Logf("cluster kubeconfig edge: %.2f s", time.Since(start).Seconds())
	kubectl := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("kubectl", append([]string{"--kubeconfig", path}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %s through the proxy: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	// Helm through the proxy: the manager's own release is in this
	// cluster.
	releases, err := action.NewList(helmConfig(t, path, ns)).Run()
	if err != nil {
		t.Fatalf("helm list through the proxy: %v", err)
	}
	if len(releases) != 1 || releases[0].Name != "mgr" {
		t.Errorf("helm list -n %s through the proxy: %d releases, want mgr", ns, len(releases))
	}
	if out := kubectl("get", "pods", "-A"); !strings.Contains(out, agentPod) {
		t.Errorf("get pods -A through the proxy lacks the agent pod %s:\n%s", agentPod, out)
	}
	kubectl("logs", "-n", registration.AgentNamespace, agentPod, "--tail", "3")
	if out := kubectl("exec", "-n", registration.AgentNamespace, agentPod, "--", "/clustersync", "version"); !strings.Contains(out, "clustersync") {
		t.Errorf("exec through the proxy: %s", out)
	}
	if out, _ := exec.Command("kubectl", "--kubeconfig", path, "get", "pods", "-n", registration.AgentNamespace, "--watch", "--request-timeout=3s").CombinedOutput(); !strings.Contains(string(out), agentPod) {
		t.Errorf("a watch through the proxy shows no agent pod:\n%s", out)
	}
	port := ports.ForTest(t, 1)[0]
	pf := exec.Command("kubectl", "--kubeconfig", path, "port-forward", "-n", ns, "pod/"+managerPod, fmt.Sprintf("%d:8090", port))
	if err := pf.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = pf.Process.Kill(); _ = pf.Wait() }()
	testenv.Eventually(t, 30*time.Second, func() error {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/login", port))
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET /login through the port-forward: %d", resp.StatusCode)
		}
		return nil
	})
}

// dashboardUser is a user signed in to the dashboard of a manager release
// in a browser, through the release's dashboard Service.
type dashboardUser struct {
	host     client.Client
	ns, rel  string
	base     string // the Service's URL
	browser  context.Context
	cookie   string
	shotsDir string
}

// signInDashboard makes a ServiceAccount allowed to read Clusters and
// signs in with its token in the browser through the dashboard Service of
// release rel.
func signInDashboard(t *testing.T, host client.Client, cs kubernetes.Interface, ns, rel string) *dashboardUser {
	t.Helper()
	const sa = "dashboard-user"
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + sa}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{mgmtv1.GroupVersion.Group}, Resources: []string{"clusters"}, Verbs: []string{"get", "list", "watch"}}}}
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: ns}}}
	for _, o := range []client.Object{role, crb} {
		if err := host.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = host.Delete(context.Background(), o) })
	}
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var svc corev1.Service
	if err := host.Get(ctx, client.ObjectKey{Namespace: ns, Name: rel + "-dashboard"}, &svc); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("..", "..", "bin", "screenshots", "e2e")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	u := &dashboardUser{host: host, ns: ns, rel: rel, base: "http://" + svc.Spec.ClusterIP, browser: chrome.New(t), shotsDir: dir}
	// Retried: kube-proxy programs the new Service a moment after it
	// exists, and a replica serves once it has started.
	testenv.Eventually(t, time.Minute, func() error {
		return chromeErr(u.browser, chromedp.Navigate(u.base+"/login"), chromedp.WaitVisible(chromedp.CSS(`#token`)))
	})
	chrome.Run(t, u.browser, "sign in through the dashboard Service",
		chromedp.SendKeys(chromedp.CSS(`#token`), tr.Status.Token),
		chrome.Follow(`form.login button`),
		chromedp.WaitVisible(chromedp.CSS(`#clusters-table`)))
	u.cookie = chrome.Cookie(t, u.browser, dashboard.CookieName)
	u.shot(t, "manager-dashboard-signed-in")
	return u
}

// chromeErr runs browser actions in a tab and returns their error.
func chromeErr(b context.Context, steps ...chromedp.Action[chromedp.Void]) error {
	return chromedp.Do(b, steps...)
}

// shot saves a screenshot of the browser's page as name.png.
func (u *dashboardUser) shot(t *testing.T, name string) {
	t.Helper()
	png, err := chrome.Capture(u.browser)
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(u.shotsDir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// status is the status of GET URL/ with the user's session cookie,
// redirects not followed.
func (u *dashboardUser) status(url string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/", nil)
	if err != nil {
		return 0, err
	}
	req.AddCookie(&http.Cookie{Name: dashboard.CookieName, Value: u.cookie})
	c := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// replicas are the dashboard URLs of the release's running pods, one each.
func (u *dashboardUser) replicas() ([]string, error) {
	var pods corev1.PodList
	if err := u.host.List(ctx, &pods, client.InNamespace(u.ns), client.MatchingLabels{"app.kubernetes.io/instance": u.rel}); err != nil {
		return nil, err
	}
	var urls []string
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" {
			urls = append(urls, "http://"+net.JoinHostPort(p.Status.PodIP, "8090"))
		}
	}
	if len(urls) != 2 {
		return nil, fmt.Errorf("%d manager pods running, want 2", len(urls))
	}
	return urls, nil
}

// everyReplica checks that GET / with the session cookie answers want on
// every replica (by its pod's address, so each is asked) and through the
// Service.
func (u *dashboardUser) everyReplica(want int) error {
	urls, err := u.replicas()
	if err != nil {
		return err
	}
	for _, url := range append(urls, u.base) {
		got, err := u.status(url)
		if err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("GET %s/ with the session cookie: %d, want %d", url, got, want)
		}
	}
	return nil
}

// signedInEverywhere checks, once the replicas serve, that every replica
// knows the session, and that the browser's page through the Service is
// still the clusters table.
func (u *dashboardUser) signedInEverywhere(t *testing.T, when string) {
	t.Helper()
	testenv.Eventually(t, time.Minute, func() error { return u.everyReplica(http.StatusOK) })
	chrome.Run(t, u.browser, "the clusters page through the Service "+when,
		chromedp.Navigate(u.base+"/"), chromedp.WaitVisible(chromedp.CSS(`#clusters-table`)))
	t.Logf("signed in on both replicas and through the Service %s", when)
}

// signOut signs out in the browser through the Service and checks that
// every replica has forgotten the session.
func (u *dashboardUser) signOut(t *testing.T) {
	t.Helper()
	chrome.Run(t, u.browser, "sign out through the Service",
		chromedp.Navigate(u.base+"/"), chromedp.WaitVisible(chromedp.CSS(`#clusters-table`)),
		chrome.Follow(`form.signout button`), chromedp.WaitVisible(chromedp.CSS(`#token`)))
	testenv.Eventually(t, 10*time.Second, func() error { return u.everyReplica(http.StatusSeeOther) })
	var secrets corev1.SecretList
	if err := u.host.List(ctx, &secrets, client.InNamespace(u.ns), client.HasLabels{dashboard.SessionLabel}); err != nil {
		t.Fatal(err)
	}
	if len(secrets.Items) != 0 {
		t.Errorf("%d session Secrets left after the sign-out", len(secrets.Items))
	}
}

// managerLeader returns the one Ready pod of manager release rel in ns, or
// an error unless two replicas run, exactly one is Ready, it holds the
// leader-election Lease and it is the only endpoint of the release's
// Service.
func managerLeader(host client.Client, ns, rel string) (string, error) {
	var pods corev1.PodList
	if err := host.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"app.kubernetes.io/instance": rel}); err != nil {
		return "", err
	}
	var running, readyPods []string
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		if p.Status.Phase == corev1.PodRunning {
			running = append(running, p.Name)
		}
		if podutils.IsPodReady(&p) {
			readyPods = append(readyPods, p.Name)
		}
	}
	if len(running) != 2 || len(readyPods) != 1 {
		return "", fmt.Errorf("manager pods running %v, ready %v; want 2 running, 1 ready", running, readyPods)
	}
	var lease coordinationv1.Lease
	if err := host.Get(ctx, client.ObjectKey{Namespace: ns, Name: manager.DefaultLeaderElectionID}, &lease); err != nil {
		return "", err
	}
	if id := ptrValue(lease.Spec.HolderIdentity); !strings.HasPrefix(id, readyPods[0]) {
		return "", fmt.Errorf("Lease held by %q, the ready pod is %s", id, readyPods[0])
	}
	var eps corev1.Endpoints
	if err := host.Get(ctx, client.ObjectKey{Namespace: ns, Name: rel}, &eps); err != nil {
		return "", err
	}
	var targets []string
	for _, s := range eps.Subsets {
		for _, a := range s.Addresses {
			if a.TargetRef != nil {
				targets = append(targets, a.TargetRef.Name)
			}
		}
	}
	if len(targets) != 1 || targets[0] != readyPods[0] {
		return "", fmt.Errorf("Service %s leads to %v, want only the leader %s", rel, targets, readyPods[0])
	}
	return readyPods[0], nil
}

// helmConfig is Helm's action configuration for namespace ns of the cluster
// of kubeconfig.
func helmConfig(t *testing.T, kubeconfig, ns string) *action.Configuration {
	t.Helper()
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig, flags.Namespace = &kubeconfig, &ns
	cfg := new(action.Configuration)
	if err := cfg.Init(flags, ns, "secret", func(string, ...any) {}); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func ptrValue(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// podStates describes the pods of namespace ns: name, node, phase and the
// first waiting reason.
func podStates(c client.Client, ns string) string {
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(ns)); err != nil {
		return err.Error()
	}
	var s []string
	for _, p := range pods.Items {
		d := fmt.Sprintf("%s on %q %s", p.Name, p.Spec.NodeName, p.Status.Phase)
		for _, cs := range p.Status.ContainerStatuses {
			if w := cs.State.Waiting; w != nil {
				d += " (" + w.Reason + ": " + w.Message + ")"
			}
		}
		s = append(s, d)
	}
	return "[" + strings.Join(s, "; ") + "]"
}

// podLogs returns the last lines of the logs of the pods of ns that match
// selector.
func podLogs(cs kubernetes.Interface, ns, selector string) string {
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return err.Error()
	}
	var s []string
	for _, p := range pods.Items {
		data, err := cs.CoreV1().Pods(ns).GetLogs(p.Name, &corev1.PodLogOptions{TailLines: ptr.To[int64](10)}).DoRaw(ctx)
		if err != nil {
			data = []byte(err.Error())
		}
		s = append(s, p.Name+": "+strings.TrimSpace(string(data)))
	}
	return strings.Join(s, "\n")
}
