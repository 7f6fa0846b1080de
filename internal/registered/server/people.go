package server

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	x509request "k8s.io/apiserver/pkg/authentication/request/x509"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/registered/kubetoken"
)

// ClusterProxyURL is the proxy URL of cluster on the management server at
// serverURL.
func ClusterProxyURL(serverURL, cluster string) string {
	return strings.TrimSuffix(serverURL, "/") + ProxyPrefix + cluster
}

// NotMemberError refuses a user who has no role in a cluster.
type NotMemberError struct{ User, Cluster string }

func (e *NotMemberError) Error() string {
	return fmt.Sprintf("%s is not a member of cluster %s (spec.members)", e.User, e.Cluster)
}

// IssueKubeconfig issues a kubeconfig token for user u on cluster (read
// with c) and returns the kubeconfig that uses it at the management
// server at serverURL, trusting caPEM. Errors: the Cluster's absence, a
// *NotMemberError, TTL's and the issuer's.
func IssueKubeconfig(ctx context.Context, c client.Reader, is *kubetoken.Issuer, serverURL string, caPEM []byte, u kubetoken.User, cluster string, ttl time.Duration) (kc []byte, expires time.Time, err error) {
	var cl mgmtv1.Cluster
	if err := c.Get(ctx, types.NamespacedName{Name: cluster}, &cl); err != nil {
		return nil, time.Time{}, fmt.Errorf("cluster %s: %w", cluster, err)
	}
	if MemberRole(&cl, u.Name, u.Groups) == "" {
		return nil, time.Time{}, &NotMemberError{User: u.Name, Cluster: cluster}
	}
	owner := metav1.OwnerReference{APIVersion: mgmtv1.GroupVersion.String(), Kind: "Cluster", Name: cl.Name, UID: cl.UID}
	token, expires, err := is.Issue(ctx, u, cluster, owner, ttl)
	if err != nil {
		return nil, time.Time{}, err
	}
	kc, err = kubetoken.Kubeconfig(ClusterProxyURL(serverURL, cluster), caPEM, cluster, token)
	return kc, expires, err
}

// ClientCA keeps the CAs of the client certificates the management
// cluster's API server accepts: key client-ca-file of ConfigMap
// kube-system/extension-apiserver-authentication, which kube-apiserver
// publishes for the servers it delegates authentication to
// (https://kubernetes.io/docs/tasks/extend-kubernetes/configure-aggregation-layer/),
// watched by k8s.io/apiserver's ConfigMapCAController (an informer of that
// one ConfigMap), so that checking a client certificate costs no API call.
type ClientCA struct {
	c *dynamiccertificates.ConfigMapCAController
}

// NewClientCA returns the ClientCA of the cluster kube reaches; it knows
// nothing until Run. Errors are the controller's.
func NewClientCA(kube kubernetes.Interface) (*ClientCA, error) {
	c, err := dynamiccertificates.NewDynamicCAFromConfigMapController("management-client-ca", metav1.NamespaceSystem,
		"extension-apiserver-authentication", "client-ca-file", kube)
	if err != nil {
		return nil, err
	}
	return &ClientCA{c: c}, nil
}

// Run reads the ConfigMap once, then follows it until ctx ends.
func (ca *ClientCA) Run(ctx context.Context) {
	_ = ca.c.RunOnce(ctx)
	ca.c.Run(ctx, 1)
}

// Pool returns the CAs as last read (Server.ClientCA). Errors: none read
// yet (the ConfigMap is missing, or has no certificate).
func (ca *ClientCA) Pool(context.Context) (*x509.CertPool, error) {
	opts, ok := ca.c.VerifyOptions()
	if !ok || opts.Roots == nil {
		return nil, errors.New("no client CA: ConfigMap kube-system/extension-apiserver-authentication has no certificate in client-ca-file")
	}
	return opts.Roots, nil
}

// caller is who sent a request, and with what.
type caller struct {
	user kubetoken.User
	// tokenCluster is the cluster of a kubeconfig token, "" for a
	// credential of the management cluster.
	tokenCluster string
}

