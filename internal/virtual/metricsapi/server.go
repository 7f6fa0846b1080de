package metricsapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/go-logr/logr"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/controlplane"
	"github.com/clustersync/clustersync/internal/virtual/mtls"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// The front-proxy headers the virtual API server forwards the caller in
// (its --requestheader-* flags, controlplane's apiServerArgs).
const (
	headerUser        = "X-Remote-User"
	headerGroup       = "X-Remote-Group"
	headerExtraPrefix = "X-Remote-Extra-"
)

// API is the metrics API of one virtual cluster (see the package comment),
// an http.Handler; mtls.Serve runs it.
type API struct {
	serve   config.MetricsServer
	tr      translate.Translator
	virtual client.Reader
	access  kubernetes.Interface
	host    metricsclient.Interface
	log     logr.Logger
}

// New returns the metrics API of virtual cluster tr: it reads virtual pods
// and nodes with virtual, checks callers' rights with access reviews at
// the virtual API server of virtualConfig, and reads the host's metrics
// API with hostConfig; serve (integrations.metricsServer) says which
// resources it serves. It returns an error when a client cannot be made.
func New(serve config.MetricsServer, tr translate.Translator, virtual client.Reader, virtualConfig, hostConfig *rest.Config, log logr.Logger) (*API, error) {
	access, err := kubernetes.NewForConfig(virtualConfig)
	if err != nil {
		return nil, fmt.Errorf("metrics API: %w", err)
	}
	host, err := metricsclient.NewForConfig(hostConfig)
	if err != nil {
		return nil, fmt.Errorf("metrics API: %w", err)
	}
	return &API{serve: serve, tr: tr, virtual: virtual, access: access, host: host, log: log}, nil
}

// off is the key of integrations.metricsServer that switches resource
// ("pods" or "nodes") off, "" when it is served.
func (a *API) off(resource string) string {
	switch {
	case !a.serve.Enabled:
		return "integrations.metricsServer.enabled"
	case resource == "pods" && !a.serve.Pods:
		return "integrations.metricsServer.pods"
	case resource == "nodes" && !a.serve.Nodes:
		return "integrations.metricsServer.nodes"
	}
	return ""
}

// ServeHTTP implements http.Handler. It answers 403 to a client other than
// the virtual API server's front proxy (certificate common name
// controlplane.FrontProxyClientCommonName), for a resource the
// configuration switches off (naming the key), and to a caller the virtual
// cluster's RBAC does not let get or list the resource, 404 for a path or
// object it does not serve, 405 for anything but GET (no watch), and
// otherwise the metrics, as the metrics.k8s.io API's JSON.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if cn := mtls.ClientName(r); cn != controlplane.FrontProxyClientCommonName {
		writeStatus(w, apierrors.NewForbidden(schema.GroupResource{Group: Group}, "", fmt.Errorf("client %q is not the virtual API server's front proxy", cn)))
		return
	}
	route, err := ParseRoute(r.URL.Path)
	if err != nil {
		writeStatus(w, apierrors.NewNotFound(schema.GroupResource{Group: Group}, r.URL.Path))
		return
	}
	if r.Method != http.MethodGet || r.URL.Query().Get("watch") == "true" || r.URL.Query().Get("watch") == "1" {
		writeStatus(w, apierrors.NewMethodNotSupported(schema.GroupResource{Group: Group, Resource: route.Resource}, methodVerb(r)))
		return
	}
	if route.Discovery {
		writeJSON(w, discovery(route.GroupOnly))
		return
	}
	if off := a.off(route.Resource); off != "" {
		writeStatus(w, apierrors.NewForbidden(schema.GroupResource{Group: Group, Resource: route.Resource}, route.Name,
			fmt.Errorf("the metrics API of this virtual cluster is off: %s is false in its configuration", off)))
		return
	}
	if err := a.authorize(r.Context(), r.Header, route); err != nil {
		writeStatus(w, err)
		return
	}
	selector, err := labels.Parse(r.URL.Query().Get("labelSelector"))
	if err != nil {
		writeStatus(w, apierrors.NewBadRequest(fmt.Sprintf("labelSelector: %v", err)))
		return
	}
	var out any
	switch route.Resource {
	case "pods":
		out, err = a.pods(r.Context(), route, selector)
	default:
		out, err = a.nodes(r.Context(), route, selector)
	}
	if err != nil {
		a.log.V(1).Info("metrics request failed", "path", r.URL.Path, "error", err.Error())
		writeStatus(w, err)
		return
	}
	writeJSON(w, out)
}

