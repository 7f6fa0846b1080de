package dashboard_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	aksv1 "github.com/clustersync/clustersync/api/aks/v1"
	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	gkev1 "github.com/clustersync/clustersync/api/gke/v1"
	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/dashboard"
	"github.com/clustersync/clustersync/internal/hosted/clouds"
	"github.com/clustersync/clustersync/internal/hosted/eks"
	"github.com/clustersync/clustersync/internal/hosted/eks/ekstest"
	"github.com/clustersync/clustersync/internal/hosted/hostedtest"
	"github.com/clustersync/clustersync/internal/hosted/management"
	"github.com/clustersync/clustersync/internal/manager"
	"github.com/clustersync/clustersync/internal/registered/controller"
	"github.com/clustersync/clustersync/internal/registered/kubetoken"
	"github.com/clustersync/clustersync/internal/registered/registration"
	"github.com/clustersync/clustersync/internal/registered/server"
	"github.com/clustersync/clustersync/internal/testenv"
	"github.com/clustersync/clustersync/internal/testenv/chrome"
)

var env *hostedtest.Env

func TestMain(m *testing.M) { os.Exit(hostedtest.Main(m, &env)) }

// secretValue is a credential's value; no page may ever contain it.
const secretValue = "s3cr3t-never-on-a-page"

// screenshots is where the browser tests write their screenshots:
// $CLUSTERSYNC_SCREENSHOTS, else bin/screenshots/dashboard of the checkout.
func screenshots(t *testing.T) string {
	dir := os.Getenv("CLUSTERSYNC_SCREENSHOTS")
	if dir == "" {
		dir = filepath.Join("..", "..", "bin", "screenshots", "dashboard")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// shot saves a full-page screenshot of the page as name.png (capture).
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chrome.Capture(ctx)
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(screenshots(t), name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// sessionOf is the session cookie's value of the browser of ctx.
func sessionOf(t *testing.T, ctx context.Context) string {
	t.Helper()
	return chrome.Cookie(t, ctx, dashboard.CookieName)
}

// postAs posts form to url with the session cookie and CSRF token of
// browser tab (signed in, on a page of the dashboard), as the page's forms
// do, and returns the answer's status and body.
func postAs(t *testing.T, tab context.Context, url string, form url.Values) (int, string) {
	t.Helper()
	csrf, err := chromedp.Run(tab, chromedp.AttributeValue(chromedp.CSS(`form.signout input[name="`+dashboard.CSRFField+`"]`), "value"))
	if err != nil {
		t.Fatal(err)
	}
	form.Set(dashboard.CSRFField, csrf.Value)
	return requestAs(t, tab, http.MethodPost, url, strings.NewReader(form.Encode()))
}

// requestAs sends a request to url with the session cookie of browser tab
// (a form's body, or nil) and returns the answer's status and body.
func requestAs(t *testing.T, tab context.Context, method, url string, body io.Reader) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.AddCookie(&http.Cookie{Name: dashboard.CookieName, Value: sessionOf(t, tab)})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(got)
}

// html is the page's HTML now; it must never hold the secret's value. It
// is read in one evaluation in the page: chromedp.OuterHTML asks for the
// node first and for its HTML then, and Chrome forgets node IDs when the
// document changes in between (a navigation finishing, as after Import,
// TestAddEKSImport failed so once: "No node with given id found").
func html(t *testing.T, ctx context.Context) string {
	t.Helper()
	out, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
	if err != nil {
		t.Fatalf("read the page: %v", err)
	}
	if strings.Contains(out, secretValue) {
		t.Fatalf("a Secret's value is on the page")
	}
	return out
}

// signIn opens the dashboard, lands on the sign-in page and signs in with
// token.
func signIn(t *testing.T, ctx context.Context, base, token string) {
	t.Helper()
	chrome.Run(t, ctx, "sign in",
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS(`#token`)),
		chromedp.SendKeys(chromedp.CSS(`#token`), token),
		chromedp.Submit(chromedp.CSS(`#token`)),
		chromedp.WaitVisible(chromedp.CSS(`#clusters-table`)),
	)
}

// world is the management cluster of one test: its namespace, the
// dashboard serving it, and the Clusters in it.
type world struct {
	ns, base string
	k        client.Client
}

func start(t *testing.T) *world {
	t.Helper()
	hostedtest.Require(t, env)
	return startB(t)
}

// startB is start for a test or a benchmark whose Env is there.
func startB(t testing.TB) *world {
	t.Helper()
	ns := env.Namespace(t)
	k, err := client.New(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(replica(t, ns).Handler())
	t.Cleanup(srv.Close)
	ctx := context.Background()
	_ = k.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: hostedv1.Namespace}})
	cred := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: ns + "-cred", Namespace: hostedv1.Namespace},
		StringData: map[string]string{"amazonec2credentialConfig-secretKey": secretValue}}
	if err := k.Create(ctx, cred); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Delete(context.Background(), cred) })
	return &world{ns: ns, base: srv.URL, k: k}
}

