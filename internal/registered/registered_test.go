package registered_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/hostedtest"
	"github.com/clustersync/clustersync/internal/manager"
	"github.com/clustersync/clustersync/internal/registered"
	"github.com/clustersync/clustersync/internal/registered/agent"
	"github.com/clustersync/clustersync/internal/registered/controller"
	"github.com/clustersync/clustersync/internal/registered/kubetoken"
	"github.com/clustersync/clustersync/internal/registered/registration"
	"github.com/clustersync/clustersync/internal/registered/server"
	"github.com/clustersync/clustersync/internal/registered/tunnel"
	"github.com/clustersync/clustersync/internal/testenv"
)

// mgmt is the management cluster, down the cluster being registered: each
// a real kube-apiserver with etcd and kube-controller-manager.
var mgmt, down *hostedtest.Env

// cloud plays the API server of the emulated EKS clusters of
// TestHostedClusterAgent.
var cloud *hostedtest.Env

// k3s is a third cluster whose kube-apiserver is the same build linked
// with version "v1.37.0+k3s1".
var k3s *hostedtest.Env

func TestMain(m *testing.M) {
	os.Exit(hostedtest.MainMany(m,
		hostedtest.Cluster{Name: "mgmt", CRDs: true, Env: &mgmt},
		hostedtest.Cluster{Name: "down", Env: &down},
		hostedtest.Cluster{Name: "k3s", K3s: true, Env: &k3s},
		hostedtest.Cluster{Name: "cloud", Env: &cloud}))
}

func waitFor(t testing.TB, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 90*time.Second, true, cond); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func cluster(t testing.TB, name string) (*mgmtv1.Cluster, error) {
	t.Helper()
	var c mgmtv1.Cluster
	err := mgmt.Client.Get(context.Background(), types.NamespacedName{Name: name}, &c)
	return &c, err
}

// kubectl runs kubectl with args and stdin, failing t on error.
func kubectl(t testing.TB, stdin []byte, args ...string) string {
	t.Helper()
	out, err := kubectlErr(stdin, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func kubectlErr(stdin []byte, args ...string) (string, error) {
	cmd := exec.Command("kubectl", args...)
	cmd.Stdin = bytes.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// fetchInsecure is `curl --insecure -sfL url`.
func fetchInsecure(t testing.TB, url string) []byte {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, Timeout: 30 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	return b
}

// token returns a TokenRequest token of service account ns/name in env,
// creating the account (and ns) when missing.
func token(t testing.TB, env *hostedtest.Env, ns, name string) string {
	t.Helper()
	ctx := context.Background()
	if _, err := env.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if _, err := env.Kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	tr, err := env.Kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(3600))}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// writeTemp writes data to a file of t's and returns its path.
func writeTemp(t testing.TB, data []byte) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "data")
	if err := os.WriteFile(f, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// startAgent runs the agent as the Deployment of the applied manifest
// would: with the agent service account's token, and the server, checksum
// and cluster from the Deployment's environment ("" keeps those). The
// returned function stops it and returns Run's result.
func startAgent(t testing.TB, cluster, checksum string) func() error {
	stop, _ := startAgentIn(t, down, cluster, checksum)
	return stop
}

// gaveUp waits for an agent to end by itself and returns its error.
func gaveUp(t testing.TB, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(90 * time.Second):
		t.Fatal("the agent kept running")
		return nil
	}
}

// startAgentDone is startAgent that also returns a channel with Run's
// result when it ends by itself.
func startAgentDone(t testing.TB, cluster, checksum string) (func() error, <-chan error) {
	return startAgentIn(t, down, cluster, checksum)
}

// startAgentIn is startAgentDone for the cluster of env.
func startAgentIn(t testing.TB, env *hostedtest.Env, cluster, checksum string) (func() error, <-chan error) {
	t.Helper()
	var dep appsv1.Deployment
	if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: registration.AgentNamespace, Name: registration.AgentName}, &dep); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	for _, e := range dep.Spec.Template.Spec.Containers[0].Env {
		vars[e.Name] = e.Value
	}
	if checksum == "" {
		checksum = vars[registration.EnvCAChecksum]
	}
	if cluster == "" {
		cluster = vars[registration.EnvCluster]
	}
	cfg := rest.CopyConfig(env.Config)
	if err := rest.LoadTLSFiles(cfg); err != nil {
		t.Fatal(err)
	}
	cfg = &rest.Config{Host: cfg.Host, TLSClientConfig: rest.TLSClientConfig{CAData: cfg.CAData},
		BearerToken: token(t, env, registration.AgentNamespace, registration.AgentName)}
	ctx, cancel := context.WithCancel(context.Background())
	result := make(chan error, 1)
	ended := make(chan error, 1)
	go func() {
		err := agent.Run(ctx, agent.Options{Config: cfg, ServerURL: vars[registration.EnvServer], CAChecksum: checksum, Cluster: cluster,
			MinBackoff: 50 * time.Millisecond, MaxBackoff: 500 * time.Millisecond, Log: logr.Discard()})
		result <- err
		if ctx.Err() == nil {
			ended <- err
		}
	}()
	stopped := false
	var err error
	stop := func() error {
		if !stopped {
			stopped = true
			cancel()
			err = <-result
		}
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return stop, ended
}