// authorize asks the virtual API server whether the caller the front proxy
// names in header may get (one object) or list route's resource.
func (a *API) authorize(ctx context.Context, header http.Header, route Route) error {
	user := header.Get(headerUser)
	if user == "" {
		return apierrors.NewUnauthorized("no user in " + headerUser)
	}
	extra := map[string]authorizationv1.ExtraValue{}
	for k, v := range header {
		if key, ok := strings.CutPrefix(k, headerExtraPrefix); ok {
			if unescaped, err := url.PathUnescape(key); err == nil {
				key = unescaped
			}
			extra[strings.ToLower(key)] = v
		}
	}
	verb := "list"
	if route.Name != "" {
		verb = "get"
	}
	review, err := a.access.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user, Groups: header.Values(headerGroup), Extra: extra,
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: verb, Group: Group, Version: Version,
			Resource: route.Resource, Namespace: route.Namespace, Name: route.Name},
	}}, metav1.CreateOptions{})
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("access review: %w", err))
	}
	if !review.Status.Allowed {
		where := ""
		if route.Namespace != "" {
			where = fmt.Sprintf(" in the namespace %q", route.Namespace)
		}
		return apierrors.NewForbidden(schema.GroupResource{Group: Group, Resource: route.Resource}, route.Name,
			fmt.Errorf("User %q cannot %s resource %q in API group %q%s", user, verb, route.Resource, Group, where))
	}
	return nil
}

// pods returns the PodMetrics (one) or PodMetricsList of route.
func (a *API) pods(ctx context.Context, route Route, selector labels.Selector) (any, error) {
	gr := schema.GroupResource{Group: Group, Resource: "pods"}
	var pods []corev1.Pod
	if route.Name != "" {
		var p corev1.Pod
		if err := a.virtual.Get(ctx, client.ObjectKey{Namespace: route.Namespace, Name: route.Name}, &p); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, apierrors.NewNotFound(gr, route.Name)
			}
			return nil, err
		}
		pods = []corev1.Pod{p}
	} else {
		var list corev1.PodList
		if err := a.virtual.List(ctx, &list, client.InNamespace(route.Namespace), client.MatchingLabelsSelector{Selector: selector}); err != nil {
			return nil, err
		}
		pods = list.Items
	}
	metrics, err := a.podMetrics(ctx, pods)
	if err != nil {
		return nil, err
	}
	if route.Name != "" {
		if len(metrics) == 0 {
			return nil, apierrors.NewNotFound(gr, route.Name)
		}
		return metrics[0], nil
	}
	return &metricsv1beta1.PodMetricsList{TypeMeta: metav1.TypeMeta{APIVersion: Group + "/" + Version, Kind: "PodMetricsList"}, Items: metrics}, nil
}

// podMetrics reads the host metrics of the virtual pods' host copies (all
// of the host namespace: one request) and returns them as PodMetrics does.
func (a *API) podMetrics(ctx context.Context, pods []corev1.Pod) ([]metricsv1beta1.PodMetrics, error) {
	if len(pods) == 0 {
		return []metricsv1beta1.PodMetrics{}, nil
	}
	list, err := a.host.MetricsV1beta1().PodMetricses(a.tr.HostNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, hostError(err)
	}
	host := make(map[string]metricsv1beta1.PodMetrics, len(list.Items))
	for _, m := range list.Items {
		host[m.Name] = m
	}
	return PodMetrics(pods, host, a.tr.HostName), nil
}

