package kubeletproxy

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/proxy"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/clustersync/clustersync/internal/virtual/controlplane"
	"github.com/clustersync/clustersync/internal/virtual/mtls"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// Proxy serves the kubelet API of one virtual cluster's fake nodes (see the
// package comment). It is an http.Handler; Serve runs it over TLS.
type Proxy struct {
	tr       translate.Translator
	host     *url.URL
	pods     kubernetes.Interface
	rt       http.RoundTripper
	upgrader proxy.UpgradeRequestRoundTripper
	log      logr.Logger
	// tenant, when set, serves the tenant's node exporters (SetTenant).
	tenant *Tenant
}

// New returns the proxy of the virtual cluster tr, calling the host API
// server of host with its credentials. It returns an error when host's TLS
// or credentials cannot be loaded.
func New(tr translate.Translator, host *rest.Config, log logr.Logger) (*Proxy, error) {
	u, err := url.Parse(host.Host)
	if err != nil || u.Host == "" {
		if u, err = url.Parse("https://" + host.Host); err != nil {
			return nil, fmt.Errorf("kubelet proxy: host API server %q: %w", host.Host, err)
		}
	}
	tlsConfig, err := rest.TLSConfigFor(host)
	if err != nil {
		return nil, fmt.Errorf("kubelet proxy: host TLS: %w", err)
	}
	// The dialer must be set: the upgrade path only then asks the host for
	// HTTP/1.1 (its TLS config also offers HTTP/2, for logs).
	base := &http.Transport{TLSClientConfig: tlsConfig, ForceAttemptHTTP2: true, IdleConnTimeout: 90 * time.Second,
		DialContext: (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext}
	rt, err := rest.HTTPWrappersForConfig(host, base)
	if err != nil {
		return nil, fmt.Errorf("kubelet proxy: host credentials: %w", err)
	}
	// An upgrade (exec, attach, port-forward) is dialled by the proxy
	// itself; MirrorRequest lets the credentials wrappers add their headers
	// to the request without sending it.
	mirror, err := rest.HTTPWrappersForConfig(host, proxy.MirrorRequest)
	if err != nil {
		return nil, fmt.Errorf("kubelet proxy: host credentials: %w", err)
	}
	pods, err := kubernetes.NewForConfig(host)
	if err != nil {
		return nil, err
	}
	return &Proxy{tr: tr, host: u, pods: pods, rt: rt, upgrader: proxy.NewUpgradeRequestRoundTripper(base, mirror), log: log}, nil
}

// ServeHTTP implements http.Handler. A request without a client
// certificate goes to the tenant's endpoint when SetTenant turned it on.
// It answers 403 to another client than the virtual API server
// (certificate common name controlplane.KubeletClientCommonName), 404 for a path it does not serve and for a pod
// that is not this virtual cluster's (the same answer for one that does not
// exist), and otherwise the host API's answer.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if cn := mtls.ClientName(r); cn != controlplane.KubeletClientCommonName {
		if p.tenant != nil && cn == "" {
			p.tenant.serve(w, r, p.pods)
			return
		}
		http.Error(w, fmt.Sprintf("client %q is not the virtual API server", cn), http.StatusForbidden)
		return
	}
	route, err := ParseRoute(r.URL.Path, r.URL.Query())
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	hostName := p.tr.HostName(route.Pod, route.Namespace)
	if err := p.checkOwn(r.Context(), route, hostName); err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	loc := *p.host
	loc.Path = route.HostPath(p.tr.HostNamespace, hostName)
	loc.RawQuery = route.Query.Encode()
	out := r.Clone(r.Context())
	out.URL.RawQuery = loc.RawQuery
	for k := range out.Header {
		if k == "Authorization" || strings.HasPrefix(k, "Impersonate-") {
			out.Header.Del(k)
		}
	}
	p.log.V(2).Info("kubelet request", "subresource", route.Subresource, "pod", route.Namespace+"/"+route.Pod, "hostPod", hostName)
	h := proxy.NewUpgradeAwareHandler(&loc, p.rt, false, false, responder{p.log})
	h.UpgradeTransport = p.upgrader
	h.ServeHTTP(w, out)
}

// SetTenant turns on the tenant's endpoint (Tenant); call it before
// serving.
func (p *Proxy) SetTenant(t *Tenant) { p.tenant = t }

// checkOwn returns an error unless host pod hostName is the copy of the
// virtual pod of route made by this virtual cluster.
func (p *Proxy) checkOwn(ctx context.Context, route Route, hostName string) error {
	notFound := fmt.Errorf("pod %s/%s not found", route.Namespace, route.Pod)
	pod, err := p.pods.CoreV1().Pods(p.tr.HostNamespace).Get(ctx, hostName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return notFound
	}
	if err != nil {
		return fmt.Errorf("pod %s/%s: host: %w", route.Namespace, route.Pod, err)
	}
	if pod.Labels[translate.LabelManagedBy] != p.tr.VCluster || pod.Annotations[translate.AnnotationObjectName] != route.Pod ||
		pod.Annotations[translate.AnnotationObjectNamespace] != route.Namespace {
		return notFound
	}
	return nil
}

type responder struct{ log logr.Logger }

func (r responder) Error(w http.ResponseWriter, _ *http.Request, err error) {
	r.log.Error(err, "kubelet proxy: host API")
	http.Error(w, err.Error(), http.StatusBadGateway)
}
