package dashboard_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/dashboard"
	"github.com/clustersync/clustersync/internal/hosted/eks"
	"github.com/clustersync/clustersync/internal/testenv/chrome"
)

// credential creates a credential Secret in clustersync-global-data whose
// value is unique to the test, and returns its name and value.
func (w *world) credential(t *testing.T, suffix string) (name, value string) {
	t.Helper()
	name, value = w.ns+"-"+suffix, "value-of-"+w.ns+"-"+suffix+"-never-shown"
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: hostedv1.Namespace},
		StringData: map[string]string{eks.AccessKeyField: "AKIA" + value, eks.SecretKeyField: value}}
	if err := w.k.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.k.Delete(context.Background(), s) })
	return name, value
}

// pageWithout is the browser's page now, failing t if it holds any of values (or
// the shared secretValue).
func pageWithout(t *testing.T, ctx context.Context, values ...string) string {
	t.Helper()
	p := html(t, ctx)
	for _, v := range values {
		if strings.Contains(p, v) {
			t.Fatalf("a Secret's value is on the page")
		}
	}
	return p
}

// deleteLater deletes Cluster name when t ends.
func (w *world) deleteLater(t *testing.T, name string) {
	t.Cleanup(func() {
		_ = w.k.Delete(context.Background(), &mgmtv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}})
	})
}

// absent fails t when Cluster name exists.
func (w *world) absent(t *testing.T, name, why string) {
	t.Helper()
	err := w.k.Get(context.Background(), client.ObjectKey{Name: name}, &mgmtv1.Cluster{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("Cluster %s exists (or %v) after %s", name, err, why)
	}
}

// Import an EKS cluster from the Add page: the credential Secret chosen by
// name (its value on no page), the preview's YAML, the Cluster created
// with the user's token, and its page opened.
func TestAddEKSImport(t *testing.T) {
	w := start(t)
	cred, value := w.credential(t, "aws")
	name := w.ns + "-added"
	w.deleteLater(t, name)
	b := chrome.New(t)
	signIn(t, b, w.base, env.AdminToken(t, w.ns))
	chrome.Run(t, b, "open Add from the header",
		chromedp.Click(chromedp.CSS(`nav a[href="/add"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#add-form`)),
		chromedp.SetValue(chromedp.CSS(`#kind`), "eks"),
		// The select's change has htmx swap in the EKS form, and Choose
		// then loads /add?kind=eks: wait for that page, as #f-region is
		// on the page it leaves too.
		chrome.Follow(`form.choose button`),
		chromedp.WaitVisible(chromedp.CSS(`#f-region`)))
	p := pageWithout(t, b, value)
	ref := hostedv1.Namespace + ":" + cred
	if !strings.Contains(p, `<option value="`+ref+`">`+cred+`</option>`) {
		t.Errorf("the credential select lacks Secret %s", cred)
	}
	for _, label := range []string{`<label for="f-name">`, `<label for="f-cloudName">`, `<label for="f-region">`, `<label for="f-credential">`} {
		if !strings.Contains(p, label) {
			t.Errorf("the EKS form lacks %s", label)
		}
	}
	shot(t, b, "add")

	chrome.Run(t, b, "fill in and preview",
		chromedp.SendKeys(chromedp.CSS(`#f-name`), name),
		chromedp.SendKeys(chromedp.CSS(`#f-cloudName`), "prod-eks"),
		chromedp.SendKeys(chromedp.CSS(`#f-region`), "eu-west-1"),
		chromedp.SetValue(chromedp.CSS(`#f-credential`), ref),
		chromedp.Click(chromedp.CSS(`#preview-button`)),
		chromedp.WaitVisible(chromedp.CSS(`#preview-yaml`)))
	yml, err := chromedp.Run(b, chromedp.Text(chromedp.CSS(`#preview-yaml`)))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kind: Cluster", "name: " + name, "displayName: prod-eks", "region: eu-west-1", "amazonCredentialSecret: " + ref, "imported: true"} {
		if !strings.Contains(yml, want) {
			t.Errorf("the preview lacks %q:\n%s", want, yml)
		}
	}
	if p := pageWithout(t, b, value); strings.Contains(p, `role="alert"`) {
		t.Errorf("the preview shows problems:\n%s", p)
	}
	w.absent(t, name, "a preview")
	shot(t, b, "add-preview")

	chrome.Run(t, b, "import the cluster", chromedp.Click(chromedp.CSS(`#create-button`)), chromedp.WaitVisible(chromedp.CSS(`h2#conditions`)))
	loc, err := chromedp.Run(b, chromedp.Location())
	if err != nil || loc != w.base+"/clusters/"+name {
		t.Errorf("after Import the browser is at %s (%v), want /clusters/%s", loc, err, name)
	}
	pageWithout(t, b, value)
	var c mgmtv1.Cluster
	if err := w.k.Get(context.Background(), client.ObjectKey{Name: name}, &c); err != nil {
		t.Fatalf("the Cluster was not created: %v", err)
	}
	want := mgmtv1.ClusterSpec{DisplayName: name, EKSConfig: &eksv1.EKSClusterConfigSpec{DisplayName: "prod-eks", Region: "eu-west-1",
		AmazonCredentialSecret: ref, Imported: true}}
	if !reflect.DeepEqual(c.Spec, want) {
		t.Errorf("spec %+v, want %+v", c.Spec, want)
	}
}