// startManager runs `clustersync manager` in process with registered
// clusters on, on a loopback port, until t ends, and returns its URL.
func startManager(t testing.TB) string {
	return startManagerWith(t, manager.Options{})
}

// startManagerWith is startManager with o (its Config, Log, Started and
// Registered options set here).
func startManagerWith(t testing.TB, o manager.Options) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	mctx, stopManager := context.WithCancel(context.Background())
	done := make(chan error, 1)
	o.Config, o.Log, o.Started = mgmt.Config, logr.Discard(), func() { close(started) }
	o.Registered = manager.RegisteredOptions{Listener: l, Ping: 500 * time.Millisecond, AgentImage: "example.com/clustersync:test"}
	go func() { done <- manager.Run(mctx, o) }()
	t.Cleanup(func() { stopManager(); <-done })
	select {
	case <-started:
	case err := <-done:
		t.Fatalf("manager: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("manager not started within a minute")
	}
	return "https://" + l.Addr().String()
}

func condition(c *mgmtv1.Cluster, typ string) metav1.ConditionStatus {
	if cond := meta.FindStatusCondition(c.Status.Conditions, typ); cond != nil {
		return cond.Status
	}
	return ""
}

// The whole registration: import, kubectl applies the served manifest
// (twice), the agent connects and the cluster turns Active with its
// projects; the proxy serves members as themselves; a wrong CA checksum
// and a re-import of the active cluster are refused; the agent restarts;
// deleting the Cluster disconnects it and leaves the workloads running.
func TestRegisteredClusterLifecycle(t *testing.T) {
	hostedtest.Require(t, mgmt)
	ctx := context.Background()
	serverURL := startManager(t)

	// A workload that must survive the disconnect.
	kubectl(t, nil, "--kubeconfig", down.Kubeconfig, "create", "namespace", "apps")
	kubectl(t, nil, "--kubeconfig", down.Kubeconfig, "-n", "apps", "create", "deployment", "web", "--image=nginx")

	members := []mgmtv1.ClusterMember{
		{Kind: "ServiceAccount", Name: "team:viewer", Role: mgmtv1.RoleReadOnly},
		{Kind: "ServiceAccount", Name: "team:owner", Role: mgmtv1.RoleClusterOwner},
	}
	crt, err := registered.Import(ctx, mgmt.Client, "edge", members, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(crt.Status.Command, "kubectl apply -f "+serverURL+"/v1/import/") || !strings.HasPrefix(crt.Status.InsecureCommand, "curl --insecure -sfL ") {
		t.Errorf("commands %q / %q", crt.Status.Command, crt.Status.InsecureCommand)
	}
	waitFor(t, "Pending before the agent connects", func(context.Context) (bool, error) {
		c, err := cluster(t, "edge")
		return err == nil && c.Status.Phase == mgmtv1.PhasePending && condition(c, mgmtv1.ConditionPending) == metav1.ConditionUnknown &&
			condition(c, mgmtv1.ConditionConnected) == metav1.ConditionFalse, err
	})

	// The insecure variant: curl --insecure … | kubectl apply -f -, twice.
	manifest := fetchInsecure(t, crt.Status.ManifestURL)
	kubectl(t, manifest, "--kubeconfig", down.Kubeconfig, "apply", "-f", "-")
	stopAgent := startAgent(t, "", "")
	waitFor(t, "cluster Active", func(context.Context) (bool, error) {
		c, err := cluster(t, "edge")
		return err == nil && c.Status.Phase == mgmtv1.PhaseActive && condition(c, mgmtv1.ConditionReady) == metav1.ConditionTrue, err
	})
	agentDeployment := func() *appsv1.Deployment {
		var dep appsv1.Deployment
		if err := down.Client.Get(ctx, types.NamespacedName{Namespace: registration.AgentNamespace, Name: registration.AgentName}, &dep); err != nil {
			t.Fatal(err)
		}
		return &dep
	}
	before := agentDeployment()
	again := kubectl(t, fetchInsecure(t, crt.Status.ManifestURL), "--kubeconfig", down.Kubeconfig, "apply", "-f", "-")
	if after := agentDeployment(); after.Generation != before.Generation || after.ResourceVersion != before.ResourceVersion {
		t.Errorf("the second apply changed the agent Deployment (generation %d → %d): it would restart the agent", before.Generation, after.Generation)
	}
	for _, line := range strings.Split(strings.TrimSpace(again), "\n") {
		if !strings.HasSuffix(line, " unchanged") {
			t.Errorf("second apply changed something: %q", line)
		}
	}

	c, _ := cluster(t, "edge")
	firstUID := c.UID
	if c.Status.Agent == nil || c.Status.Agent.KubeSystemUID == "" || c.Status.Version == "" || condition(c, mgmtv1.ConditionConnected) != metav1.ConditionTrue {
		t.Fatalf("status after connect: %+v", c.Status)
	}

	t.Run("projects", func(t *testing.T) {
		waitFor(t, "projects with their namespaces", func(ctx context.Context) (bool, error) {
			var def, sys mgmtv1.Project
			if err := mgmt.Client.Get(ctx, types.NamespacedName{Name: "edge-default"}, &def); err != nil {
				return false, nil
			}
			if err := mgmt.Client.Get(ctx, types.NamespacedName{Name: "edge-system"}, &sys); err != nil {
				return false, nil
			}
			return strings.Join(def.Status.Namespaces, ",") == "default" &&
				strings.Join(sys.Status.Namespaces, ",") == "clustersync-system,kube-public,kube-system", nil
		})
		ns, err := down.Kube.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{})
		if err != nil || ns.Annotations[mgmtv1.ProjectAnnotation] != "edge:edge-system" {
			t.Errorf("kube-system annotations %v (%v)", ns.Annotations, err)
		}
		// Moving a namespace: annotate it with the other project.
		kubectl(t, nil, "--kubeconfig", down.Kubeconfig, "annotate", "namespace", "apps", mgmtv1.ProjectAnnotation+"=edge:edge-default")
		waitFor(t, "apps in the Default project", func(ctx context.Context) (bool, error) {
			var def mgmtv1.Project
			err := mgmt.Client.Get(ctx, types.NamespacedName{Name: "edge-default"}, &def)
			return err == nil && strings.Join(def.Status.Namespaces, ",") == "apps,default", err
		})
	})

	t.Run("proxy", func(t *testing.T) {
		server := serverURL + "/k8s/clusters/edge"
		viewer, owner := token(t, mgmt, "team", "viewer"), token(t, mgmt, "team", "owner")
		outsider := token(t, mgmt, "team", "outsider")
		out := kubectl(t, nil, "--kubeconfig", "/dev/null", "--server", server, "--insecure-skip-tls-verify", "--token", viewer, "get", "ns", "-o", "name")
		if !strings.Contains(out, "namespace/apps") || !strings.Contains(out, "namespace/kube-system") {
			t.Errorf("read-only member's get ns: %s", out)
		}
		out, err := kubectlErr(nil, "--kubeconfig", "/dev/null", "--server", server, "--insecure-skip-tls-verify", "--token", viewer, "-n", "apps", "create", "configmap", "nope")
		if err == nil || !strings.Contains(out, "forbidden") || !strings.Contains(out, `User "system:serviceaccount:team:viewer" cannot create`) {
			t.Errorf("read-only member's write: %v %s", err, out)
		}
		kubectl(t, nil, "--kubeconfig", "/dev/null", "--server", server, "--insecure-skip-tls-verify", "--token", owner, "-n", "apps", "create", "configmap", "by-owner")
		out, err = kubectlErr(nil, "--kubeconfig", "/dev/null", "--server", server, "--insecure-skip-tls-verify", "--token", outsider, "get", "ns")
		if err == nil || !strings.Contains(out, "not a member") {
			t.Errorf("non-member: %v %s", err, out)
		}
	})

	t.Run("kubeconfig for a person", func(t *testing.T) {
		ca := fetchInsecure(t, serverURL+"/v1/cacerts")
		as := func(token string) *rest.Config {
			cfg := rest.AnonymousClientConfig(mgmt.Config)
			cfg.BearerToken = token
			return cfg
		}
		viewer := token(t, mgmt, "team", "viewer")
		kc, expires, err := kubetoken.Request(ctx, as(viewer), serverURL, ca, "edge", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Until(expires); d < 59*time.Minute || d > time.Hour {
			t.Errorf("the token expires in %s, want 1h", d)
		}
		path := filepath.Join(t.TempDir(), "edge.yaml")
		if err := os.WriteFile(path, kc, 0o600); err != nil {
			t.Fatal(err)
		}
		// The CA is the manager's: no --insecure-skip-tls-verify.
		if out := kubectl(t, nil, "--kubeconfig", path, "get", "ns", "-o", "name"); !strings.Contains(out, "namespace/apps") {
			t.Errorf("read-only member's get ns with the kubeconfig: %s", out)
		}
		out, err := kubectlErr(nil, "--kubeconfig", path, "-n", "apps", "create", "configmap", "nope")
		if err == nil || !strings.Contains(out, `User "system:serviceaccount:team:viewer" cannot create`) {
			t.Errorf("read-only member's write with the kubeconfig: %v %s", err, out)
		}
		cfg, err := clientcmd.Load(kc)
		if err != nil {
			t.Fatal(err)
		}
		tok := cfg.AuthInfos["edge"].Token
		if !strings.HasPrefix(tok, kubetoken.TokenPrefix) || strings.Contains(string(kc), viewer) {
			t.Fatalf("the kubeconfig's token is not a kubeconfig token of its own")
		}
		// The refusals, as kubectl prints them.
		if _, _, err := kubetoken.Request(ctx, as(token(t, mgmt, "team", "outsider")), serverURL, ca, "edge", 0); err == nil ||
			!strings.Contains(err.Error(), "system:serviceaccount:team:outsider is not a member of cluster edge") || !strings.Contains(err.Error(), "HTTP 403") {
			t.Errorf("a non-member's kubeconfig: %v", err)
		}
		if _, _, err := kubetoken.Request(ctx, as(viewer), serverURL, ca, "edge", 1000*time.Hour); err == nil || !strings.Contains(err.Error(), "HTTP 400") {
			t.Errorf("a ttl of 1000h: %v", err)
		}
		if _, _, err := kubetoken.Request(ctx, as(tok), serverURL, ca, "edge", 0); err == nil || !strings.Contains(err.Error(), "HTTP 401") {
			t.Errorf("a kubeconfig token asking for another kubeconfig: %v", err)
		}
		// The management cluster's admin, by its client certificate: known
		// (by its common name), and not a member.
		if _, _, err := kubetoken.Request(ctx, mgmt.Config, serverURL, ca, "edge", 0); err == nil || !strings.Contains(err.Error(), "is not a member of cluster edge") {
			t.Errorf("a client certificate of the management cluster: %v", err)
		}
		proxied := func(token, cluster string) string {
			out, _ := kubectlErr(nil, "--kubeconfig", "/dev/null", "--server", serverURL+"/k8s/clusters/"+cluster, "--certificate-authority", writeTemp(t, ca), "--token", token, "get", "ns")
			return out
		}
		if out := proxied(tok, "elsewhere"); !strings.Contains(out, "this kubeconfig token is for cluster edge, not elsewhere") {
			t.Errorf("the token at another cluster: %s", out)
		}
		if out := proxied(kubetoken.TokenPrefix+"made-up", "edge"); !strings.Contains(out, "the kubeconfig token is unknown or was revoked") {
			t.Errorf("a made-up kubeconfig token: %s", out)
		}
		// Expired: issued 9 hours ago for 8.
		old := &kubetoken.Issuer{Client: mgmt.Client, Namespace: server.TokenNamespace, Now: func() time.Time { return time.Now().Add(-9 * time.Hour) }}
		expired, _, err := old.Issue(ctx, kubetoken.User{Name: "system:serviceaccount:team:viewer"}, "edge", metav1.OwnerReference{}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if out := proxied(expired, "edge"); !strings.Contains(out, "the kubeconfig token expired at ") {
			t.Errorf("an expired kubeconfig token: %s", out)
		}
		// Revoked: its Secret deleted.
		if err := mgmt.Client.DeleteAllOf(ctx, &corev1.Secret{}, client.InNamespace(server.TokenNamespace), client.MatchingLabels{kubetoken.ClusterLabel: "edge"}); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 10*time.Second, func() error {
			if out := proxied(tok, "edge"); !strings.Contains(out, "the kubeconfig token is unknown or was revoked") {
				return fmt.Errorf("a revoked kubeconfig token: %s", out)
			}
			return nil
		})
	})

	t.Run("wrong CA checksum refused", func(t *testing.T) {
		bad := registration.CAChecksum([]byte("not the server's CA"))
		_, ended := startAgentDone(t, "", bad)
		err := gaveUp(t, ended)
		var ce *tunnel.CAChecksumError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), bad) {
			t.Errorf("agent with a wrong checksum: %v", err)
		}
	})

	t.Run("re-import of an active cluster refused", func(t *testing.T) {
		if _, err := registered.Import(ctx, mgmt.Client, "edge-again", nil, time.Minute); err != nil {
			t.Fatal(err)
		}
		var crt2 mgmtv1.ClusterRegistrationToken
		if err := mgmt.Client.Get(ctx, types.NamespacedName{Namespace: "clustersync-global-data", Name: "edge-again"}, &crt2); err != nil {
			t.Fatal(err)
		}
		// Same downstream cluster (its kube-system UID), other record with
		// its own valid token.
		ks, err := down.Kube.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var dep appsv1.Deployment
		if err := down.Client.Get(ctx, types.NamespacedName{Namespace: registration.AgentNamespace, Name: registration.AgentName}, &dep); err != nil {
			t.Fatal(err)
		}
		env := map[string]string{}
		for _, e := range dep.Spec.Template.Spec.Containers[0].Env {
			env[e.Name] = e.Value
		}
		rctx, cancel := context.WithTimeout(ctx, 90*time.Second)
		defer cancel()
		err2 := tunnel.RunAgent(rctx, tunnel.AgentOptions{ServerURL: env[registration.EnvServer], CAChecksum: env[registration.EnvCAChecksum],
			Token: func(context.Context) (string, error) { return crt2.Status.Token, nil },
			Registration: func(context.Context) (tunnel.Registration, error) {
				return tunnel.Registration{Cluster: "edge-again", APIEndpoint: down.Config.Host, Token: "t", CACert: []byte("ca"), KubeSystemUID: string(ks.UID)}, nil
			}, Log: logr.Discard()})
		var re *tunnel.RefusedError
		if !errors.As(err2, &re) || re.Status != http.StatusForbidden || !strings.Contains(re.Message, "already Active as cluster edge") {
			t.Errorf("re-import: %v", err2)
		}
		if err := mgmt.Client.Delete(ctx, &mgmtv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "edge-again"}}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("capabilities", func(t *testing.T) {
		// The controller writes the Cluster's status meanwhile: read and
		// write again on a conflict.
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			c, err := cluster(t, "edge")
			if err != nil {
				return err
			}
			c.Annotations = map[string]string{
				"capabilities.cattle.io/nodePortRange":            "30000-32767",
				"capabilities.clustersync.io/pspEnabled":          "true",
				"capabilities.clustersync.io/ingressCapabilities": `{"ingressProvider":"nginx"}`, // an object where a list is wanted
			}
			c.Spec.K3sConfig = &mgmtv1.K3sConfig{KubernetesVersion: "v1.37.1+k3s1"} // not a K3s cluster
			return mgmt.Client.Update(ctx, c)
		}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "capabilities and conditions", func(context.Context) (bool, error) {
			c, err := cluster(t, "edge")
			if err != nil || c.Status.Capabilities == nil {
				return false, err
			}
			caps := c.Status.Capabilities
			bad := meta.FindStatusCondition(c.Status.Conditions, mgmtv1.ConditionCapabilitiesValid)
			up := meta.FindStatusCondition(c.Status.Conditions, mgmtv1.ConditionUpgraded)
			return caps.NodePortRange == "30000-32767" && caps.PSPEnabled != nil && *caps.PSPEnabled && caps.TaintSupport != nil && *caps.TaintSupport &&
				bad != nil && bad.Status == metav1.ConditionFalse && strings.Contains(bad.Message, "capabilities.clustersync.io/ingressCapabilities") &&
				up != nil && up.Status == metav1.ConditionFalse && up.Reason == "NotK3s", nil
		})
	})

	outer := t // the restarted agent must outlive the subtest
	t.Run("agent restart", func(t *testing.T) {
		if err := stopAgent(); err != nil {
			t.Fatalf("agent: %v", err)
		}
		waitFor(t, "Unavailable", func(context.Context) (bool, error) {
			c, err := cluster(t, "edge")
			return err == nil && c.Status.Phase == mgmtv1.PhaseUnavailable && condition(c, mgmtv1.ConditionConnected) == metav1.ConditionFalse, err
		})
		// The proxy answers at once, with the Connected condition.
		start := time.Now()
		out, err := kubectlErr(nil, "--kubeconfig", "/dev/null", "--server", serverURL+"/k8s/clusters/edge", "--insecure-skip-tls-verify",
			"--token", token(t, mgmt, "team", "owner"), "get", "ns")
		if err == nil || !strings.Contains(out, "cluster edge has no connected agent (Connected=False") {
			t.Errorf("the proxy to a disconnected cluster: %v\n%s", err, out)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("the proxy took %s to refuse a disconnected cluster", d)
		}
		stopAgent = startAgent(outer, "", "")
		waitFor(t, "Active again", func(context.Context) (bool, error) {
			c, err := cluster(t, "edge")
			return err == nil && c.Status.Phase == mgmtv1.PhaseActive, err
		})
	})

	t.Run("delete disconnects", func(t *testing.T) {
		if err := mgmt.Client.Delete(ctx, &mgmtv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "edge"}}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the cleanup Job", func(ctx context.Context) (bool, error) {
			_, err := down.Kube.BatchV1().Jobs(agent.CleanupNamespace).Get(ctx, agent.CleanupName, metav1.GetOptions{})
			return err == nil, nil
		})
		waitFor(t, "the Cluster to go", func(context.Context) (bool, error) {
			_, err := cluster(t, "edge")
			return apierrors.IsNotFound(err), nil
		})
		// No kubelet runs pods here: do what the Job's pod does
		// (`clustersync agent cleanup`).
		if err := agent.Cleanup(ctx, down.Kube); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{registration.AgentName, agent.CleanupName} {
			if _, err := down.Kube.RbacV1().ClusterRoleBindings().Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("ClusterRoleBinding %s left: %v", name, err)
			}
		}
		list, _ := down.Kube.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{LabelSelector: controller.LabelMember + "=true"})
		if len(list.Items) != 0 {
			t.Errorf("%d member bindings left", len(list.Items))
		}
		if ns, err := down.Kube.CoreV1().Namespaces().Get(ctx, registration.AgentNamespace, metav1.GetOptions{}); err == nil && ns.DeletionTimestamp == nil {
			t.Error("namespace clustersync-system not deleted")
		}
		if _, err := down.Kube.AppsV1().Deployments("apps").Get(ctx, "web", metav1.GetOptions{}); err != nil {
			t.Errorf("the workload was touched: %v", err)
		}
		if _, err := down.Kube.CoreV1().ConfigMaps("apps").Get(ctx, "by-owner", metav1.GetOptions{}); err != nil {
			t.Errorf("user data was touched: %v", err)
		}
		if ns, _ := down.Kube.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{}); ns.Annotations[mgmtv1.ProjectAnnotation] != "" {
			t.Error("project annotation left on kube-system")
		}
	})

	t.Run("a deleted cluster comes back as new", func(t *testing.T) {
		stopAgent() // the old agent's Deployment was removed by the cleanup
		waitFor(t, "namespace clustersync-system gone", func(ctx context.Context) (bool, error) {
			_, err := down.Kube.CoreV1().Namespaces().Get(ctx, registration.AgentNamespace, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		crt, err := registered.Import(ctx, mgmt.Client, "edge", nil, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		kubectl(t, fetchInsecure(t, crt.Status.ManifestURL), "--kubeconfig", down.Kubeconfig, "apply", "-f", "-")
		startAgent(outer, "", "")
		waitFor(t, "Active as a new record", func(context.Context) (bool, error) {
			c, err := cluster(t, "edge")
			return err == nil && c.Status.Phase == mgmtv1.PhaseActive && c.UID != firstUID, err
		})
	})
}

// planCRD is a minimal upgrade.cattle.io/v1 Plan CRD, standing in for the
// system-upgrade-controller's.
const planCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: plans.upgrade.cattle.io
spec:
  group: upgrade.cattle.io
  names: {kind: Plan, plural: plans, singular: plan}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`

// A K3s cluster (its API server reports "+k3s1") is detected; its nodes'
// launch arguments and environment show in status; spec.k3sConfig creates
// the two upgrade Plans with the requested concurrency. The manifest is
// applied the secure way: kubectl apply -f <url>, trusting the server CA.
func TestK3sCluster(t *testing.T) {
	hostedtest.Require(t, mgmt)
	ctx := context.Background()
	startManager(t)
	crt, err := registered.Import(ctx, mgmt.Client, "edge-k3s", nil, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	var ca corev1.Secret
	if err := mgmt.Client.Get(ctx, types.NamespacedName{Namespace: "clustersync-system", Name: "clustersync-serving-ca"}, &ca); err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, ca.Data["ca.crt"], 0o600); err != nil {
		t.Fatal(err)
	}
	apply := exec.Command("kubectl", append(strings.Fields(crt.Status.Command)[1:], "--kubeconfig", k3s.Kubeconfig)...)
	apply.Env = append(os.Environ(), "SSL_CERT_FILE="+caFile)
	if out, err := apply.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", crt.Status.Command, err, out)
	}
	kubectl(t, []byte(planCRD), "--kubeconfig", k3s.Kubeconfig, "apply", "-f", "-")
	for _, n := range []struct {
		name string
		cp   bool
	}{{"server-1", true}, {"agent-1", false}} {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.name, Annotations: map[string]string{
			"k3s.io/node-args": `["server","--write-kubeconfig-mode","644"]`, "k3s.io/node-env": `{"K3S_DATA_DIR":"/var/lib/rancher/k3s"}`}}}
		if n.cp {
			node.Labels = map[string]string{"node-role.kubernetes.io/control-plane": "true"}
		}
		if err := k3s.Client.Create(ctx, node); err != nil {
			t.Fatal(err)
		}
	}
	startAgentIn(t, k3s, "", "")
	waitFor(t, "K3s cluster Active", func(context.Context) (bool, error) {
		c, err := cluster(t, "edge-k3s")
		return err == nil && c.Status.Phase == mgmtv1.PhaseActive && c.Status.Agent != nil && c.Status.Agent.Distribution == mgmtv1.DistributionK3s &&
			c.Status.K3s != nil && len(c.Status.K3s.Nodes) == 2, err
	})
	c, _ := cluster(t, "edge-k3s")
	if c.Status.Version != "v1.37.0+k3s1" {
		t.Errorf("version %q", c.Status.Version)
	}
	for _, n := range c.Status.K3s.Nodes {
		if strings.Join(n.Args, " ") != "server --write-kubeconfig-mode 644" || n.Env["K3S_DATA_DIR"] != "/var/lib/rancher/k3s" || n.ControlPlane != (n.Name == "server-1") {
			t.Errorf("node %+v", n)
		}
	}
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error { // the controller writes status meanwhile
		c, err := cluster(t, "edge-k3s")
		if err != nil {
			return err
		}
		c.Spec.K3sConfig = &mgmtv1.K3sConfig{KubernetesVersion: "v1.37.1+k3s1", ServerConcurrency: 1, WorkerConcurrency: 2}
		return mgmt.Client.Update(ctx, c)
	}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the upgrade Plans", func(context.Context) (bool, error) {
		c, err := cluster(t, "edge-k3s")
		cond := meta.FindStatusCondition(c.Status.Conditions, mgmtv1.ConditionUpgraded)
		return err == nil && cond != nil && cond.Reason == "Upgrading", err
	})
	dyn := dynamic.NewForConfigOrDie(k3s.Config)
	for name, want := range map[string]int64{"k3s-master-plan": 1, "k3s-worker-plan": 2} {
		p, err := dyn.Resource(controller.PlanGVR()).Namespace(registration.AgentNamespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got, _, _ := unstructured.NestedInt64(p.Object, "spec", "concurrency"); got != want {
			t.Errorf("%s concurrency %d, want %d", name, got, want)
		}
		if v, _, _ := unstructured.NestedString(p.Object, "spec", "version"); v != "v1.37.1+k3s1" {
			t.Errorf("%s version %q", name, v)
		}
	}
}