// authenticate says who sent r: a kubeconfig token (kubetoken.Issuer), a
// bearer token of the management cluster (TokenReview), or a client
// certificate signed by the management cluster's client CA
// (Server.ClientCA). The error is the 401's message.
func (s *Server) authenticate(r *http.Request) (caller, int, error) {
	if token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && token != "" {
		if strings.HasPrefix(token, kubetoken.TokenPrefix) && s.Issuer != nil {
			u, cluster, err := s.Issuer.Lookup(r.Context(), token)
			var expired *kubetoken.ExpiredError
			switch {
			case errors.Is(err, kubetoken.ErrUnknownToken) || errors.As(err, &expired):
				return caller{}, http.StatusUnauthorized, err
			case err != nil:
				return caller{}, http.StatusServiceUnavailable, fmt.Errorf("reading the kubeconfig token failed: %w", err)
			}
			return caller{user: u, tokenCluster: cluster}, 0, nil
		}
		review, err := s.Kube.AuthenticationV1().TokenReviews().Create(r.Context(),
			&authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
		if err != nil {
			return caller{}, http.StatusServiceUnavailable, fmt.Errorf("authenticating the caller failed: %w", err)
		}
		if !review.Status.Authenticated {
			return caller{}, http.StatusUnauthorized, fmt.Errorf("the management cluster does not accept this token: %s", orDefault(review.Status.Error, "not authenticated"))
		}
		u := review.Status.User
		return caller{user: kubetoken.User{Name: u.Username, UID: u.UID, Groups: u.Groups}}, 0, nil
	}
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 && s.ClientCA != nil {
		pool, err := s.ClientCA(r.Context())
		if err != nil {
			return caller{}, http.StatusServiceUnavailable, fmt.Errorf("reading the management cluster's client CA failed: %w", err)
		}
		// Verified as kube-apiserver verifies client certificates, by its
		// own code: the chain to the CA, client-auth usage, the common
		// name as the user, organizations as groups.
		opts := x509request.DefaultVerifyOptions()
		opts.Roots = pool
		resp, ok, err := x509request.New(opts, x509request.CommonNameUserConversion).AuthenticateRequest(r)
		if err != nil || !ok {
			return caller{}, http.StatusUnauthorized, fmt.Errorf("the client certificate is not one of the management cluster's: %v", err)
		}
		u := resp.User
		return caller{user: kubetoken.User{Name: u.GetName(), UID: u.GetUID(), Groups: append(u.GetGroups(), "system:authenticated")}}, 0, nil
	}
	return caller{}, http.StatusUnauthorized, errors.New("send a bearer token of the management cluster, a kubeconfig token, or a client certificate of the management cluster")
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// serveKubeconfig answers POST kubetoken.PathPattern: a kubeconfig for the
// cluster through this server's proxy, with a token that carries the
// caller's identity. 400 for a bad ttl, 401 without a credential of the
// management cluster (a kubeconfig token does not make another), 403 for
// a caller who is not a member, 404 for no such cluster.
func (s *Server) serveKubeconfig(w http.ResponseWriter, r *http.Request) {
	cluster := r.PathValue("cluster")
	ttl, err := kubetoken.ParseTTL(r.URL.Query().Get("ttl"))
	if err != nil {
		writeStatus(w, http.StatusBadRequest, err.Error())
		return
	}
	who, code, err := s.authenticate(r)
	if err != nil {
		writeStatus(w, code, err.Error())
		return
	}
	if who.tokenCluster != "" {
		writeStatus(w, http.StatusUnauthorized, "a kubeconfig token does not get another kubeconfig: use your credential of the management cluster")
		return
	}
	kc, expires, err := IssueKubeconfig(r.Context(), s.Client, s.Issuer, s.URL, s.CAPEM, who.user, cluster, ttl)
	var nm *NotMemberError
	switch {
	case errors.As(err, &nm):
		writeStatus(w, http.StatusForbidden, err.Error())
		return
	case err != nil:
		writeStatus(w, statusCode(err), err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/yaml")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set(kubetoken.ExpiresHeader, expires.Format(time.RFC3339))
	_, _ = w.Write(kc)
}

// statusCode is the HTTP status of an API server's error, 500 for others.
func statusCode(err error) int {
	var st interface{ Status() metav1.Status }
	if errors.As(err, &st) && st.Status().Code != 0 {
		return int(st.Status().Code)
	}
	return http.StatusInternalServerError
}

// writeStatus answers with code and message so that kubectl shows the
// message: a 401 or a 503 as a Kubernetes Status object (for those codes
// client-go reads the Status and otherwise prints a fixed sentence), other
// codes as plain text (client-go shows a text answer's body on every path,
// where it shows "unknown" for a Status object in answer to discovery).
func writeStatus(w http.ResponseWriter, code int, message string) {
	w.Header().Set("Cache-Control", "no-store")
	reason := map[int]metav1.StatusReason{http.StatusUnauthorized: metav1.StatusReasonUnauthorized, http.StatusServiceUnavailable: metav1.StatusReasonServiceUnavailable}[code]
	if reason == "" {
		http.Error(w, message, code)
		return
	}
	st := metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
		Code: int32(code), Reason: reason, Message: message}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(st)
}

// notConnected is the 503's message for cluster c without a tunnel: its
// Connected condition's reason and message when it has one.
func notConnected(c *mgmtv1.Cluster) string {
	msg := "cluster " + c.Name + " has no connected agent"
	if cond := meta.FindStatusCondition(c.Status.Conditions, mgmtv1.ConditionConnected); cond != nil {
		msg += fmt.Sprintf(" (Connected=%s, %s: %s)", cond.Status, cond.Reason, cond.Message)
	}
	return msg
}