// Bad input is shown on the form, naming the field, and creates nothing:
// an empty region (the form's check), a project ID the schema refuses (the
// API server's, on the preview's dry run), an invalid name.
func TestAddBadInput(t *testing.T) {
	w := start(t)
	cred, value := w.credential(t, "aws")
	ref := hostedv1.Namespace + ":" + cred
	name := w.ns + "-bad"
	w.deleteLater(t, name)
	b := chrome.New(t)
	signIn(t, b, w.base, env.AdminToken(t, w.ns))
	chrome.Run(t, b, "import without a region",
		chromedp.Navigate(w.base+"/add?kind=eks"),
		chromedp.SendKeys(chromedp.CSS(`#f-name`), name),
		chromedp.SendKeys(chromedp.CSS(`#f-cloudName`), "prod-eks"),
		chromedp.SetValue(chromedp.CSS(`#f-credential`), ref),
		chromedp.Click(chromedp.CSS(`#create-button`)),
		chromedp.WaitVisible(chromedp.CSS(`#f-region-error`)))
	errText, err := chromedp.Run(b, chromedp.Text(chromedp.CSS(`#f-region-error`)))
	if err != nil || errText != "spec.eksConfig.region: required" {
		t.Errorf("the region's error says %q (%v)", errText, err)
	}
	// The values typed are kept.
	if v, err := chromedp.Run(b, chromedp.Value(chromedp.CSS(`#f-cloudName`))); err != nil || v != "prod-eks" {
		t.Errorf("the cloud name is %q after the error (%v)", v, err)
	}
	pageWithout(t, b, value)
	shot(t, b, "add-error")
	w.absent(t, name, "an import without a region")

	chrome.Run(t, b, "preview a GKE import with a project ID the schema refuses",
		chromedp.Navigate(w.base+"/add?kind=gke"),
		chromedp.SendKeys(chromedp.CSS(`#f-name`), name),
		chromedp.SendKeys(chromedp.CSS(`#f-project`), "Not_A_Project"),
		chromedp.SendKeys(chromedp.CSS(`#f-location`), "us-central1-a"),
		chromedp.SendKeys(chromedp.CSS(`#f-cloudName`), "g1"),
		chromedp.SetValue(chromedp.CSS(`#f-credential`), ref),
		chromedp.Click(chromedp.CSS(`#preview-button`)),
		chromedp.WaitVisible(chromedp.CSS(`#f-project-error`)))
	if errText, err := chromedp.Run(b, chromedp.Text(chromedp.CSS(`#f-project-error`))); err != nil || !strings.Contains(errText, "spec.gkeConfig.projectID") {
		t.Errorf("the project's error says %q (%v)", errText, err)
	}
	pageWithout(t, b, value)
	w.absent(t, name, "a preview the schema refuses")

	chrome.Run(t, b, "register with an invalid name",
		chromedp.Navigate(w.base+"/add?kind=registered"),
		chromedp.SendKeys(chromedp.CSS(`#f-name`), "Not_A_Name"),
		chromedp.Click(chromedp.CSS(`#create-button`)),
		chromedp.WaitVisible(chromedp.CSS(`#f-name-error`)))
	if errText, err := chromedp.Run(b, chromedp.Text(chromedp.CSS(`#f-name-error`))); err != nil || !strings.HasPrefix(errText, "metadata.name: ") {
		t.Errorf("the name's error says %q (%v)", errText, err)
	}
}