// replica is one dashboard server of the test's API server, as one replica
// of the manager runs it, keeping its sessions in namespace ns; it is
// started, and stops when t ends.
func replica(t testing.TB, ns string) *dashboard.Server {
	t.Helper()
	// The test's API server plays the virtual clusters' too (virtual_test.go).
	d, err := dashboard.New(dashboard.Options{Config: env.Config, Scheme: env.Scheme, Clouds: clouds.All(), SessionNamespace: ns,
		VirtualServer: func(context.Context, string, string) (string, error) { return env.Config.Host, nil }})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	return d
}

// cluster creates Cluster name with spec and then status.
func (w *world) cluster(t *testing.T, name string, spec mgmtv1.ClusterSpec, status mgmtv1.ClusterStatus) {
	t.Helper()
	ctx := context.Background()
	c := &mgmtv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
	if err := w.k.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.k.Delete(context.Background(), c) })
	c.Status = status
	if err := w.k.Status().Update(ctx, c); err != nil {
		t.Fatal(err)
	}
}

func cond(typ string, status metav1.ConditionStatus, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg, LastTransitionTime: metav1.Now()}
}

// fleet makes an EKS, an AKS, a GKE and a registered Cluster, named after
// the test's namespace; it returns their names in that order.
func (w *world) fleet(t *testing.T) (eks, aks, gke, edge string) {
	eks, aks, gke, edge = w.ns+"-eks", w.ns+"-aks", w.ns+"-gke", w.ns+"-edge"
	ready := []metav1.Condition{cond(mgmtv1.ConditionReady, metav1.ConditionTrue, "Ready", "")}
	w.cluster(t, eks, mgmtv1.ClusterSpec{DisplayName: eks, EKSConfig: &eksv1.EKSClusterConfigSpec{DisplayName: eks, Region: "us-west-2",
		AmazonCredentialSecret: hostedv1.Namespace + ":" + w.ns + "-cred", Imported: true, Tags: &map[string]string{"team": "user"}}},
		mgmtv1.ClusterStatus{Driver: mgmtv1.DriverEKS, Phase: mgmtv1.PhaseActive, Version: "1.33", Conditions: ready,
			EKSStatus: &mgmtv1.EKSStatus{UpstreamSpec: &eksv1.EKSClusterConfigSpec{DisplayName: eks, Region: "us-west-2",
				AmazonCredentialSecret: hostedv1.Namespace + ":" + w.ns + "-cred", Imported: true, Tags: &map[string]string{"team": "console"}, NodeGroups: &[]eksv1.NodeGroup{{NodegroupName: "workers"}}}}})
	w.cluster(t, aks, mgmtv1.ClusterSpec{DisplayName: aks, AKSConfig: &aksv1.AKSClusterConfigSpec{ResourceGroup: "rg", ResourceLocation: "eastus",
		ClusterName: aks, AzureCredentialSecret: hostedv1.Namespace + ":" + w.ns + "-cred", Imported: true}},
		mgmtv1.ClusterStatus{Driver: mgmtv1.DriverAKS, Phase: mgmtv1.PhaseActive, Version: "1.31.2", Conditions: ready})
	w.cluster(t, gke, mgmtv1.ClusterSpec{DisplayName: gke, GKEConfig: &gkev1.GKEClusterConfigSpec{ProjectID: "clustersync-test", Zone: "us-central1-a",
		ClusterName: gke, GoogleCredentialSecret: hostedv1.Namespace + ":" + w.ns + "-cred", Imported: true}},
		mgmtv1.ClusterStatus{Driver: mgmtv1.DriverGKE, Phase: mgmtv1.PhaseActive, Version: "1.31.5-gke.1000000", Conditions: ready})
	w.cluster(t, edge, mgmtv1.ClusterSpec{DisplayName: edge, ImportedConfig: &mgmtv1.ImportedConfig{}},
		mgmtv1.ClusterStatus{Driver: mgmtv1.DriverImported, Phase: mgmtv1.PhasePending})
	return eks, aks, gke, edge
}

