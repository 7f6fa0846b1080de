package server

import (
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
)

// MemberRole returns the role of user (with groups) in cluster c, "" when
// it has none. A ServiceAccount member "ns:name" matches the user
// "system:serviceaccount:ns:name".
func MemberRole(c *mgmtv1.Cluster, user string, groups []string) string {
	if c.Spec.ImportedConfig == nil {
		return ""
	}
	rank := map[string]int{mgmtv1.RoleReadOnly: 1, mgmtv1.RoleClusterMember: 2, mgmtv1.RoleClusterOwner: 3}
	best := ""
	for _, m := range c.Spec.ImportedConfig.Members {
		match := false
		switch m.Kind {
		case "User":
			match = m.Name == user
		case "Group":
			match = slices.Contains(groups, m.Name)
		case "ServiceAccount":
			match = "system:serviceaccount:"+m.Name == user
		}
		if match && rank[m.Role] > rank[best] {
			best = m.Role
		}
	}
	return best
}

// MemberUsername is the user name a member is bound as downstream, the
// name the proxy impersonates: the user itself, or
// system:serviceaccount:<ns>:<name> for a ServiceAccount member.
func MemberUsername(m mgmtv1.ClusterMember) string {
	if m.Kind == "ServiceAccount" {
		return "system:serviceaccount:" + m.Name
	}
	return m.Name
}

// serveProxy proxies /k8s/clusters/<cluster>/<path> to the downstream API
// server through the cluster's tunnel: the caller's bearer token is
// authenticated by the management cluster (TokenReview), the caller must
// be a member of the cluster, and the request is sent as the agent's
// service account impersonating the caller (their user name and groups),
// so the downstream RBAC the controller keeps for members decides.
// Answers: 401 without a valid token, 403 for non-members, 503 when the
// cluster is not connected.
func (s *Server) serveProxy(w http.ResponseWriter, r *http.Request) {
	cluster := r.PathValue("cluster")
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || token == "" {
		http.Error(w, "Unauthorized: send a bearer token of the management cluster", http.StatusUnauthorized)
		return
	}
	review, err := s.Kube.AuthenticationV1().TokenReviews().Create(r.Context(),
		&authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	if err != nil {
		http.Error(w, "authenticating the caller failed: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	if !review.Status.Authenticated {
		http.Error(w, "Unauthorized: the management cluster does not accept this token", http.StatusUnauthorized)
		return
	}
	user := review.Status.User
	var c mgmtv1.Cluster
	if err := s.Client.Get(r.Context(), types.NamespacedName{Name: cluster}, &c); err != nil || MemberRole(&c, user.Username, user.Groups) == "" {
		http.Error(w, "Forbidden: "+user.Username+" is "+errNotMember.Error()+" "+cluster, http.StatusForbidden)
		return
	}
	rt, reg, ok := s.Tunnel.Transport(cluster)
	if !ok {
		http.Error(w, "cluster "+cluster+" is not connected", http.StatusServiceUnavailable)
		return
	}
	target, err := url.Parse(reg.APIEndpoint)
	if err != nil {
		http.Error(w, "cluster "+cluster+": bad API endpoint "+reg.APIEndpoint, http.StatusBadGateway)
		return
	}
	rest := trimProxy(r.URL.Path, cluster)
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.URL.Path, pr.Out.URL.RawPath = rest, ""
			pr.Out.Host = target.Host
			for k := range pr.Out.Header {
				if strings.HasPrefix(k, "Impersonate-") {
					pr.Out.Header.Del(k)
				}
			}
			pr.Out.Header.Set("Authorization", "Bearer "+reg.Token)
			pr.Out.Header.Set("Impersonate-User", user.Username)
			for _, g := range user.Groups {
				if g != "system:authenticated" {
					pr.Out.Header.Add("Impersonate-Group", g)
				}
			}
			if user.UID != "" {
				pr.Out.Header.Set("Impersonate-Uid", user.UID)
			}
		},
		Transport:     rt,
		FlushInterval: -1, // watches stream
	}
	rp.ServeHTTP(w, r)
}
