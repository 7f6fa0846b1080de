package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	aksv1 "github.com/clustersync/clustersync/api/aks/v1"
	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/dashboard"
	"github.com/clustersync/clustersync/internal/hosted/aks"
	"github.com/clustersync/clustersync/internal/hosted/aks/akstest"
	"github.com/clustersync/clustersync/internal/hosted/eks"
	"github.com/clustersync/clustersync/internal/hosted/management"
	"github.com/clustersync/clustersync/internal/manager"
	"github.com/clustersync/clustersync/internal/testenv/chrome"
	"github.com/clustersync/clustersync/internal/virtual/deploy"
	"github.com/clustersync/clustersync/internal/virtual/syncer"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// kubeconfigOf is a kubeconfig of cfg with its credentials inline, as
// `kubectl config view --raw --minify --flatten` prints one.
func kubeconfigOf(t *testing.T, cfg *rest.Config) []byte {
	t.Helper()
	read := func(data []byte, file string) []byte {
		if len(data) > 0 || file == "" {
			return data
		}
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["c"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: read(cfg.CAData, cfg.CAFile)}
	kc.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken,
		ClientCertificateData: read(cfg.CertData, cfg.CertFile), ClientKeyData: read(cfg.KeyData, cfg.KeyFile)}
	kc.Contexts["ctx"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	kc.CurrentContext = "ctx"
	out, err := clientcmd.Write(*kc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// virtualCluster makes what `virtual create NAME -n ns` leaves in the
// host, with the test's API server as the virtual one: the control plane
// StatefulSet and its Ready pod, Secret vc-NAME, and in virtual namespace
// tenant a pod and a service synced to ns (their host copies, named as
// the syncer names them), a config map that is not, and the syncer's
// SyncError event about it.
func virtualCluster(t *testing.T, w *world, name, tenant string) {
	t.Helper()
	ctx := context.Background()
	labels := map[string]string{"app": "vcluster", "release": name}
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns, Labels: labels},
		// OnDelete: the StatefulSet controller leaves the test's pod alone.
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To(int32(1)), ServiceName: name, UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "syncer", Image: "ghcr.io/clustersync/clustersync:v0.9.0"}}}}}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name + "-0", Namespace: w.ns, Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "syncer", Image: "ghcr.io/clustersync/clustersync:v0.9.0"}}}}
	tr := translate.Translator{VCluster: name, HostNamespace: w.ns}
	web := func(ns, n string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: ns}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}}}
	}
	svc := func(ns, n string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: ns}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	}
	objs := []client.Object{
		pod, sts, // the pod first: the StatefulSet controller adopts it
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "vc-" + name, Namespace: w.ns}, Data: map[string][]byte{"config": kubeconfigOf(t, env.Config)}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tenant}},
		web(tenant, "web"), svc(tenant, "web"),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "page", Namespace: tenant}, Data: map[string]string{"index.html": secretValue}},
		web(w.ns, tr.HostName("web", tenant)), svc(w.ns, tr.HostName("web", tenant)),
	}
	for _, o := range objs {
		if err := w.k.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, o := range objs {
			_ = w.k.Delete(context.Background(), o)
		}
	})
	// No kubelet here: the pod is made Ready as one would report it.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := w.k.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			return err
		}
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		pod.Status.Phase = corev1.PodRunning
		return w.k.Status().Update(ctx, pod)
	}); err != nil {
		t.Fatal(err)
	}
	ev := &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Name: "page.sync", Namespace: tenant}, EventTime: metav1.NewMicroTime(time.Now()),
		ReportingController: "clustersync.io/syncer", ReportingInstance: "syncer-" + name, Action: "Sync", Type: corev1.EventTypeWarning,
		Reason: syncer.ReasonSyncError, Note: "not synced to the host: exceeded quota (configmaps=0)",
		Regarding: corev1.ObjectReference{Kind: "ConfigMap", Namespace: tenant, Name: "page"}}
	if err := w.k.Create(ctx, ev); err != nil {
		t.Fatal(err)
	}
}