// Register a cluster from the Add page (the form swapped in by htmx when
// the select changes): the Cluster has spec.importedConfig with its
// members, and the browser lands on its page.
func TestAddRegistered(t *testing.T) {
	w := start(t)
	name := w.ns + "-reg"
	w.deleteLater(t, name)
	b := chrome.New(t)
	signIn(t, b, w.base, env.AdminToken(t, w.ns))
	chrome.Run(t, b, "open Add from the clusters page", chromedp.Click(chromedp.CSS(`a.add-link`)), chromedp.WaitVisible(chromedp.CSS(`#kind`)))
	if _, err := chromedp.Run(b, chromedp.Evaluate[bool](`(k => (k.value = 'registered', k.dispatchEvent(new Event('change', {bubbles: true}))))(document.getElementById('kind'))`)); err != nil {
		t.Fatal(err)
	}
	chrome.Run(t, b, "register",
		chromedp.WaitVisible(chromedp.CSS(`#f-members`)),
		chromedp.SendKeys(chromedp.CSS(`#f-name`), name),
		chromedp.SendKeys(chromedp.CSS(`#f-members`), "alice=cluster-owner"),
		chromedp.Click(chromedp.CSS(`#preview-button`)),
		chromedp.WaitVisible(chromedp.CSS(`#preview-command`)))
	if cmd, err := chromedp.Run(b, chromedp.Text(chromedp.CSS(`#preview-command`))); err != nil || cmd != "clustersync cluster import "+name+" --member alice=cluster-owner" {
		t.Errorf("the command line shown is %q (%v)", cmd, err)
	}
	html(t, b)
	shot(t, b, "add-registered")
	chrome.Run(t, b, "register", chromedp.Click(chromedp.CSS(`#create-button`)), chromedp.WaitVisible(chromedp.CSS(`h2#import`)))
	var c mgmtv1.Cluster
	if err := w.k.Get(context.Background(), client.ObjectKey{Name: name}, &c); err != nil {
		t.Fatalf("the Cluster was not created: %v", err)
	}
	want := []mgmtv1.ClusterMember{{Kind: "User", Name: "alice", Role: mgmtv1.RoleClusterOwner}}
	if c.Spec.ImportedConfig == nil || !reflect.DeepEqual(c.Spec.Members, want) || c.Spec.DisplayName != name {
		t.Errorf("spec %+v, want importedConfig and members %+v", c.Spec, want)
	}
}

