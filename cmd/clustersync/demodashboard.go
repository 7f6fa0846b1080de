package main

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/clustersync/clustersync/internal/dashboard"
	"github.com/clustersync/clustersync/internal/hosted/clouds"
	"github.com/clustersync/clustersync/internal/manager"
)

// defaultDemoDashboard is where `clustersync demo` serves the dashboard.
const defaultDemoDashboard = "127.0.0.1:8090"

// serveDemoDashboard serves the web dashboard (as `clustersync manager
// --dashboard-addr` does) of the host at host on ln until stop is called;
// it returns the dashboard's URL. Sessions are kept where the manager
// keeps them, in namespace clustersync-system, which it makes when
// missing.
func serveDemoDashboard(ctx context.Context, host *rest.Config, ln net.Listener) (base string, stop func(), err error) {
	scheme, err := manager.Scheme()
	if err != nil {
		return "", nil, err
	}
	ns := manager.DefaultLeaderElectionNamespace
	kube, err := kubernetes.NewForConfig(host)
	if err != nil {
		return "", nil, err
	}
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", nil, fmt.Errorf("namespace %s for the dashboard's sessions: %w", ns, err)
	}
	d, err := dashboard.New(dashboard.Options{Config: host, Scheme: scheme, Clouds: clouds.All(), SessionNamespace: ns})
	if err != nil {
		return "", nil, err
	}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	if err := d.Start(sctx); err != nil {
		cancel()
		return "", nil, err
	}
	srv := &http.Server{Handler: d.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	stop = func() {
		defer cancel()
		// Open pages' event streams never go idle: a short grace, then close.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if srv.Shutdown(ctx) != nil {
			_ = srv.Close()
		}
	}
	return "http://" + ln.Addr().String(), stop, nil
}

// checkDemoDashboard signs in to the dashboard at base by pasting the
// host's admin kubeconfig (file kubeconfig, flattened as `kubectl config
// view --raw --minify --flatten` prints it), as a user would, and checks
// that virtual cluster name of host namespace ns is listed and that its
// page shows want web pods of virtual namespace vns next to their host
// copies. It returns what it saw, for the demo's output.
func checkDemoDashboard(ctx context.Context, base, kubeconfig, name, ns, vns string, want int) (string, error) {
	kc, err := flatKubeconfig(kubeconfig)
	if err != nil {
		return "", err
	}
	jar, err := cookiejar.New(nil)
	if err != nil {
		return "", err
	}
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	get := func(method, path string, form url.Values) (string, error) {
		req, err := http.NewRequestWithContext(ctx, method, base+path, strings.NewReader(form.Encode()))
		if err != nil {
			return "", err
		}
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		resp, err := c.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return "", fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, pageError(string(body)))
		}
		return string(body), err
	}
	clusters, err := get(http.MethodPost, "/login", url.Values{"token": {string(kc)}})
	if err != nil {
		return "", fmt.Errorf("the dashboard at %s: sign in with %s: %w", base, kubeconfig, err)
	}
	if !strings.Contains(clusters, `data-cluster="`+ns+"/"+name+`"`) {
		return "", fmt.Errorf("the dashboard at %s does not list virtual cluster %s (host namespace %s)", base, name, ns)
	}
	page, err := get(http.MethodGet, "/virtual/"+url.PathEscape(ns)+"/"+url.PathEscape(name)+"?ns="+url.QueryEscape(vns), nil)
	if err != nil {
		return "", fmt.Errorf("the dashboard at %s: %w", base, err)
	}
	if n := strings.Count(page, `data-object="Pod `+vns+`/web-`); n != want {
		return "", fmt.Errorf("the dashboard's page of virtual cluster %s shows %d web pods of namespace %s next to their host copies, want %d", name, n, vns, want)
	}
	return fmt.Sprintf("the dashboard at %s lists virtual cluster %s; its page shows its %d web pods next to their host copies", base, name, want), nil
}

// flatKubeconfig is kubeconfig file path's current context with its
// certificates inline, as `kubectl config view --raw --minify --flatten`
// prints it.
func flatKubeconfig(path string) ([]byte, error) {
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return nil, err
	}
	if err := clientcmdapi.MinifyConfig(cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := clientcmdapi.FlattenConfig(cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return clientcmd.Write(*cfg)
}

// pageError is the error a dashboard page shows (its role=alert
// paragraph), or the start of the body when it has none.
func pageError(body string) string {
	const open = `role="alert">`
	if i := strings.Index(body, open); i >= 0 {
		rest := body[i+len(open):]
		if j := strings.Index(rest, "<"); j >= 0 {
			return html.UnescapeString(rest[:j])
		}
	}
	return strings.TrimSpace(body[:min(len(body), 200)])
}

// listenDashboard listens on addr for the demo's dashboard: nil for "".
// The error names the flag, so a port in use is reported before anything
// starts.
func listenDashboard(addr string) (net.Listener, error) {
	if addr == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, errors.New("--dashboard-addr " + addr + ": " + err.Error() + ` (pass another address, 127.0.0.1:0 for any free port, or "" to leave the dashboard out)`)
	}
	return ln, nil
}
