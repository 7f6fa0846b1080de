package kubeletproxy

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// Tenant is the tenant's side of the kubelet proxy
// (networking.advanced.proxyKubelets): a node exporter or Prometheus in the
// virtual cluster reads a fake node's kubelet at the node's host name
// (translate.NodeHostname, byHostname) or InternalIP (a host Service, byIP), with its
// service account's token, as it reads a real kubelet. The proxy
// authenticates the token and authorizes the request against the virtual
// API server (TokenReview, then SubjectAccessReview of get on
// nodes/<KubeletSubresource>, as a kubelet with webhook authorization
// does), serves only the paths of TenantPathOf, reads them from the host
// node's kubelet through the host API server (nodes/proxy, with the
// syncer's credentials) and shows only the tenant's own pods and claims,
// under their virtual names (Rewrite).
type Tenant struct {
	// Translator is the virtual cluster's.
	Translator translate.Translator
	// Virtual is the virtual API server.
	Virtual kubernetes.Interface
	// ByHostname and ByIP are the two proxyKubelets keys.
	ByHostname, ByIP bool
}

// serve answers one tenant request; host is the host API.
func (t *Tenant) serve(w http.ResponseWriter, r *http.Request, host kubernetes.Interface) {
	ctx := r.Context()
	kind := TenantPathOf(r.URL.Path)
	if kind == NotServed {
		http.Error(w, fmt.Sprintf("%s is not served to the virtual cluster's clients (only /healthz, /metrics…, /stats/summary, /pods)", r.URL.Path), http.StatusForbidden)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "only GET is served", http.StatusMethodNotAllowed)
		return
	}
	node, err := t.nodeOf(ctx, r.Host, host)
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	if node == "" {
		http.Error(w, fmt.Sprintf("no node of this virtual cluster is at %s", r.Host), http.StatusNotFound)
		return
	}
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || token == "" {
		http.Error(w, "Unauthorized: a bearer token of the virtual cluster is required", http.StatusUnauthorized)
		return
	}
	review, err := t.Virtual.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	if err != nil {
		http.Error(w, "authenticate: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	if !review.Status.Authenticated {
		http.Error(w, "Unauthorized: "+review.Status.Error, http.StatusUnauthorized)
		return
	}
	u := review.Status.User
	sub := KubeletSubresource(r.URL.Path)
	extra := map[string]authorizationv1.ExtraValue{}
	for k, v := range u.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	sar, err := t.Virtual.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: u.Username, Groups: u.Groups, UID: u.UID, Extra: extra,
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "get", Resource: "nodes", Subresource: sub, Name: node},
	}}, metav1.CreateOptions{})
	if err != nil {
		http.Error(w, "authorize: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	if !sar.Status.Allowed {
		http.Error(w, fmt.Sprintf("Forbidden (user=%s, verb=get, resource=nodes, subresource=%s, name=%s)", u.Username, sub, node), http.StatusForbidden)
		return
	}
	res := host.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", node, "proxy", r.URL.Path)
	for k, vs := range r.URL.Query() {
		for _, v := range vs {
			res = res.Param(k, v)
		}
	}
	data, err := res.DoRaw(ctx)
	if err != nil {
		http.Error(w, fmt.Sprintf("node %s: %v", node, err), http.StatusBadGateway)
		return
	}
	if kind == Healthz {
		_, _ = w.Write(data)
		return
	}
	rw, err := t.rewrite(ctx, host)
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	var out []byte
	switch kind {
	case Metrics:
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		out, err = rw.RewriteMetrics(data)
	case Stats:
		w.Header().Set("Content-Type", "application/json")
		out, err = rw.RewriteSummary(data, func(k types.NamespacedName) string {
			p, err := t.Virtual.CoreV1().Pods(k.Namespace).Get(ctx, k.Name, metav1.GetOptions{})
			if err != nil {
				return ""
			}
			return string(p.UID)
		})
	case Pods:
		w.Header().Set("Content-Type", "application/json")
		out, err = rw.RewritePods(data, func(k types.NamespacedName) (*corev1.Pod, bool) {
			p, err := t.Virtual.CoreV1().Pods(k.Namespace).Get(ctx, k.Name, metav1.GetOptions{})
			return p, err == nil
		})
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	_, _ = w.Write(out)
}

// nodeOf is the virtual node a request's Host names (NodeOf): by host name
// among the virtual cluster's nodes, by IP among its byIP host Services.
func (t *Tenant) nodeOf(ctx context.Context, hostHeader string, host kubernetes.Interface) (string, error) {
	var err error
	var byHostname, byIP func(string) string
	if t.ByHostname {
		byHostname = func(dashed string) string {
			nodes, lerr := t.Virtual.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
			if lerr != nil {
				err = lerr
				return ""
			}
			for _, n := range nodes.Items {
				if translate.NodeHostname(n.Name) == dashed+"."+translate.NodeSuffix {
					return n.Name
				}
			}
			return ""
		}
	}
	if t.ByIP {
		byIP = func(ip string) string {
			svcs, lerr := host.CoreV1().Services(t.Translator.HostNamespace).List(ctx, metav1.ListOptions{LabelSelector: translate.LabelNodeService})
			if lerr != nil {
				err = lerr
				return ""
			}
			for _, s := range svcs.Items {
				if s.Spec.ClusterIP == ip && s.Labels[translate.LabelManagedBy] == t.Translator.VCluster {
					return s.Labels[translate.LabelNodeService]
				}
			}
			return ""
		}
	}
	node := NodeOf(hostHeader, byHostname, byIP)
	return node, err
}

// rewrite is the Rewrite of this moment: the host pods and claims of the
// host namespace that are this virtual cluster's copies.
func (t *Tenant) rewrite(ctx context.Context, host kubernetes.Interface) (Rewrite, error) {
	ns := t.Translator.HostNamespace
	sel := metav1.ListOptions{LabelSelector: translate.LabelManagedBy + "=" + t.Translator.VCluster}
	pods, err := host.CoreV1().Pods(ns).List(ctx, sel)
	if err != nil {
		return Rewrite{}, fmt.Errorf("list the host pods: %w", err)
	}
	claims, err := host.CoreV1().PersistentVolumeClaims(ns).List(ctx, sel)
	if err != nil {
		return Rewrite{}, fmt.Errorf("list the host claims: %w", err)
	}
	owners := func(objs []metav1.ObjectMeta) Owner {
		m := make(map[string]types.NamespacedName, len(objs))
		for _, o := range objs {
			if name, vns := o.Annotations[translate.AnnotationObjectName], o.Annotations[translate.AnnotationObjectNamespace]; name != "" && vns != "" {
				m[o.Name] = types.NamespacedName{Namespace: vns, Name: name}
			}
		}
		return func(h string) (types.NamespacedName, bool) { v, ok := m[h]; return v, ok }
	}
	var pm, cm []metav1.ObjectMeta
	for _, p := range pods.Items {
		pm = append(pm, p.ObjectMeta)
	}
	for _, c := range claims.Items {
		cm = append(cm, c.ObjectMeta)
	}
	return Rewrite{HostNamespace: ns, Pods: owners(pm), Claims: owners(cm)}, nil
}