// The clusters table: sign in with a token, every kind of Cluster listed
// with its driver, and a change (a Conflict) shown without a reload, its
// row first.
func TestClustersLive(t *testing.T) {
	w := start(t)
	eks, aks, gke, edge := w.fleet(t)
	ctx := chrome.New(t)
	signIn(t, ctx, w.base, env.AdminToken(t, w.ns))
	page := html(t, ctx)
	for name, driver := range map[string]string{eks: "EKS", aks: "AKS", gke: "GKE", edge: "imported"} {
		if !strings.Contains(page, `data-cluster="`+name+`"`) || !strings.Contains(page, "<td>"+driver+"</td>") {
			t.Errorf("the clusters table lacks %s (%s)", name, driver)
		}
	}
	shot(t, ctx, "clusters")

	// A marker on the page survives only if the page is not reloaded.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(window.__notReloaded = true)`)); err != nil {
		t.Fatal(err)
	}
	var c mgmtv1.Cluster
	if err := w.k.Get(context.Background(), client.ObjectKey{Name: aks}, &c); err != nil {
		t.Fatal(err)
	}
	meta.SetStatusCondition(&c.Status.Conditions, cond(mgmtv1.ConditionConflict, metav1.ConditionTrue, "ChangedOnBothSides",
		"changed both in clustersync and outside it since last applied: tags"))
	c.Status.Phase = mgmtv1.PhaseUpdating
	if err := w.k.Status().Update(context.Background(), &c); err != nil {
		t.Fatal(err)
	}
	chrome.Run(t, ctx, "wait for the conflict to appear without a reload", chromedp.WaitVisible(chromedp.CSS(`tr.conflict[data-cluster="`+aks+`"]`)))
	row, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS(`#clusters-table tbody tr`), "data-cluster"))
	if err != nil {
		t.Fatal(err)
	}
	first := row.Value
	kept, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.__notReloaded === true`))
	if err != nil {
		t.Fatal(err)
	}
	if !kept {
		t.Error("the page was reloaded to show the change")
	}
	if first != aks {
		t.Errorf("first row %s, want %s (in Conflict)", first, aks)
	}
	if p := html(t, ctx); !strings.Contains(p, "Conflict: changed both in clustersync") {
		t.Error("the Conflict's message is not shown")
	}
	shot(t, ctx, "clusters-conflict")
}

// A hosted cluster's page: the effective state with its drift, the
// conflict's three values, and "take the cloud's value" editing
// spec.eksConfig as kubectl would; a write without the CSRF token is
// refused.
func TestHostedClusterConflict(t *testing.T) {
	w := start(t)
	eks, _, _, _ := w.fleet(t)
	ctx := context.Background()
	// The conflict as the management controller copies it from the
	// operator's record into the Cluster's status.
	var cl mgmtv1.Cluster
	if err := w.k.Get(ctx, client.ObjectKey{Name: eks}, &cl); err != nil {
		t.Fatal(err)
	}
	cl.Status.Conflicts = []hostedv1.FieldConflict{{Path: "tags", Config: `{"team":"user"}`, Upstream: `{"team":"console"}`, Applied: `{"team":"a"}`}}
	if err := w.k.Status().Update(ctx, &cl); err != nil {
		t.Fatal(err)
	}
	b := chrome.New(t)
	signIn(t, b, w.base, env.AdminToken(t, w.ns))
	chrome.Run(t, b, "open the cluster", chromedp.Navigate(w.base+"/clusters/"+eks), chromedp.WaitVisible(chromedp.CSS(`table.conflicts`)))
	page := html(t, b)
	for _, want := range []string{`<code>{"team":"user"}</code>`, `<code>{"team":"console"}</code>`, `<code>{"team":"a"}</code>`, `class="drift"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the cluster page lacks %s", want)
		}
	}
	shot(t, b, "cluster-conflict")

	// The same write without the CSRF token, with the browser's session.
	jar, _ := cookiejar.New(nil)
	u, _ := url.Parse(w.base)
	jar.SetCookies(u, []*http.Cookie{{Name: dashboard.CookieName, Value: sessionOf(t, b)}})
	hc := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.PostForm(w.base+"/clusters/"+eks+"/take", url.Values{"path": {"tags"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a write without the CSRF token: %s, want 403", resp.Status)
	}
	var c mgmtv1.Cluster
	if err := w.k.Get(ctx, client.ObjectKey{Name: eks}, &c); err != nil {
		t.Fatal(err)
	}
	if got := *c.Spec.EKSConfig.Tags; got["team"] != "user" {
		t.Fatalf("tags %v changed by a write without the CSRF token", got)
	}

	chrome.Run(t, b, "take the cloud's value", chromedp.Click(chromedp.CSS(`tr[data-path="tags"] form.take button`)))
	testenv.Eventually(t, 10*time.Second, func() error {
		if err := w.k.Get(ctx, client.ObjectKey{Name: eks}, &c); err != nil {
			return err
		}
		if got := *c.Spec.EKSConfig.Tags; len(got) != 1 || got["team"] != "console" {
			return fmt.Errorf("spec.eksConfig.tags %v after taking the cloud's value, want {team: console}", got)
		}
		return nil
	})
}

// A user whose RBAC allows one Cluster by name sees that one only, and
// cannot open another's page.
func TestRBACLimitsWhatIsShown(t *testing.T) {
	w := start(t)
	eks, _, gke, _ := w.fleet(t)
	ctx := context.Background()
	kube := env.Kube
	if _, err := kube.CoreV1().ServiceAccounts(w.ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "viewer"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: w.ns + "-one-cluster"}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{mgmtv1.GroupVersion.Group}, Resources: []string{"clusters"}, ResourceNames: []string{gke}, Verbs: []string{"get", "watch"}}}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: w.ns + "-one-cluster"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "viewer", Namespace: w.ns}},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name}}
	for _, o := range []client.Object{role, binding} {
		if err := w.k.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = w.k.Delete(context.Background(), o) })
	}
	tr, err := kube.CoreV1().ServiceAccounts(w.ns).CreateToken(ctx, "viewer",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(600))}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b := chrome.New(t)
	signIn(t, b, w.base, tr.Status.Token)
	page := html(t, b)
	if !strings.Contains(page, `data-cluster="`+gke+`"`) {
		t.Errorf("the viewer does not see %s, the one Cluster it may get", gke)
	}
	if n := strings.Count(page, "data-cluster="); n != 1 {
		t.Errorf("the viewer sees %d clusters, want 1", n)
	}
	shot(t, b, "clusters-one-allowed")
	chrome.Run(t, b, "open a cluster the viewer may not read", chromedp.Navigate(w.base+"/clusters/"+eks), chromedp.WaitReady("body"))
	if p := html(t, b); strings.Contains(p, "us-west-2") || !strings.Contains(p, "not found, or your account may not read it") {
		t.Errorf("another cluster's page shows it (or no refusal) to the viewer")
	}

	// A token the API server does not know is refused at sign-in.
	b2 := chrome.New(t)
	chrome.Run(t, b2, "sign in with a bad token",
		chromedp.Navigate(w.base+"/login"),
		chromedp.SendKeys(chromedp.CSS(`#token`), "not-a-token"),
		chromedp.Submit(chromedp.CSS(`#token`)),
		chromedp.WaitVisible(chromedp.CSS(`.error`)))
	if p := html(t, b2); !strings.Contains(p, "token refused by the API server") {
		t.Error("a bad token is not refused with the API server's answer")
	}
}