// A virtual cluster on the dashboard, for a user who signs in by pasting
// a kubeconfig: listed with its state; its page shows the connect command,
// the kubeconfig download, each object of a virtual namespace next to its
// host copy, and the syncer's sync errors. A user who may not read Secret
// vc-NAME sees none of its objects and cannot download the kubeconfig.
func TestVirtualCluster(t *testing.T) {
	w := start(t)
	name, tenant := "vc1", w.ns+"-tenant"
	virtualCluster(t, w, name, tenant)
	b := chrome.New(t)
	chrome.Run(t, b, "sign in with a kubeconfig",
		chromedp.Navigate(w.base+"/login"),
		chromedp.WaitVisible(chromedp.CSS(`#token`)),
		chromedp.SetValue(chromedp.CSS(`#token`), string(kubeconfigOf(t, env.Config))),
		chromedp.Submit(chromedp.CSS(`#token`)),
		chromedp.WaitVisible(chromedp.CSS(`#clusters-table`)))
	key := w.ns + "/" + name
	chrome.Run(t, b, "find the virtual cluster in the table", chromedp.WaitVisible(chromedp.CSS(`tr[data-cluster="`+key+`"]`)))
	if p := html(t, b); !strings.Contains(p, "<td>"+dashboard.DriverVirtual+"</td>") || !strings.Contains(p, "v0.9.0") {
		t.Errorf("the virtual cluster's row lacks its driver or version")
	}
	shot(t, b, "clusters-virtual")

	link, err := chromedp.Run(b, chromedp.AttributeValue(chromedp.CSS(`tr[data-cluster="`+key+`"] a`), "href"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "/virtual/" + w.ns + "/" + name; link.Value != want {
		t.Errorf("the row links to %q, want %q", link.Value, want)
	}
	chrome.Run(t, b, "open its page",
		chromedp.Navigate(w.base+link.Value+"?ns="+tenant),
		chromedp.WaitVisible(chromedp.CSS(`#objects-table`)))
	tr := translate.Translator{VCluster: name, HostNamespace: w.ns}
	p := html(t, b)
	for _, want := range []string{
		"clustersync virtual connect " + name + " -n " + w.ns,
		`data-object="Pod ` + tenant + `/web"`, w.ns + "/" + tr.HostName("web", tenant),
		`data-object="Service ` + tenant + `/web"`,
		`data-object="ConfigMap ` + tenant + `/page"`, "not synced",
		"not synced to the host: exceeded quota (configmaps=0)", "ConfigMap " + tenant + "/page",
		`id="kubeconfig"`,
	} {
		if !strings.Contains(p, want) {
			t.Errorf("the virtual cluster's page lacks %q", want)
		}
	}
	shot(t, b, "virtual")

	// The kubeconfig download is Secret vc-NAME's.
	get := func(tab context.Context) (int, string) {
		t.Helper()
		return requestAs(t, tab, http.MethodGet, w.base+"/virtual/"+w.ns+"/"+name+"/kubeconfig", nil)
	}
	if code, body := get(b); code != http.StatusOK || body != string(kubeconfigOf(t, env.Config)) {
		t.Errorf("kubeconfig download: %d, want 200 with Secret vc-%s's config", code, name)
	}

	// A service account's kubeconfig, as the page's form posts it.
	if !strings.Contains(html(t, b), `id="service-account"`) {
		t.Error("the page has no service account form")
	}
	post := func(tab context.Context, form url.Values) (int, string) {
		t.Helper()
		return postAs(t, tab, w.base+"/virtual/"+w.ns+"/"+name+"/kubeconfig", form)
	}
	t.Cleanup(func() {
		_ = env.Kube.RbacV1().ClusterRoleBindings().Delete(context.Background(), deploy.ServiceAccountBindingName("dev", tenant), metav1.DeleteOptions{})
	})
	code, body := post(b, url.Values{"serviceAccount": {tenant + "/dev"}, "clusterRole": {"view"}, "tokenExpiration": {"600"}})
	if code != http.StatusOK || strings.Contains(body, "client-key-data") {
		t.Fatalf("service account kubeconfig: %d\n%s", code, body)
	}
	saCfg, err := clientcmd.RESTConfigFromKubeConfig([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	saKube, err := kubernetes.NewForConfig(saCfg)
	if err != nil {
		t.Fatal(err)
	}
	who, err := saKube.AuthenticationV1().SelfSubjectReviews().Create(context.Background(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if u, want := who.Status.UserInfo.Username, "system:serviceaccount:"+tenant+":dev"; u != want {
		t.Errorf("the service account kubeconfig authenticates as %q, want %q", u, want)
	}
	for _, c := range []struct {
		form url.Values
		code int
		says string
	}{
		{url.Values{"serviceAccount": {tenant + "/missing"}}, http.StatusNotFound, "does not exist"},
		{url.Values{"serviceAccount": {tenant + "/dev"}, "tokenExpiration": {"soon"}}, http.StatusBadRequest, "Token expiration"},
		{url.Values{"serviceAccount": {"Bad/dev"}}, http.StatusBadRequest, `namespace "Bad"`},
	} {
		if code, body := post(b, c.form); code != c.code || !strings.Contains(body, c.says) {
			t.Errorf("POST %v: %d %q, want %d saying %q", c.form, code, body, c.code, c.says)
		}
	}

	// A user who may read StatefulSets, pods and Clusters but not Secrets.
	ctx := context.Background()
	if _, err := env.Kube.CoreV1().ServiceAccounts(w.ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "no-secrets"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: w.ns + "-no-secrets"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"apps"}, Resources: []string{"statefulsets"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch"}}}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "no-secrets", Namespace: w.ns}},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name}}
	for _, o := range []client.Object{role, binding} {
		if err := w.k.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = w.k.Delete(context.Background(), o) })
	}
	tok, err := env.Kube.CoreV1().ServiceAccounts(w.ns).CreateToken(ctx, "no-secrets",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(600))}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b2 := chrome.New(t)
	signIn(t, b2, w.base, tok.Status.Token)
	chrome.Run(t, b2, "open the page without Secret access",
		chromedp.Navigate(w.base+"/virtual/"+w.ns+"/"+name+"?ns="+tenant), chromedp.WaitVisible(chromedp.CSS(`#connect-command`)))
	if p := html(t, b2); strings.Contains(p, `id="kubeconfig"`) || strings.Contains(p, "objects-table") ||
		!strings.Contains(p, "your account may not read Secret "+w.ns+"/vc-"+name) {
		t.Error("a user who may not read vc-NAME sees the virtual cluster's objects or its kubeconfig link, or no reason")
	}
	if code, body := get(b2); code != http.StatusForbidden || strings.Contains(body, "client-key-data") {
		t.Errorf("kubeconfig download without Secret access: %d, want 403", code)
	}
	if code, _ := post(b2, url.Values{"serviceAccount": {tenant + "/dev"}}); code != http.StatusForbidden {
		t.Errorf("service account kubeconfig without Secret access: %d, want 403", code)
	}
}

// The pages at a phone's width (390 px) need no sideways scrolling of the
// page (wide tables scroll inside themselves), and the clusters table is
// usable from the keyboard alone: Tab reaches a cluster's link, Enter
// opens its page.
func TestPhoneWidthAndKeyboard(t *testing.T) {
	w := start(t)
	eks, _, _, _ := w.fleet(t)
	virtualCluster(t, w, "vc2", w.ns+"-tenant")
	b := chrome.New(t)
	signIn(t, b, w.base, env.AdminToken(t, w.ns))

	// Keyboard: from the top of the page, Tab until the EKS cluster's link
	// has the focus (the filter, sort and buttons come first), then Enter.
	chrome.Run(t, b, "focus the page", chromedp.Navigate(w.base+"/"), chromedp.WaitVisible(chromedp.CSS(`#clusters-table`)))
	want := "/clusters/" + eks
	reached := false
	for range 40 {
		chrome.Run(t, b, "press Tab", chromedp.KeyEvent(kb.Tab))
		href, err := chromedp.Run(b, chromedp.Evaluate[string](`document.activeElement.getAttribute("href") || ""`))
		if err != nil {
			t.Fatal(err)
		}
		if href == want {
			reached = true
			break
		}
	}
	if !reached {
		t.Fatalf("40 presses of Tab never focused the link to %s", want)
	}
	chrome.Run(t, b, "open it with Enter", chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.CSS(`#state`)))

	for _, p := range []struct{ path, ready, name string }{
		{"/", `#clusters-table`, "clusters-phone"},
		{"/clusters/" + eks, `#state`, "cluster-phone"},
		{"/virtual/" + w.ns + "/vc2?ns=" + w.ns + "-tenant", `#objects-table`, "virtual-phone"},
	} {
		chrome.Run(t, b, "open "+p.path+" at a phone's width",
			chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile),
			chromedp.Navigate(w.base+p.path), chromedp.WaitVisible(chromedp.CSS(p.ready)))
		overflow, err := chromedp.Run(b, chromedp.Evaluate[int](`document.documentElement.scrollWidth - window.innerWidth`))
		if err != nil {
			t.Fatal(err)
		}
		if overflow > 0 {
			t.Errorf("%s at 390 px: the page is %d px wider than the screen", p.path, overflow)
		}
		shot(t, b, p.name)
	}
}

// The clusters table of the dashboard the manager serves (in process,
// with the EKS and AKS emulators) lists, in one browser, an imported EKS
// and an imported AKS cluster once the manager has read them from their
// clouds (Active, with their node groups and pools), a registered cluster
// and a virtual cluster.
func TestEveryKindListed(t *testing.T) {
	w := start(t)
	ctx := context.Background()
	eksName, aksName, edge := w.ns+"-eks", w.ns+"-aks", w.ns+"-edge"
	eksSrv, token, _ := w.emulatedEKS(t, eksName)
	endpoint, ca := env.APIServer(t)
	aksSrv := akstest.New(akstest.Options{EndpointFor: func(string) string { return endpoint }, CertificateAuthorityFor: func(string) []byte { return ca },
		TokenFor: func(string, string) string { return token }})
	t.Cleanup(aksSrv.Close)
	const subscription = "00000000-0000-0000-0000-000000000001"
	rg := "rg-" + aksName
	if err := aksSrv.ImportCluster(subscription, rg, akstest.ClusterSpec{Name: aksName, KubernetesVersion: "1.31",
		Pools: []akstest.PoolSpec{{Name: "pool1", Count: 2, Mode: "System"}}}); err != nil {
		t.Fatal(err)
	}
	objs := []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: w.ns + "-azure", Namespace: hostedv1.Namespace}, StringData: map[string]string{
			aks.SubscriptionIDField: subscription, aks.TenantIDField: "tenant", aks.ClientIDField: "client", aks.ClientSecretField: "secret"}},
		&mgmtv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: aksName}, Spec: mgmtv1.ClusterSpec{DisplayName: aksName, AKSConfig: &aksv1.AKSClusterConfigSpec{
			ResourceGroup: rg, ResourceLocation: "eastus", ClusterName: aksName, AzureCredentialSecret: hostedv1.Namespace + ":" + w.ns + "-azure", Imported: true}}},
		&mgmtv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: edge}, Spec: mgmtv1.ClusterSpec{DisplayName: edge, ImportedConfig: &mgmtv1.ImportedConfig{}}},
	}
	for _, o := range objs {
		if err := w.k.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = w.k.Delete(context.Background(), o) })
	}
	virtualCluster(t, w, "vc3", w.ns+"-tenant")
	base := runManagerWith(t, w, manager.Options{Clouds: map[string]management.CloudOptions{
		"eks": {Endpoint: eksSrv.URL, Refresh: time.Minute, Poll: time.Second,
			Credentials: eks.TokenFunc(func(context.Context, string, map[string][]byte, string) (string, error) { return token, nil })},
		"aks": {Endpoint: aksSrv.URL, Refresh: time.Minute, Poll: time.Second}}}, eksName, aksName, edge)

	b := chrome.New(t)
	signIn(t, b, base, token)
	chrome.Run(t, b, "wait for the EKS and AKS clusters to be Active, read from their clouds",
		chromedp.WaitVisible(chromedp.CSS(`tr[data-cluster="`+eksName+`"] td.phase-Active`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-cluster="`+aksName+`"] td.phase-Active`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-cluster="`+edge+`"]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-cluster="`+w.ns+`/vc3"] td.phase-Running`)))
	p := html(t, b)
	for _, want := range []string{"<td>EKS</td>", "<td>AKS</td>", "<td>" + mgmtv1.DriverImported + "</td>", "<td>" + dashboard.DriverVirtual + "</td>"} {
		if !strings.Contains(p, want) {
			t.Errorf("the clusters table lacks a row with %s", want)
		}
	}
	shot(t, b, "clusters-every-kind")
}
