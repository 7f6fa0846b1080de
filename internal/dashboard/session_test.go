package dashboard_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/dashboard"
	"github.com/clustersync/clustersync/internal/testenv"
	"github.com/clustersync/clustersync/internal/testenv/chrome"
)

// A user signed in on one replica is signed in on every replica and on a
// replica started afterwards (a restart), with the same cookie; the cookie
// is a random ID that no Secret holds; signing out on one replica ends the
// session on all of them, live updates included.
func TestSessionsAcrossReplicas(t *testing.T) {
	w := start(t)
	second := httptest.NewServer(replica(t, w.ns).Handler())
	t.Cleanup(second.Close)
	b := chrome.New(t)
	signIn(t, b, w.base, env.AdminToken(t, w.ns))
	cookie := sessionOf(t, b)

	var secrets corev1.SecretList
	if err := w.k.List(t.Context(), &secrets, client.InNamespace(w.ns), client.HasLabels{dashboard.SessionLabel}); err != nil {
		t.Fatal(err)
	}
	if len(secrets.Items) != 1 {
		t.Fatalf("want one session Secret in %s, have %d", w.ns, len(secrets.Items))
	}
	sec := secrets.Items[0]
	if sec.Type != dashboard.SessionSecretType || sec.Annotations[dashboard.SessionUserAnnotation] == "" {
		t.Errorf("session Secret %s: type %q, annotations %v", sec.Name, sec.Type, sec.Annotations)
	}
	for k, v := range sec.Data {
		if strings.Contains(string(v), cookie) || strings.Contains(sec.Name, cookie) {
			t.Errorf("session Secret %s holds the cookie (key %s)", sec.Name, k)
		}
	}

	// Cookies are sent to every port of 127.0.0.1: the second replica gets
	// the cookie the first one set.
	chrome.Run(t, b, "open the second replica",
		chromedp.Navigate(second.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS(`#clusters-table`)))
	shot(t, b, "session-second-replica")

	// A replica started after the sign-in (a restart): nothing in memory.
	restarted := httptest.NewServer(replica(t, w.ns).Handler())
	t.Cleanup(restarted.Close)
	status := func(base string) int {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.AddCookie(&http.Cookie{Name: dashboard.CookieName, Value: cookie})
		resp, err := noRedirects().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, base := range []string{w.base, second.URL, restarted.URL} {
		if got := status(base); got != http.StatusOK {
			t.Errorf("GET %s/ with the session cookie: %d, want 200", base, got)
		}
	}

	// A live table open on the restarted replica: its stream ends, saying
	// why, when the user signs out on the second one.
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, restarted.URL+"/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.AddCookie(&http.Cookie{Name: dashboard.CookieName, Value: cookie})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := make(chan string, 1000)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	waitLine(t, lines, "event: clusters")

	start := time.Now()
	chrome.Run(t, b, "sign out on the second replica", chrome.Follow(`form.signout button`), chromedp.WaitVisible(chromedp.CSS(`#token`)))
	waitLine(t, lines, "data: your session ended")
	for l := range lines {
		if l != "" { // the end of the event
			t.Errorf("the stream goes on after the sign-out: %q", l)
		}
	}
	t.Logf("the restarted replica's live table ended %s after the sign-out on the second replica", time.Since(start).Round(time.Millisecond))
	testenv.Eventually(t, 10*time.Second, func() error {
		for _, base := range []string{w.base, second.URL, restarted.URL} {
			if got := status(base); got != http.StatusSeeOther {
				return fmt.Errorf("GET %s/ after the sign-out: %d, want 303 to /login", base, got)
			}
		}
		return nil
	})
	if err := w.k.List(context.Background(), &secrets, client.InNamespace(w.ns), client.HasLabels{dashboard.SessionLabel}); err != nil {
		t.Fatal(err)
	}
	if len(secrets.Items) != 0 {
		t.Errorf("session Secrets left after the sign-out: %d", len(secrets.Items))
	}
}

// noRedirects is an HTTP client that returns redirects instead of
// following them.
func noRedirects() *http.Client {
	return &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// waitLine reads lines until one starts with prefix; t fails when none has
// in 10 s or the lines end first.
func waitLine(t *testing.T, lines <-chan string, prefix string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the stream ended before a line %q", prefix)
			}
			if strings.HasPrefix(l, prefix) {
				return
			}
		case <-deadline:
			t.Fatalf("no line %q in 10 s", prefix)
		}
	}
}
