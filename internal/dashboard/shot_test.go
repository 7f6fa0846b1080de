package dashboard_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/clustersync/clustersync/internal/testenv/chrome"
)

// addLike serves /add as the Add page is when it matters to screenshots:
// a select whose change has htmx swap in the form of its kind (and push
// its URL), and a Choose button submitting the same choice without
// JavaScript, which loads /add?kind=KIND.
func addLike() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/assets/", http.StripPrefix("/assets/", http.FileServer(http.Dir("assets"))))
	mux.HandleFunc("/add", func(w http.ResponseWriter, r *http.Request) {
		kind := r.URL.Query().Get("kind")
		if kind == "" {
			kind = "eks"
		}
		fmt.Fprintf(w, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Add</title>
<link rel="stylesheet" href="/assets/style.css"><script src="/assets/vendor/htmx.min.js"></script></head>
<body><main><h1>Add a cluster</h1>
<form class="choose" method="get" action="/add"><label for="kind">What to add</label>
<select id="kind" name="kind" hx-get="/add" hx-trigger="change" hx-target="#add-form" hx-select="#add-form" hx-swap="outerHTML" hx-push-url="true">
<option value="eks">EKS</option><option value="aks">AKS</option></select> <button type="submit">Choose</button></form>
<form id="add-form" method="post" action="/add"><h2>%s</h2><label for="f-region">Region</label><input id="f-region" name="region"></form>
</main></body></html>`, kind)
	})
	return mux
}

// A screenshot asked for right after a click that navigates is answered,
// and is of the page the click opens: TestAddEKSImport's Choose, whose
// capture Chromium lost about one run in seven before capture settled the
// page first (a capture sent while the navigation is in flight goes to
// the document being left). Without settle 57 of 60 such captures were
// never answered, so this fails at once when settle lets one through.
func TestShotWhileNavigating(t *testing.T) {
	srv := httptest.NewServer(addLike())
	t.Cleanup(srv.Close)
	b := chrome.New(t)
	for i := range 20 {
		chrome.Run(t, b, "open the Add page and choose EKS",
			chromedp.Navigate(srv.URL+"/add"),
			chromedp.SetValue(chromedp.CSS(`#kind`), "eks"),
			chromedp.Click(chromedp.CSS(`form.choose button`)))
		if _, err := chrome.Capture(b); err != nil {
			t.Fatalf("screenshot %d after Choose: %v", i, err)
		}
	}
}
