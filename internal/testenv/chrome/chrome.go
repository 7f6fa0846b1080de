// Package chrome drives headless Debian chromium from Go tests (chromedp):
// a tab whose navigations are followed, so that a screenshot is never sent
// to a page a navigation is replacing (Chromium never answers it:
// https://github.com/chromedp/chromedp/issues/770, #924), clicks that wait
// for the navigation they start, and bounded screenshots. make installs
// chromium when it is missing.
package chrome

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// New starts headless Debian chromium for t (make installs it when
// missing) and returns a context driving one tab. A chromium that crashes
// while it starts (a segmentation fault seen once in a loaded make test,
// with nothing of ours run yet) is started once more, the crash logged.
func New(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium is not installed: run make binaries (it installs Debian's chromium), or apt-get install chromium")
	}
	ctx, err := start(t, path)
	if err != nil && strings.Contains(err.Error(), "signal: ") && !strings.Contains(err.Error(), "signal: killed") {
		t.Logf("chromium crashed while it started; starting it once more: %v", err)
		ctx, err = start(t, path)
	}
	if err != nil {
		t.Fatal(err)
	}
	nav, err := watchNavigation(ctx)
	if err != nil {
		t.Fatalf("follow the tab's navigations: %v", err)
	}
	return context.WithValue(ctx, navigationKey{}, nav)
}

// start starts chromium at path with a tab, for t; the error says how
// chromium's process ended when it did not start.
func start(t *testing.T, path string) (context.Context, error) {
	// Chromium's profile and temporary files (the folder of its singleton
	// socket, /tmp/org.chromium.Chromium.*, among them) live in the test's
	// own folder, which the test removes even when chromium is killed.
	tmp := t.TempDir()
	// cmd is chromium's process, set before it starts; it is read only
	// after the allocator's cancel, which waits for the process to end.
	var cmd *exec.Cmd
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.WindowSize(1280, 800),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.UserDataDir(filepath.Join(tmp, "profile")), chromedp.Env("TMPDIR="+tmp),
		chromedp.ModifyCmdFunc(func(c *exec.Cmd) { cmd = c }))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(cancelTab)
	ctx, cancelTime := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(cancelTime)
	if err := chromedp.Do(ctx); err != nil {
		// How chromium ended (an exit status or a signal) says why it did
		// not start, where its output (in err) may not: the cancel kills it
		// if it still runs ("signal: killed") and waits for it.
		cancelTab()
		cancel()
		state := "never started"
		if cmd != nil && cmd.ProcessState != nil {
			state = cmd.ProcessState.String()
		}
		return nil, fmt.Errorf("start chromium: %v\nchromium's process: %s", err, state)
	}
	return ctx, nil
}

// navigationKey is the key of the tab's *navigation in the context browser
// returns.
type navigationKey struct{}

// navigation follows the navigations of a tab's main frame, from its Page
// events, so that shot never photographs a page that a navigation is
// about to replace: Chromium drops a Page.captureScreenshot sent to a
// document that a navigation then replaces, and the capture is never
// answered (chromedp#770, #924). A click on a link or a submit button only
// starts its navigation, and a test that goes on when an element is
// visible may still be on the page it is leaving: TestAddEKSImport's
// Choose opens an EKS form with the inputs of the page it leaves.
type navigation struct {
	main cdp.FrameID // the tab's main frame, the same across navigations

	mu sync.Mutex
	// to is the URL of the navigation in flight, "" when none is.
	to string
	// browsing is whether the browser has started the navigation in
	// flight, not only the page asked for it.
	browsing bool
	// started counts the navigations asked for or started so far.
	started int
	// changed is closed, and replaced, when to changes.
	changed chan struct{}
}

// watchNavigation follows the navigations of the tab of ctx, which has
// started.
func watchNavigation(ctx context.Context) (*navigation, error) {
	tree, err := chromedp.Call(ctx, page.GetFrameTree, cdp.Empty{})
	if err != nil {
		return nil, err
	}
	n := &navigation{main: tree.FrameTree.Frame.ID, changed: make(chan struct{})}
	return n, chromedp.Listen(ctx, n.event)
}

// event takes in one event of the tab (on the goroutine reading them, so it
// only records).
func (n *navigation) event(ev any) {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch e := ev.(type) {
	case *page.EventFrameRequestedNavigation:
		// A link clicked, a form submitted: the page asks for a
		// navigation, after the click has returned (a form's submission
		// is a task of its own).
		if e.FrameID == n.main && n.to == "" {
			n.set(e.URL)
		}
	case *page.EventFrameStartedNavigating:
		// Same-document navigations (a fragment, htmx's pushState) keep
		// the document.
		if e.FrameID == n.main && !strings.Contains(strings.ToLower(string(e.NavigationType)), "samedocument") {
			if n.to == "" {
				n.set(e.URL)
			}
			n.browsing = true
		}
	case *page.EventFrameNavigated:
		// Committed: the new document is the page from now on.
		if e.Frame.ID == n.main {
			n.set("")
		}
	case *page.EventFrameStoppedLoading:
		// A navigation the browser started that did not commit (an
		// answer without a page) ends here. Only one it started: a
		// same-document navigation of the page left also stops loading.
		if e.FrameID == n.main && n.browsing {
			n.set("")
		}
	}
}

// set records the navigation in flight to URL to, "" for none; n.mu is
// held.
func (n *navigation) set(to string) {
	if to == n.to {
		return
	}
	if to != "" {
		n.started++
	} else {
		n.browsing = false
	}
	n.to = to
	close(n.changed)
	n.changed = make(chan struct{})
}