// Without JavaScript the form still works (Preview is a plain submit with
// action=preview; EKS, AKS and GKE imports created), a name taken is
// refused with 409, and a write without the CSRF token is refused with
// 403 and creates nothing.
func TestAddWithoutJavaScriptAndCSRF(t *testing.T) {
	w := start(t)
	cred, value := w.credential(t, "aws")
	name := w.ns + "-nojs"
	w.deleteLater(t, name)
	b := chrome.New(t)
	signIn(t, b, w.base, env.AdminToken(t, w.ns))
	chrome.Run(t, b, "open Add", chromedp.Navigate(w.base+"/add"), chromedp.WaitVisible(chromedp.CSS(`#add-form`)))
	csrf, err := chromedp.Run(b, chromedp.AttributeValue(chromedp.CSS(`#add-form input[name="`+dashboard.CSRFField+`"]`), "value"))
	if err != nil || csrf.Value == "" {
		t.Fatalf("no CSRF token on the form (%v)", err)
	}
	got, err := chromedp.Call(b, network.GetCookies, network.GetCookiesParams{})
	if err != nil {
		t.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	u, _ := url.Parse(w.base)
	for _, c := range got.Cookies {
		jar.SetCookies(u, []*http.Cookie{{Name: c.Name, Value: c.Value}})
	}
	hc := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	form := url.Values{"kind": {"eks"}, "name": {name}, "cloudName": {"p"}, "region": {"us-east-2"}, "credential": {hostedv1.Namespace + ":" + cred}}
	post := func(v url.Values) (int, string, string) {
		t.Helper()
		resp, err := hc.PostForm(w.base+"/add", v)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if strings.Contains(string(body), value) || strings.Contains(string(body), "s3cr3t-never-on-a-page") {
			t.Fatal("a Secret's value is in an answer")
		}
		return resp.StatusCode, resp.Header.Get("Location"), string(body)
	}

	if status, _, _ := post(form); status != http.StatusForbidden {
		t.Errorf("POST /add without the CSRF token: %d, want 403", status)
	}
	w.absent(t, name, "a POST without the CSRF token")

	with := func(extra ...string) url.Values {
		v := url.Values{dashboard.CSRFField: {csrf.Value}}
		for k, vs := range form {
			v[k] = vs
		}
		for i := 0; i+1 < len(extra); i += 2 {
			v.Set(extra[i], extra[i+1])
		}
		return v
	}
	resp, err := hc.Get(w.base + "/add")
	if err != nil {
		t.Fatal(err)
	}
	addPage, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	started := time.Now()
	status, _, body := post(with("action", "preview"))
	t.Logf("the Add page weighs %d bytes; a preview (a dry-run create with the user's token and the page) took %s", len(addPage), time.Since(started).Round(time.Millisecond))
	if status != http.StatusOK || !strings.Contains(body, `<pre id="preview-yaml">`) || !strings.Contains(body, "region: us-east-2") {
		t.Errorf("preview without JavaScript: %d, no YAML in the page", status)
	}
	w.absent(t, name, "a preview without JavaScript")
	if status, _, body := post(with("region", "")); status != http.StatusUnprocessableEntity || !strings.Contains(body, "spec.eksConfig.region: required") {
		t.Errorf("import without a region: %d, want 422 naming spec.eksConfig.region", status)
	}
	status, loc, _ := post(with("action", "create"))
	if status != http.StatusSeeOther || loc != "/clusters/"+name {
		t.Errorf("import without JavaScript: %d to %q, want 303 to /clusters/%s", status, loc, name)
	}
	// AKS and GKE the same way: their forms' inputs, and the Clusters.
	for _, tc := range []struct {
		kind   string
		inputs []string
		form   url.Values
		check  func(mgmtv1.ClusterSpec) bool
	}{{
		kind: "aks", inputs: []string{"f-name", "f-cloudName", "f-resourceGroup", "f-location", "f-credential"},
		form: url.Values{"cloudName": {"aks1"}, "resourceGroup": {"rg1"}, "location": {"eastus"}},
		check: func(s mgmtv1.ClusterSpec) bool {
			a := s.AKSConfig
			return a != nil && a.ClusterName == "aks1" && a.ResourceGroup == "rg1" && a.ResourceLocation == "eastus" && a.Imported &&
				a.AzureCredentialSecret == hostedv1.Namespace+":"+cred
		},
	}, {
		kind: "gke", inputs: []string{"f-name", "f-project", "f-location", "f-cloudName", "f-credential"},
		form: url.Values{"cloudName": {"gke1"}, "project": {"my-project-1"}, "location": {"europe-west4"}},
		check: func(s mgmtv1.ClusterSpec) bool {
			g := s.GKEConfig
			return g != nil && g.ClusterName == "gke1" && g.ProjectID == "my-project-1" && g.Region == "europe-west4" && g.Zone == "" && g.Imported &&
				g.GoogleCredentialSecret == hostedv1.Namespace+":"+cred
		},
	}} {
		resp, err := hc.Get(w.base + "/add?kind=" + tc.kind)
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, in := range tc.inputs {
			if !strings.Contains(string(page), `<label for="`+in+`">`) || !strings.Contains(string(page), `id="`+in+`"`) {
				t.Errorf("the %s form lacks input %s with its label", tc.kind, in)
			}
		}
		n := name + "-" + tc.kind
		w.deleteLater(t, n)
		v := url.Values{dashboard.CSRFField: {csrf.Value}, "kind": {tc.kind}, "name": {n}, "credential": {hostedv1.Namespace + ":" + cred}, "action": {"create"}}
		for k, vs := range tc.form {
			v[k] = vs
		}
		if status, loc, body := post(v); status != http.StatusSeeOther || loc != "/clusters/"+n {
			t.Errorf("%s import: %d to %q, want 303 to /clusters/%s\n%s", tc.kind, status, loc, n, body)
			continue
		}
		var c mgmtv1.Cluster
		if err := w.k.Get(context.Background(), client.ObjectKey{Name: n}, &c); err != nil || !tc.check(c.Spec) {
			t.Errorf("%s import: Cluster %s: %+v (%v)", tc.kind, n, c.Spec, err)
		}
	}

	if status, _, body := post(with("action", "create")); status != http.StatusConflict || !strings.Contains(body, "a cluster named "+name+" exists") {
		t.Errorf("importing the same name again: %d, want 409 saying the name is taken", status)
	}
}

// token is a token of a new service account of w's namespace bound to a
// ClusterRole of rules.
func (w *world) token(t *testing.T, name string, rules ...rbacv1.PolicyRule) string {
	t.Helper()
	ctx := context.Background()
	if _, err := env.Kube.CoreV1().ServiceAccounts(w.ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: w.ns + "-" + name}, Rules: rules}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: w.ns + "-" + name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: w.ns}},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name}}
	for _, o := range []client.Object{role, binding} {
		if err := w.k.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = w.k.Delete(context.Background(), o) })
	}
	tr, err := env.Kube.CoreV1().ServiceAccounts(w.ns).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(600))}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// The forms write with the user's token: a user who may create Clusters