// emulatedEKS starts the EKS emulator with cluster name in it (tags
// team: a, one node group) and creates its credential Secret and an
// imported Cluster of it; token is a cluster-admin token of the test's API
// server, which the emulated cluster's endpoint is.
func (w *world) emulatedEKS(t *testing.T, name string) (srv *ekstest.Server, token string, c *mgmtv1.Cluster) {
	t.Helper()
	ctx := context.Background()
	endpoint, ca := env.APIServer(t)
	token = env.AdminToken(t, w.ns)
	srv = ekstest.New(ekstest.Options{Region: "us-west-2", EndpointFor: func(string) string { return endpoint }, CertificateAuthorityFor: func(string) []byte { return ca }})
	t.Cleanup(srv.Close)
	if err := srv.ImportCluster(ekstest.ClusterSpec{Name: name, Version: "1.31", EndpointPublicAccess: true, Tags: map[string]string{"team": "a"},
		Nodegroups: []ekstest.NodegroupSpec{{Name: "pool1", MinSize: 1, MaxSize: 3, DesiredSize: 2}}}); err != nil {
		t.Fatal(err)
	}
	cred := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: w.ns + "-aws", Namespace: hostedv1.Namespace},
		StringData: map[string]string{eks.AccessKeyField: "a", eks.SecretKeyField: "b"}}
	if err := w.k.Create(ctx, cred); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.k.Delete(context.Background(), cred) })
	c = &mgmtv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: mgmtv1.ClusterSpec{DisplayName: name, EKSConfig: &eksv1.EKSClusterConfigSpec{
		DisplayName: name, Region: "us-west-2", AmazonCredentialSecret: hostedv1.Namespace + ":" + w.ns + "-aws", Imported: true,
		Tags: &map[string]string{"team": "a"}}}}
	if err := w.k.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	return srv, token, c
}

