package dashboard

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
)

// CookieName is the session cookie: HttpOnly, SameSite=Strict, Secure
// when the dashboard is served over TLS.
const CookieName = "clustersync_session"

// CSRFField is the form field (and CSRFHeader the header, which htmx
// requests send) that carries a session's CSRF token on every write.
const (
	CSRFField  = "csrf"
	CSRFHeader = "X-CSRF-Token"
)

// session is one signed-in user: the bearer token every read and write is
// made with (the API server's RBAC decides), and the client made from it.
type session struct {
	user    string
	csrf    string
	expires time.Time
	client  client.WithWatch
	kube    kubernetes.Interface
}

// sessions are the signed-in users by session ID, kept in memory: a
// restart signs everyone out.
type sessions struct {
	mu   sync.Mutex
	byID map[string]*session
}

// randomToken is 32 random bytes, URL-safe base64.
func randomToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// signIn checks token with a TokenReview (made with the manager's own
// identity, s.review) and, when the API server authenticates it, starts a
// session whose client sends that token. The error says why a token is
// refused.
func (s *Server) signIn(ctx context.Context, token string) (id string, sess *session, err error) {
	if token == "" {
		return "", nil, errors.New("paste a bearer token")
	}
	tr, err := s.review.AuthenticationV1().TokenReviews().Create(ctx, &authnv1.TokenReview{Spec: authnv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	if err != nil {
		return "", nil, fmt.Errorf("the API server could not review the token: %w", err)
	}
	if !tr.Status.Authenticated {
		msg := tr.Status.Error
		if msg == "" {
			msg = "not authenticated"
		}
		return "", nil, fmt.Errorf("token refused by the API server: %s", msg)
	}
	cfg := rest.AnonymousClientConfig(s.opts.Config)
	cfg.BearerToken = token
	cfg.QPS, cfg.Burst = 50, 100
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: s.scheme, Mapper: s.mapper})
	if err != nil {
		return "", nil, err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", nil, err
	}
	sess = &session{user: tr.Status.User.Username, csrf: randomToken(), expires: s.now().Add(s.ttl()), client: c, kube: kube}
	id = randomToken()
	s.sessions.mu.Lock()
	s.sessions.byID[id] = sess
	s.sessions.mu.Unlock()
	return id, sess, nil
}

// current returns the session of r's cookie, nil when there is none or it
// expired (then it is forgotten).
func (s *Server) current(r *http.Request) *session {
	ck, err := r.Cookie(CookieName)
	if err != nil {
		return nil
	}
	s.sessions.mu.Lock()
	defer s.sessions.mu.Unlock()
	sess := s.sessions.byID[ck.Value]
	if sess != nil && !s.now().Before(sess.expires) {
		delete(s.sessions.byID, ck.Value)
		return nil
	}
	return sess
}

// signOut forgets r's session.
func (s *Server) signOut(r *http.Request) {
	if ck, err := r.Cookie(CookieName); err == nil {
		s.sessions.mu.Lock()
		delete(s.sessions.byID, ck.Value)
		s.sessions.mu.Unlock()
	}
}

// setCookie writes the session cookie (an empty id clears it).
func (s *Server) setCookie(w http.ResponseWriter, id string) {
	ck := &http.Cookie{Name: CookieName, Value: id, Path: "/", HttpOnly: true, Secure: s.opts.Secure, SameSite: http.SameSiteStrictMode}
	if id == "" {
		ck.MaxAge = -1
	} else {
		ck.Expires = s.now().Add(s.ttl())
	}
	http.SetCookie(w, ck)
}

// validCSRF reports whether a write carries its session's CSRF token, in
// the form or in the header.
func validCSRF(r *http.Request, sess *session) bool {
	got := r.Header.Get(CSRFHeader)
	if got == "" {
		got = r.PostFormValue(CSRFField)
	}
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(sess.csrf)) == 1
}

// may reports whether the user may do verb on Cluster name, asked with the
// user's own token (SelfSubjectAccessReview).
func (sess *session) may(ctx context.Context, verb, name string) (bool, error) {
	r, err := sess.kube.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authzv1.SelfSubjectAccessReview{Spec: authzv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authzv1.ResourceAttributes{Verb: verb, Group: mgmtv1.GroupVersion.Group, Resource: "clusters", Name: name}}}, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	return r.Status.Allowed, nil
}
