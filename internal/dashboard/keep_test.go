package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/dashboard"
	"github.com/clustersync/clustersync/internal/hosted/engine"
	"github.com/clustersync/clustersync/internal/testenv"
	"github.com/clustersync/clustersync/internal/testenv/chrome"
)

// "Keep my value" on a hosted cluster's page: tags changed in the EKS
// console while the user changes them in spec give a Conflict, shown with
// its three values; a keep posted without the CSRF token is refused; a
// user allowed to edit Clusters (and read their events), not to read the
// operator object, sees the conflict and clicking "Keep my value" pushes the user's tags to EKS and the Conflict
// clears on the open page, without a reload. The time from the click to
// the page showing the conflict gone is logged (a figure, not a limit).
func TestKeepMyValue(t *testing.T) {
	w := start(t)
	ctx := context.Background()
	name := w.ns + "-keep"
	// A refresh no sooner than the test's end: the console change is not
	// adopted before the user's edit crosses it.
	b, base, srv, c := w.openEmulatedEKS(t, name, 10*time.Minute)
	testenv.Eventually(t, 30*time.Second, func() error { // the operator recorded what EKS agrees with
		var op eksv1.EKSClusterConfig
		if err := w.k.Get(ctx, client.ObjectKey{Namespace: hostedv1.Namespace, Name: name}, &op); err != nil {
			return err
		}
		if a := op.Status.AppliedSpec; a == nil || a.Tags == nil || (*a.Tags)["team"] != "a" {
			return fmt.Errorf("applied %+v, want tags team: a", a)
		}
		return nil
	})

	// The console and the user change the tags at once.
	snap, _ := srv.Cluster(name)
	if err := srv.ConsoleSetTags(snap.ARN, map[string]string{"team": "console"}); err != nil {
		t.Fatal(err)
	}
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := w.k.Get(ctx, client.ObjectKeyFromObject(c), c); err != nil {
			return err
		}
		c.Spec.EKSConfig.Tags = &map[string]string{"team": "user"}
		return w.k.Update(ctx, c)
	}); err != nil {
		t.Fatal(err)
	}
	chrome.Run(t, b, "wait for the Conflict, without a reload", chromedp.WaitVisible(chromedp.CSS(`tr[data-path="tags"] form.keep button`)))
	page := html(t, b)
	for _, want := range []string{`<code>{"team":"user"}</code>`, `<code>{"team":"console"}</code>`, `<code>{"team":"a"}</code>`, "Take the cloud's value"} {
		if !strings.Contains(page, want) {
			t.Errorf("the conflict lacks %s", want)
		}
	}
	shot(t, b, "keep")

	// A keep without the CSRF token, with the browser's session.
	jar, _ := cookiejar.New(nil)
	u, _ := url.Parse(base)
	jar.SetCookies(u, []*http.Cookie{{Name: dashboard.CookieName, Value: sessionOf(t, b)}})
	hc := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.PostForm(base+"/clusters/"+name+"/keep", url.Values{"path": {"tags"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a keep without the CSRF token: %s, want 403", resp.Status)
	}
	if err := w.k.Get(ctx, client.ObjectKeyFromObject(c), c); err != nil {
		t.Fatal(err)
	}
	if v, ok := c.Annotations[engine.KeepAnnotation]; ok {
		t.Fatalf("a keep without the CSRF token was written: %s", v)
	}

	// The answer comes from a user allowed to edit Clusters (and read
	// their events), not to read the operator object.
	b = chrome.New(t)
	signIn(t, b, base, clusterEditorToken(t, w))
	chrome.Run(t, b, "open the cluster as its editor", chromedp.Navigate(base+"/clusters/"+name),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-path="tags"] form.keep button`)))
	if _, err := chromedp.Run(b, chromedp.Evaluate[bool](`(window.__notReloaded = true)`)); err != nil {
		t.Fatal(err)
	}
	clicked := time.Now()
	chrome.Run(t, b, "keep my value", chromedp.Click(chromedp.CSS(`tr[data-path="tags"] form.keep button`)))
	if _, err := chromedp.Run(b, chromedp.Poll[bool](`!document.querySelector('table.conflicts') &&
		[...document.querySelectorAll('section[aria-labelledby="conditions"] tr')].some(tr => tr.cells[0].textContent === 'Conflict' && tr.cells[1].textContent === 'False') &&
		[...document.querySelectorAll('table.events td')].some(td => td.textContent === 'ConflictAnswered')`)); err != nil {
		t.Fatalf("wait for the Conflict to clear, without a reload: %v", err)
	}
	t.Logf("kept: the open page showed the conflict gone %.1f s after the click (--eks-poll 1)", time.Since(clicked).Seconds())
	kept, err := chromedp.Run(b, chromedp.Evaluate[bool](`window.__notReloaded === true`))
	if err != nil || !kept {
		t.Errorf("the page was reloaded to show the answer (%v)", err)
	}
	if snap, _ := srv.Cluster(name); snap.Tags["team"] != "user" || len(snap.Tags) != 1 {
		t.Errorf("EKS tags %v after keeping, want the user's {team: user}", snap.Tags)
	}
	if err := w.k.Get(ctx, client.ObjectKeyFromObject(c), c); err != nil {
		t.Fatal(err)
	}
	if got := *c.Spec.EKSConfig.Tags; len(got) != 1 || got["team"] != "user" {
		t.Errorf("spec.eksConfig.tags %v after keeping, want the user's", got)
	}
	if v, ok := c.Annotations[engine.KeepAnnotation]; ok {
		t.Errorf("the answer is still on the Cluster once taken: %s", v)
	}
	html(t, b)
	shot(t, b, "keep-answered")
}

// clusterEditorToken returns a token of ServiceAccount editor of w's
// namespace, whose RBAC allows get, list, watch, update and patch on
// Clusters and reading events, and nothing else: no operator object.
func clusterEditorToken(t *testing.T, w *world) string {
	t.Helper()
	ctx := context.Background()
	if _, err := env.Kube.CoreV1().ServiceAccounts(w.ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "editor"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: w.ns + "-cluster-editor"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{mgmtv1.GroupVersion.Group}, Resources: []string{"clusters"}, Verbs: []string{"get", "list", "watch", "update", "patch"}},
		{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"get", "list", "watch"}}}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: w.ns + "-cluster-editor"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "editor", Namespace: w.ns}},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name}}
	for _, o := range []client.Object{role, binding} {
		if err := w.k.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = w.k.Delete(context.Background(), o) })
	}
	tr, err := env.Kube.CoreV1().ServiceAccounts(w.ns).CreateToken(ctx, "editor",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(600))}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}