// runManager runs the manager in process (as `clustersync manager
// --eks-refresh REFRESH --dashboard-addr ADDR`) against the EKS emulator
// srv, tokens for the clusters' API servers being token, until t ends
// (after deleting Cluster name); it returns the dashboard's URL.
func runManager(t *testing.T, w *world, srv *ekstest.Server, token string, refresh time.Duration, name string) string {
	t.Helper()
	return runManagerWith(t, w, manager.Options{Clouds: map[string]management.CloudOptions{"eks": {Endpoint: srv.URL, Refresh: refresh, Poll: time.Second,
		Credentials: eks.TokenFunc(func(context.Context, string, map[string][]byte, string) (string, error) { return token, nil })}}}, name)
}

// runManagerWith runs the manager in process with o (its Config, Log,
// DashboardAddr and Started set here) until t ends, after deleting
// Clusters names; it returns the dashboard's URL.
func runManagerWith(t *testing.T, w *world, o manager.Options, names ...string) string {
	t.Helper()
	mctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	started := make(chan struct{})
	go func() {
		o.Config, o.Log, o.DashboardAddr, o.Started = env.Config, logr.Discard(), addr, func() { close(started) }
		done <- manager.Run(mctx, o)
	}()
	select {
	case <-started:
	case err := <-done:
		t.Fatalf("manager: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("the manager did not start in a minute")
	}
	t.Cleanup(func() {
		for _, name := range names {
			_ = w.k.Delete(context.Background(), &mgmtv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}})
		}
		// An imported cluster's deletion is only a disconnect, which the
		// manager makes before it stops.
		gone := func() bool {
			for _, name := range names {
				if w.k.Get(context.Background(), client.ObjectKey{Name: name}, &mgmtv1.Cluster{}) == nil {
					return false
				}
			}
			return true
		}
		for deadline := time.Now().Add(30 * time.Second); !gone() && time.Now().Before(deadline); {
			time.Sleep(100 * time.Millisecond)
		}
		stop()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	return "http://" + addr
}

// openEmulatedEKS is emulatedEKS's cluster name with the manager running
// (runManager, refreshing every refresh), and a browser signed in to its
// dashboard (at base) on the cluster's page, once the cluster is Active.
func (w *world) openEmulatedEKS(t *testing.T, name string, refresh time.Duration) (b context.Context, base string, srv *ekstest.Server, c *mgmtv1.Cluster) {
	t.Helper()
	srv, token, c := w.emulatedEKS(t, name)
	base = runManager(t, w, srv, token, refresh, name)
	b = chrome.New(t)
	signIn(t, b, base, token)
	chrome.Run(t, b, "open the cluster until it is Active",
		chromedp.Navigate(base+"/clusters/"+name),
		chromedp.WaitVisible(chromedp.CSS(`h1 .phase-Active`)))
	return b, base, srv, c
}

// A change made in the cloud's console reaches the open cluster page
// without a reload: the manager (in process, as `clustersync manager
// --eks-refresh 10 --dashboard-addr ADDR`, the dashboard served by it)
// adopts it and records an OutsideChange event,
// and the page shows the adopted value and the event. The time from the
// console change to the page showing it is logged (a figure, not a
// limit).
func TestLiveOutsideChange(t *testing.T) {
	w := start(t)
	name := w.ns + "-live"
	b, _, srv, _ := w.openEmulatedEKS(t, name, 10*time.Second)
	if _, err := chromedp.Run(b, chromedp.Evaluate[bool](`(window.__notReloaded = true)`)); err != nil {
		t.Fatal(err)
	}
	snap, ok := srv.Cluster(name)
	if !ok {
		t.Fatal("the emulator lost the cluster")
	}
	changed := time.Now()
	if err := srv.ConsoleSetTags(snap.ARN, map[string]string{"team": "console"}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(b, chromedp.Poll[bool](`document.querySelector('tr[data-path="tags"] td:nth-child(3) code')?.textContent.includes('console') &&
		[...document.querySelectorAll('table.events td')].some(td => td.textContent === 'OutsideChange')`)); err != nil {
		t.Fatalf("wait for the adopted value and its event, without a reload: %v", err)
	}
	t.Logf("a console change reached the open page in %.1f s (--eks-refresh 10)", time.Since(changed).Seconds())
	kept, err := chromedp.Run(b, chromedp.Evaluate[bool](`window.__notReloaded === true`))
	if err != nil || !kept {
		t.Errorf("the page was reloaded to show the change (%v)", err)
	}
	html(t, b)
	shot(t, b, "cluster-outside-change")
}

// registrationToken creates the ClusterRegistrationToken of cluster with
// token and its commands in its status, as the manager writes them (the
// server https://mgr.example.com), deleted when t ends; it returns the
// manifest's URL.
func (w *world) registrationToken(t *testing.T, cluster, token string) string {
	t.Helper()
	ctx := context.Background()
	tok := &mgmtv1.ClusterRegistrationToken{ObjectMeta: metav1.ObjectMeta{Name: cluster, Namespace: hostedv1.Namespace},
		Spec: mgmtv1.ClusterRegistrationTokenSpec{ClusterName: cluster}}
	if err := w.k.Create(ctx, tok); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.k.Delete(context.Background(), tok) })
	const server = "https://mgr.example.com"
	tok.Status = mgmtv1.ClusterRegistrationTokenStatus{Token: token, ManifestURL: registration.ManifestURL(server, token, cluster)}
	tok.Status.Command, tok.Status.InsecureCommand = registration.Commands(server, token, cluster)
	if err := w.k.Status().Update(ctx, tok); err != nil {
		t.Fatal(err)
	}
	return tok.Status.ManifestURL
}

