package dashboard

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"log"
	"net/http"
	"strings"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
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

// session is one signed-in user: the clients every read and write is made
// with, which send the user's own credential (the API server's RBAC
// decides). Its context ends when the session does: signed out on any
// replica, expired, or its Secret deleted.
type session struct {
	name    string // its Secret's name (sessionSecretName)
	user    string
	uid     string
	groups  []string
	csrf    string
	expires time.Time
	client  client.WithWatch
	kube    kubernetes.Interface
	ctx     context.Context
	end     context.CancelFunc
}

// randomToken is 32 random bytes, URL-safe base64.
func randomToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// credential is what a user signs in with: a bearer token, or a client
// certificate and its key (PEM).
type credential struct {
	token         string
	cert, certKey []byte
}

// parseCredential reads what the user pasted: a bearer token, or a
// kubeconfig whose current context's user holds a token or an inline
// client certificate and key. A kubeconfig's server and CA are not used:
// the dashboard talks to its own management cluster only. Errors say what
// the kubeconfig lacks: credentials in files (which are on the user's
// machine, not the dashboard's), or an exec or auth-provider plugin (which
// runs on the user's machine: paste `kubectl create token`'s token).
func parseCredential(text string) (credential, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return credential{}, errors.New("paste a bearer token or a kubeconfig")
	}
	if !strings.Contains(text, "\n") {
		return credential{token: text}, nil
	}
	cfg, err := clientcmd.Load([]byte(text))
	if err != nil {
		return credential{}, fmt.Errorf("not a token, and not a kubeconfig: %w", err)
	}
	ctxName := cfg.CurrentContext
	cur := cfg.Contexts[ctxName]
	if cur == nil {
		return credential{}, fmt.Errorf("kubeconfig: current-context %q is not among its contexts", ctxName)
	}
	u := cfg.AuthInfos[cur.AuthInfo]
	switch {
	case u == nil:
		return credential{}, fmt.Errorf("kubeconfig: context %q names user %q, which it does not hold", ctxName, cur.AuthInfo)
	case u.Token != "":
		return credential{token: u.Token}, nil
	case len(u.ClientCertificateData) > 0 && len(u.ClientKeyData) > 0:
		return credential{cert: u.ClientCertificateData, certKey: u.ClientKeyData}, nil
	case u.TokenFile != "" || u.ClientCertificate != "" || u.ClientKey != "":
		return credential{}, fmt.Errorf("kubeconfig: user %q keeps its credentials in files on your machine: paste a kubeconfig with client-certificate-data and client-key-data (kubectl config view --raw --minify --flatten), or a token", cur.AuthInfo)
	case u.Exec != nil || u.AuthProvider != nil:
		return credential{}, fmt.Errorf("kubeconfig: user %q gets its credentials from a plugin that runs on your machine: paste a token instead (kubectl create token NAME -n NAMESPACE)", cur.AuthInfo)
	}
	return credential{}, fmt.Errorf("kubeconfig: user %q has no token and no client certificate", cur.AuthInfo)
}

// signIn checks what the user pasted (parseCredential) with the API
// server — a token with a TokenReview made with the manager's own identity
// (s.review), a client certificate with a SelfSubjectReview made with it —
// and, when the API server authenticates it, starts a session whose client
// sends it. The error says why it is refused.
func (s *Server) signIn(ctx context.Context, pasted string) (id string, sess *session, err error) {
	cred, err := parseCredential(pasted)
	if err != nil {
		return "", nil, err
	}
	var user identity
	if cred.token != "" {
		tr, err := s.review.AuthenticationV1().TokenReviews().Create(ctx, &authnv1.TokenReview{Spec: authnv1.TokenReviewSpec{Token: cred.token}}, metav1.CreateOptions{})
		if err != nil {
			return "", nil, fmt.Errorf("the API server could not review the token: %w", err)
		}
		if !tr.Status.Authenticated {
			return "", nil, fmt.Errorf("token refused by the API server: %s", cmp.Or(tr.Status.Error, "not authenticated"))
		}
		user = userOf(tr.Status.User)
	} else {
		kube, err := kubernetes.NewForConfig(s.userConfig(cred))
		if err != nil {
			return "", nil, fmt.Errorf("client certificate: %w", err)
		}
		r, err := kube.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authnv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil {
			return "", nil, fmt.Errorf("client certificate refused by the API server: %w", err)
		}
		user = userOf(r.Status.UserInfo)
	}
	rec := record{identity: user, csrf: randomToken(), expires: s.now().Add(s.ttl()).Truncate(time.Second), cred: cred}
	id = randomToken()
	if err := s.sessions.save(ctx, id, rec); err != nil {
		return "", nil, err
	}
	sess, err = s.sessions.keep(sessionSecretName(id), rec)
	if err != nil {
		return "", nil, err
	}
	// Sessions nobody used until they expired go at the next sign-in.
	s.sessions.deleteExpired(ctx, s.now())
	return id, sess, nil
}

// identity is who the API server says a user is.
type identity struct {
	name, uid string
	groups    []string
}

// userOf is the identity of a review's answer.
func userOf(u authnv1.UserInfo) identity {
	return identity{name: u.Username, uid: u.UID, groups: u.Groups}
}

// userConfig reaches the management cluster with cred, the user's own
// credential.
func (s *Server) userConfig(cred credential) *rest.Config {
	cfg := rest.AnonymousClientConfig(s.opts.Config)
	cfg.QPS, cfg.Burst = 50, 100
	cfg.BearerToken, cfg.CertData, cfg.KeyData = cred.token, cred.cert, cred.certKey
	return cfg
}

// openSession makes the session of record rec kept in Secret name: the
// clients that send the user's credential, and a context that ends at
// rec.expires (by the wall clock) or when the session is forgotten.
func (s *Server) openSession(name string, rec record) (*session, error) {
	cfg := s.userConfig(rec.cred)
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: s.scheme, Mapper: s.mapper})
	if err != nil {
		return nil, err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	ctx, end := context.WithDeadline(context.Background(), rec.expires)
	return &session{name: name, user: rec.name, uid: rec.uid, groups: rec.groups, csrf: rec.csrf, expires: rec.expires, client: c, kube: kube, ctx: ctx, end: end}, nil
}

// current returns the session of r's cookie, nil when there is none, it
// expired or it cannot be read (then the reason is logged without the
// cookie).
func (s *Server) current(r *http.Request) *session {
	ck, err := r.Cookie(CookieName)
	if err != nil || ck.Value == "" {
		return nil
	}
	sess, err := s.sessions.load(r.Context(), ck.Value, s.now())
	if err != nil {
		log.Printf("dashboard: session %s: %v", sessionSecretName(ck.Value), err)
		return nil
	}
	return sess
}

// signOut ends r's session on every replica: its Secret is deleted.
func (s *Server) signOut(r *http.Request) error {
	ck, err := r.Cookie(CookieName)
	if err != nil {
		return nil
	}
	return s.sessions.delete(r.Context(), sessionSecretName(ck.Value))
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