// nodes returns the NodeMetrics (one) or NodeMetricsList of route.
func (a *API) nodes(ctx context.Context, route Route, selector labels.Selector) (any, error) {
	gr := schema.GroupResource{Group: Group, Resource: "nodes"}
	var nodes []corev1.Node
	if route.Name != "" {
		var n corev1.Node
		if err := a.virtual.Get(ctx, client.ObjectKey{Name: route.Name}, &n); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, apierrors.NewNotFound(gr, route.Name)
			}
			return nil, err
		}
		nodes = []corev1.Node{n}
	} else {
		var list corev1.NodeList
		if err := a.virtual.List(ctx, &list, client.MatchingLabelsSelector{Selector: selector}); err != nil {
			return nil, err
		}
		nodes = list.Items
	}
	host := map[string]metricsv1beta1.NodeMetrics{}
	for _, n := range nodes {
		m, err := a.host.MetricsV1beta1().NodeMetricses().Get(ctx, n.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, hostError(err)
		}
		host[n.Name] = *m
	}
	// What the tenant's own pods use, for its fake nodes (only then).
	var usage map[string]corev1.ResourceList
	if slices.ContainsFunc(nodes, func(n corev1.Node) bool { return n.Labels[translate.LabelFakeNode] == "true" }) {
		var pods corev1.PodList
		if err := a.virtual.List(ctx, &pods); err != nil {
			return nil, err
		}
		podMetrics, err := a.podMetrics(ctx, pods.Items)
		if err != nil {
			return nil, err
		}
		usage = UsageByNode(pods.Items, podMetrics)
	}
	metrics := NodeMetrics(nodes, host, usage)
	if route.Name != "" {
		if len(metrics) == 0 {
			return nil, apierrors.NewNotFound(gr, route.Name)
		}
		return metrics[0], nil
	}
	return &metricsv1beta1.NodeMetricsList{TypeMeta: metav1.TypeMeta{APIVersion: Group + "/" + Version, Kind: "NodeMetricsList"}, Items: metrics}, nil
}

// hostError is the answer when the host's metrics API fails: 503 with the
// reason, never a host name (the host's answer names host objects).
func hostError(err error) error {
	if apierrors.IsNotFound(err) || apierrors.IsServiceUnavailable(err) || errors.Is(err, context.DeadlineExceeded) {
		return apierrors.NewServiceUnavailable("the host cluster's metrics API is not available (is metrics-server installed on the host?)")
	}
	return apierrors.NewServiceUnavailable(fmt.Sprintf("the host cluster's metrics API failed (%s)", apierrors.ReasonForError(err)))
}

// discovery is the group (groupOnly) or the resource list the metrics API
// serves.
func discovery(groupOnly bool) any {
	gv := metav1.GroupVersionForDiscovery{GroupVersion: Group + "/" + Version, Version: Version}
	if groupOnly {
		return &metav1.APIGroup{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "APIGroup"}, Name: Group,
			Versions: []metav1.GroupVersionForDiscovery{gv}, PreferredVersion: gv}
	}
	return &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "APIResourceList"}, GroupVersion: gv.GroupVersion,
		APIResources: []metav1.APIResource{
			{Name: "nodes", Kind: "NodeMetrics", Verbs: metav1.Verbs{"get", "list"}},
			{Name: "pods", Namespaced: true, Kind: "PodMetrics", Verbs: metav1.Verbs{"get", "list"}},
		}}
}

// methodVerb names the request's method as an API verb, for 405 answers.
func methodVerb(r *http.Request) string {
	if r.Method == http.MethodGet {
		return "watch"
	}
	return strings.ToLower(r.Method)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// writeStatus answers err as a Kubernetes Status (its code, reason and
// message).
func writeStatus(w http.ResponseWriter, err error) {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		status = apierrors.NewInternalError(err)
	}
	s := status.Status()
	s.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(s.Code))
	_ = json.NewEncoder(w).Encode(s)
}
