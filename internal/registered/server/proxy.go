package server

import (
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
)

// MemberRole returns the role of user (with groups) in cluster c (its
// Members), the highest of the entries that match, "" when it has none. A
// ServiceAccount member "ns:name" matches the user
// "system:serviceaccount:ns:name".
func MemberRole(c *mgmtv1.Cluster, user string, groups []string) string {
	rank := map[string]int{mgmtv1.RoleReadOnly: 1, mgmtv1.RoleClusterMember: 2, mgmtv1.RoleClusterOwner: 3}
	best := ""
	for _, m := range c.Members() {
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
// server through the cluster's tunnel: the caller is authenticated
// (authenticate: a kubeconfig token of this cluster, a bearer token or a
// client certificate of the management cluster), must be a member of the
// cluster, and the request is sent as the agent's service account
// impersonating the caller (their user name and groups), so the
// downstream RBAC the controller keeps for members decides. Refusals say
// why (writeStatus): 401 (no credential, an unknown, revoked or expired
// token), 403 naming the cluster (a non-member, a kubeconfig token of
// another cluster), 503 with the Connected condition (no connected
// agent).
func (s *Server) serveProxy(w http.ResponseWriter, r *http.Request) {
	cluster := r.PathValue("cluster")
	who, code, err := s.authenticate(r)
	if err != nil {
		writeStatus(w, code, err.Error())
		return
	}
	if who.tokenCluster != "" && who.tokenCluster != cluster {
		writeStatus(w, http.StatusForbidden, fmt.Sprintf("this kubeconfig token is for cluster %s, not %s", who.tokenCluster, cluster))
		return
	}
	user := who.user
	var c mgmtv1.Cluster
	if err := s.Client.Get(r.Context(), types.NamespacedName{Name: cluster}, &c); err != nil || MemberRole(&c, user.Name, user.Groups) == "" {
		writeStatus(w, http.StatusForbidden, (&NotMemberError{User: user.Name, Cluster: cluster}).Error())
		return
	}
	rt, reg, ok := s.Tunnel.Transport(cluster)
	if !ok {
		writeStatus(w, http.StatusServiceUnavailable, notConnected(&c))
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
			pr.Out.Header.Set("Impersonate-User", user.Name)
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
