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
	"sigs.k8s.io/controller-runtime/pkg/client"

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
// under their virtual names (Rewrite). What it looks up (nodes, pods,
// claims, the byIP Services) it reads from the syncer's caches, so a
// scrape costs two reviews and the kubelet's answer, not a listing of
// the host namespace.
type Tenant struct {
	// Translator is the virtual cluster's.
	Translator translate.Translator
	// Reviews is the virtual API server, for TokenReviews and
	// SubjectAccessReviews.
	Reviews kubernetes.Interface
	// Virtual and Host read the syncer's caches of the virtual cluster and
	// of the host namespace.
	Virtual, Host client.Reader
	// Claims tells whether the host namespace's claims are cached
	// (sync.toHost.persistentVolumeClaims): without, no claim is the
	// tenant's.
	Claims bool
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
	node, err := t.nodeOf(ctx, r.Host)
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
	review, err := t.Reviews.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
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
	sar, err := t.Reviews.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
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
	rw, err := t.rewrite(ctx)
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
			var p corev1.Pod
			if t.Virtual.Get(ctx, k, &p) != nil {
				return ""
			}
			return string(p.UID)
		})
	case Pods:
		w.Header().Set("Content-Type", "application/json")
		out, err = rw.RewritePods(data, func(k types.NamespacedName) (*corev1.Pod, bool) {
			var p corev1.Pod
			return &p, t.Virtual.Get(ctx, k, &p) == nil
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
func (t *Tenant) nodeOf(ctx context.Context, hostHeader string) (string, error) {
	var nodes corev1.NodeList
	var svcs corev1.ServiceList
	if t.ByHostname {
		if err := t.Virtual.List(ctx, &nodes); err != nil {
			return "", err
		}
	}
	if t.ByIP {
		if err := t.Host.List(ctx, &svcs, client.InNamespace(t.Translator.HostNamespace),
			client.MatchingLabels{translate.LabelManagedBy: t.Translator.VCluster}, client.HasLabels{translate.LabelNodeService}); err != nil {
			return "", err
		}
	}
	var byHostname, byIP func(string) string
	if t.ByHostname {
		byHostname = func(dashed string) string {
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
			for _, s := range svcs.Items {
				if s.Spec.ClusterIP == ip {
					return s.Labels[translate.LabelNodeService]
				}
			}
			return ""
		}
	}
	return NodeOf(hostHeader, byHostname, byIP), nil
}

// rewrite is the Rewrite of this moment: the host pods and claims of the
// host namespace that are this virtual cluster's copies.
func (t *Tenant) rewrite(ctx context.Context) (Rewrite, error) {
	in := []client.ListOption{client.InNamespace(t.Translator.HostNamespace), client.MatchingLabels{translate.LabelManagedBy: t.Translator.VCluster}}
	var pods corev1.PodList
	if err := t.Host.List(ctx, &pods, in...); err != nil {
		return Rewrite{}, fmt.Errorf("list the host pods: %w", err)
	}
	pm := make([]metav1.ObjectMeta, 0, len(pods.Items))
	for _, p := range pods.Items {
		pm = append(pm, p.ObjectMeta)
	}
	var cm []metav1.ObjectMeta
	if t.Claims {
		var claims corev1.PersistentVolumeClaimList
		if err := t.Host.List(ctx, &claims, in...); err != nil {
			return Rewrite{}, fmt.Errorf("list the host claims: %w", err)
		}
		for _, c := range claims.Items {
			cm = append(cm, c.ObjectMeta)
		}
	}
	return Rewrite{HostNamespace: t.Translator.HostNamespace, Pods: owners(pm), Claims: owners(cm)}, nil
}

// owners maps host objects to the tenant's objects their bookkeeping
// annotations name.
func owners(objs []metav1.ObjectMeta) Owner {
	m := make(map[string]types.NamespacedName, len(objs))
	for _, o := range objs {
		if name, vns := o.Annotations[translate.AnnotationObjectName], o.Annotations[translate.AnnotationObjectNamespace]; name != "" && vns != "" {
			m[o.Name] = types.NamespacedName{Namespace: vns, Name: name}
		}
	}
	return func(h string) (types.NamespacedName, bool) { v, ok := m[h]; return v, ok }
}