// but not list Secrets types the credential reference (and the Cluster is
// created); a user who may only read Clusters is told, on the preview,
// that RBAC refuses, and nothing is created.
func TestAddRBAC(t *testing.T) {
	w := start(t)
	cred, value := w.credential(t, "aws")
	ref := hostedv1.Namespace + ":" + cred
	name := w.ns + "-rbac"
	w.deleteLater(t, name)
	read := rbacv1.PolicyRule{APIGroups: []string{mgmtv1.GroupVersion.Group}, Resources: []string{"clusters"}, Verbs: []string{"get", "list", "watch"}}
	adder := w.token(t, "adder", read, rbacv1.PolicyRule{APIGroups: []string{mgmtv1.GroupVersion.Group}, Resources: []string{"clusters"}, Verbs: []string{"create"}})
	viewer := w.token(t, "viewer", read)

	b := chrome.New(t)
	signIn(t, b, w.base, viewer)
	chrome.Run(t, b, "preview as a user who may not create clusters",
		chromedp.Navigate(w.base+"/add?kind=eks"),
		chromedp.SendKeys(chromedp.CSS(`#f-name`), name),
		chromedp.SendKeys(chromedp.CSS(`#f-cloudName`), "p"),
		chromedp.SendKeys(chromedp.CSS(`#f-region`), "us-west-2"),
		chromedp.SendKeys(chromedp.CSS(`#f-credential`), ref), // a text input: Secrets may not be listed
		chromedp.Click(chromedp.CSS(`#preview-button`)),
		chromedp.WaitVisible(chromedp.CSS(`#add-problems`)))
	if p := pageWithout(t, b, value); !strings.Contains(p, "may not create clusters (RBAC)") || !strings.Contains(p, "may not list the Secrets of "+hostedv1.Namespace) {
		t.Error("the viewer is not told RBAC refuses the create, or that Secrets may not be listed")
	}
	w.absent(t, name, "a preview by a user who may not create clusters")

	chrome.Run(t, b, "sign out", chromedp.Click(chromedp.CSS(`.signout button`)), chromedp.WaitVisible(chromedp.CSS(`#token`)))
	signIn(t, b, w.base, adder)
	chrome.Run(t, b, "import as a user who may create clusters but not list Secrets",
		chromedp.Navigate(w.base+"/add?kind=eks"),
		chromedp.SendKeys(chromedp.CSS(`#f-name`), name),
		chromedp.SendKeys(chromedp.CSS(`#f-cloudName`), "p"),
		chromedp.SendKeys(chromedp.CSS(`#f-region`), "us-west-2"),
		chromedp.SendKeys(chromedp.CSS(`input#f-credential`), ref),
		chromedp.Click(chromedp.CSS(`#create-button`)),
		chromedp.WaitVisible(chromedp.CSS(`h2#conditions`)))
	pageWithout(t, b, value)
	var c mgmtv1.Cluster
	if err := w.k.Get(context.Background(), client.ObjectKey{Name: name}, &c); err != nil {
		t.Fatalf("the Cluster was not created: %v", err)
	}
	if c.Spec.EKSConfig == nil || c.Spec.EKSConfig.AmazonCredentialSecret != ref {
		t.Errorf("spec %+v, want eksConfig with amazonCredentialSecret %s", c.Spec, ref)
	}
}