// state is the navigation in flight ("" when none), the number of
// navigations started so far, and a channel closed at the next change.
func (n *navigation) state() (to string, started int, changed <-chan struct{}) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.to, n.started, n.changed
}

// navigationOf is the navigations of the tab of ctx, made by New.
func navigationOf(ctx context.Context) (*navigation, error) {
	n, ok := ctx.Value(navigationKey{}).(*navigation)
	if !ok {
		return nil, errors.New("not a tab made by New")
	}
	return n, nil
}

// Follow clicks sel, a link or a form's submit button, and waits, at most
// settleTimeout, until the navigation it starts has ended (committed, or
// stopped without a page). The click returns before the navigation has
// even started (a form's submission is a task of its own), so the steps
// after it may still see the page being left. chromedp.RunResponse ends at
// the first same-document navigation instead: htmx's pushState when the
// Add page's select changes.
func Follow(sel string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, tab *chromedp.Target) (chromedp.Void, error) {
		n, err := navigationOf(ctx)
		if err != nil {
			return chromedp.Void{}, err
		}
		_, before, _ := n.state()
		if _, err := chromedp.Click(chromedp.CSS(sel))(ctx, tab); err != nil {
			return chromedp.Void{}, err
		}
		ctx, cancel := context.WithTimeout(ctx, settleTimeout)
		defer cancel()
		for {
			to, started, changed := n.state()
			if started > before && to == "" {
				return chromedp.Void{}, nil
			}
			select {
			case <-changed:
			case <-ctx.Done():
				if started == before {
					return chromedp.Void{}, fmt.Errorf("the click on %s started no navigation in %s", sel, settleTimeout)
				}
				return chromedp.Void{}, fmt.Errorf("the click on %s still navigates to %s after %s", sel, to, settleTimeout)
			}
		}
	}
}

// settleTimeout bounds Settle and Follow. A page of the dashboard commits and paints
// in well under a second; the rest is for a machine busy with other tests.
const settleTimeout = 10 * time.Second

// framedJS resolves when the page has produced a frame: the second
// requestAnimationFrame callback runs after the frame the first one
// belongs to was drawn. A page that draws no frame (hidden, or not
// rendering) resolves with framed false after 5 s, saying what it is.
const framedJS = `new Promise(resolve => {
  const state = framed => ({framed, url: location.href, visibility: document.visibilityState, readyState: document.readyState});
  const timer = setTimeout(() => resolve(state(false)), 5000);
  requestAnimationFrame(() => requestAnimationFrame(() => { clearTimeout(timer); resolve(state(true)); }));
})`

// pageState is framedJS's answer.
type pageState struct {
	Framed                      bool
	URL, Visibility, ReadyState string
}

// Settle waits, at most settleTimeout, until the page of the tab of ctx
// is one a screenshot can be taken of: no navigation in flight, and the
// page has produced a frame. Chromium answers Page.captureScreenshot with
// a frame of the page; a capture sent while a navigation is in flight
// goes to the document being left and is lost when the new one commits,
// and a page that produces no frame leaves it waiting for ever.
func Settle(ctx context.Context) error {
	n, err := navigationOf(ctx)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, settleTimeout)
	defer cancel()
	for {
		to, started, changed := n.state()
		if to != "" {
			select {
			case <-changed:
				continue
			case <-ctx.Done():
				return fmt.Errorf("the page is still navigating to %s after %s", to, settleTimeout)
			}
		}
		// The round trip also lets a navigation the last action asked
		// for (a form's submission is queued as a task) reach the
		// browser: its Page event comes before the answer.
		s, err := chromedp.Run(ctx, chromedp.Evaluate[pageState](framedJS, chromedp.EvalAwaitPromise))
		if err != nil {
			// The document went away with a navigation: one in flight, one
			// that started (and may have committed) since, or one whose
			// events have not reached us yet, which Chromium reports as
			// "Inspected target navigated or closed". Wait for its page.
			var cdpErr *cdproto.Error
			if to, now, _ := n.state(); to != "" || now != started ||
				(errors.As(err, &cdpErr) && strings.Contains(cdpErr.Message, "navigated or closed") && ctx.Err() == nil) {
				continue
			}
			return fmt.Errorf("wait for the page to produce a frame (Settle waits %s in all): %w", settleTimeout, err)
		}
		if to, now, _ := n.state(); to != "" || now != started {
			continue // a navigation started meanwhile: wait for its page
		}
		if !s.Framed {
			return fmt.Errorf("the page at %s (visibility %s, readyState %s) produced no frame in 5 s", s.URL, s.Visibility, s.ReadyState)
		}
		return nil
	}
}

// Run runs browser actions, failing t with what was being done.
func Run(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// captureTimeout bounds the capture of a settled page, which Chromium
// answers in well under a second (0.42 s at most of 2,000 on 2 busy
// cores); without it a lost capture waits for the tab's 2 minutes and is
// reported as the test's deadline.
const captureTimeout = 10 * time.Second

// Capture is a full-page PNG screenshot of the page, taken once the page
// has settled (Settle): a capture sent earlier may never be answered.
func Capture(ctx context.Context) ([]byte, error) {
	if err := Settle(ctx); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, captureTimeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if errors.Is(err, context.DeadlineExceeded) {
		return nil, fmt.Errorf("the capture of the settled page was not answered in %s", captureTimeout)
	}
	return png, err
}

// Cookie is the value of cookie name in the browser of ctx; t fails when
// there is none.
func Cookie(t *testing.T, ctx context.Context, name string) string {
	t.Helper()
	got, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range got.Cookies {
		if c.Name == name {
			return c.Value
		}
	}
	t.Fatalf("the browser has no cookie %s", name)
	return ""
}