// A registered cluster's page: the import command and its --insecure
// variant with copy buttons, the agent's connection, members, projects
// and capabilities.
func TestRegisteredCluster(t *testing.T) {
	w := start(t)
	_, _, _, edge := w.fleet(t)
	ctx := context.Background()
	manifest := w.registrationToken(t, edge, "abc123")
	var c mgmtv1.Cluster
	if err := w.k.Get(ctx, client.ObjectKey{Name: edge}, &c); err != nil {
		t.Fatal(err)
	}
	// The users signed in with tokens of this test's service accounts are
	// read-only members, by their group.
	c.Spec.ImportedConfig.Members = []mgmtv1.ClusterMember{{Kind: "Group", Name: "system:serviceaccounts:" + w.ns, Role: mgmtv1.RoleReadOnly}}
	if err := w.k.Update(ctx, &c); err != nil {
		t.Fatal(err)
	}
	if err := server.PublishInfo(ctx, env.Kube, server.Info{URL: "https://mgr.example.com", CAPEM: []byte("the manager's CA")}); err != nil {
		t.Fatal(err)
	}
	since := metav1.NewTime(time.Date(2026, 11, 26, 9, 30, 0, 0, time.UTC))
	c.Status.Agent = &mgmtv1.AgentStatus{Distribution: "k3s", AgentVersion: "v0.31.0", ConnectedSince: &since, LastPing: &since, APIEndpoint: "https://10.0.0.5:6443"}
	c.Status.Capabilities = &mgmtv1.Capabilities{NodePortRange: "30000-32767", TaintSupport: ptr.To(true)}
	c.Status.Phase = mgmtv1.PhaseActive
	if err := w.k.Status().Update(ctx, &c); err != nil {
		t.Fatal(err)
	}
	b := chrome.New(t)
	signIn(t, b, w.base, env.AdminToken(t, w.ns))
	chrome.Run(t, b, "open the registered cluster from the table",
		chromedp.Click(chromedp.CSS(`tr[data-cluster="`+edge+`"] a`)),
		chromedp.WaitVisible(chromedp.CSS(`#import-command`)))
	page := html(t, b)
	for _, want := range []string{"kubectl apply -f " + manifest, "curl --insecure -sfL " + manifest, "2026-11-26 09:30:00 UTC", "k3s", "nodePortRange: 30000-32767"} {
		if !strings.Contains(page, want) {
			t.Errorf("the registered cluster's page lacks %q", want)
		}
	}
	chrome.Run(t, b, "copy the command", chromedp.Click(chromedp.CSS(`button[data-copy="import-command"]`)))
	label, err := chromedp.Run(b, chromedp.Poll[string](`(t => t !== 'Copy' && t)(document.querySelector('button[data-copy="import-command"]').textContent)`))
	if err != nil || (label != "Copied" && !strings.HasPrefix(label, "Selected")) {
		t.Errorf("after Copy the button says %q (%v), want Copied (or the selection fallback)", label, err)
	}
	shot(t, b, "registered")

	// A kubeconfig for the member, through the manager's proxy.
	if !strings.Contains(page, `id="kubeconfig-form"`) || !strings.Contains(page, "Your role in this cluster is read-only") {
		t.Error("the registered cluster's page offers the member no kubeconfig")
	}
	kubeconfigURL := w.base + "/clusters/" + edge + "/kubeconfig"
	code, body := postAs(t, b, kubeconfigURL, url.Values{"ttl": {"1h"}})
	if code != http.StatusOK {
		t.Fatalf("Download kubeconfig: %d %s", code, body)
	}
	kc, err := clientcmd.Load([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if cl := kc.Clusters[edge]; cl == nil || cl.Server != "https://mgr.example.com/k8s/clusters/"+edge || string(cl.CertificateAuthorityData) != "the manager's CA" {
		t.Errorf("the kubeconfig's cluster: %+v", kc.Clusters)
	}
	if u := kc.AuthInfos[edge]; u == nil || !strings.HasPrefix(u.Token, kubetoken.TokenPrefix) {
		t.Fatalf("the kubeconfig's user has no kubeconfig token: %+v", kc.AuthInfos)
	}
	issuer := &kubetoken.Issuer{Client: w.k, Namespace: server.TokenNamespace}
	who, cluster, err := issuer.Lookup(ctx, kc.AuthInfos[edge].Token)
	if err != nil || cluster != edge || who.Name != "system:serviceaccount:"+w.ns+":admin" || !slices.Contains(who.Groups, "system:serviceaccounts:"+w.ns) {
		t.Errorf("the token carries %+v for cluster %q (%v), want the signed-in service account and its groups for %s", who, cluster, err, edge)
	}
	if code, body := postAs(t, b, kubeconfigURL, url.Values{"ttl": {"1000h"}}); code != http.StatusBadRequest || !strings.Contains(body, "at most") {
		t.Errorf("a ttl of 1000h: %d %s", code, body)
	}
	if err := w.k.Get(ctx, client.ObjectKey{Name: edge}, &c); err != nil {
		t.Fatal(err)
	}
	c.Spec.ImportedConfig.Members = nil
	if err := w.k.Update(ctx, &c); err != nil {
		t.Fatal(err)
	}
	if code, body := postAs(t, b, kubeconfigURL, url.Values{}); code != http.StatusForbidden || !strings.Contains(body, "is not a member of cluster "+edge) {
		t.Errorf("a kubeconfig for a user who is no longer a member: %d %s", code, body)
	}
}

// A hosted cluster's page shows its agent like a registered cluster's;
// with a private endpoint (AgentConnected False, RegistrationRequired) it
// shows the registration command to run inside the network, and once the
// agent is connected, no command.
func TestHostedClusterAgentPage(t *testing.T) {
	w := start(t)
	eks, _, _, _ := w.fleet(t)
	ctx := context.Background()
	manifest := w.registrationToken(t, eks, "def456")
	var c mgmtv1.Cluster
	if err := w.k.Get(ctx, client.ObjectKey{Name: eks}, &c); err != nil {
		t.Fatal(err)
	}
	c.Spec.Members = []mgmtv1.ClusterMember{{Kind: "Group", Name: "system:serviceaccounts:" + w.ns, Role: mgmtv1.RoleClusterMember}}
	if err := w.k.Update(ctx, &c); err != nil {
		t.Fatal(err)
	}
	meta.SetStatusCondition(&c.Status.Conditions, cond(mgmtv1.ConditionAgentConnected, metav1.ConditionFalse, controller.ReasonAgentRegistrationRequired, "the API endpoint is private"))
	if err := w.k.Status().Update(ctx, &c); err != nil {
		t.Fatal(err)
	}
	b := chrome.New(t)
	signIn(t, b, w.base, env.AdminToken(t, w.ns))
	chrome.Run(t, b, "open the private EKS cluster from the table",
		chromedp.Click(chromedp.CSS(`tr[data-cluster="`+eks+`"] a`)),
		chromedp.WaitVisible(chromedp.CSS(`#import-command`)))
	page := html(t, b)
	for _, want := range []string{"The cluster's API endpoint is private", "kubectl apply -f " + manifest, "No agent has connected yet",
		"Your role in this cluster is cluster-member", "Effective state"} {
		if !strings.Contains(page, want) {
			t.Errorf("the private EKS cluster's page lacks %q", want)
		}
	}
	shot(t, b, "hosted-private")

	// The agent dialed in: the page follows, without the command.
	since := metav1.NewTime(time.Date(2026, 11, 28, 9, 30, 0, 0, time.UTC))
	c.Status.Agent = &mgmtv1.AgentStatus{AgentVersion: "v0.31.0", ConnectedSince: &since, LastPing: &since, APIEndpoint: "https://10.0.0.7:443"}
	meta.SetStatusCondition(&c.Status.Conditions, cond(mgmtv1.ConditionAgentConnected, metav1.ConditionTrue, "Connected", "the agent's tunnel is up"))
	if err := w.k.Status().Update(ctx, &c); err != nil {
		t.Fatal(err)
	}
	chrome.Run(t, b, "the page drops the command", chromedp.WaitNotPresent(chromedp.CSS(`#import-command`)))
	page = html(t, b)
	if !strings.Contains(page, "2026-11-28 09:30:00 UTC") || strings.Contains(page, manifest) {
		t.Errorf("the connected EKS cluster's page: agent shown %v, command shown %v", strings.Contains(page, "2026-11-28 09:30:00 UTC"), strings.Contains(page, manifest))
	}
}
