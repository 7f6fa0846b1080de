package dashboard

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/management"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed assets
var assetFiles embed.FS

// DefaultSessionTTL is how long a sign-in lasts: 8 hours.
const DefaultSessionTTL = 8 * time.Hour

// Options configure a Server.
type Options struct {
	// Config reaches the management cluster with the manager's identity.
	// It is used only to review the tokens users sign in with
	// (TokenReview); every other read and write is made with the user's
	// own token. Its host and CA are the ones users' requests go to.
	Config *rest.Config
	// SessionNamespace is the namespace the sessions are kept in, one
	// Secret each (SessionSecretType), so that every replica knows every
	// signed-in user and a restart signs nobody out: the manager's own
	// (its --leader-elect-namespace); required. Config's identity creates,
	// reads, watches and deletes Secrets there.
	SessionNamespace string
	// SessionTTL is how long a session lasts; 0 means DefaultSessionTTL.
	SessionTTL time.Duration
	// Secure marks the session cookie Secure: set it when the dashboard is
	// served over TLS.
	Secure bool
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Scheme knows the management cluster's kinds (manager.Scheme);
	// required.
	Scheme *runtime.Scheme
	// Clouds is the table of clouds (clouds.All): a hosted Cluster is seen
	// through the cloud its config is of, the Add page has an import form
	// per cloud; required.
	Clouds []management.Descriptor
	// VirtualServer returns the URL the dashboard reaches the API server
	// of virtual cluster name of host namespace ns at; nil means its host
	// Service's cluster IP, which the manager's pod reaches.
	VirtualServer func(ctx context.Context, name, ns string) (string, error)
}

// Server is the dashboard: sign-in with a Kubernetes bearer token or
// kubeconfig, the clusters table (live), a hosted cluster's effective
// state with its conflicts and events, a registered cluster's import
// command and agent, a virtual cluster's objects next to their host
// copies, the forms that add a cluster. Pages are html/template with
// embedded assets;
// live updates are server-sent events swapped in by htmx
// (https://htmx.org, its sse extension; internal/dashboard/assets/vendor,
// hack/dashboard-assets.sh).
type Server struct {
	opts   Options
	review kubernetes.Interface
	// admin is the manager's client, used only to list and watch Clusters
	// for a user who may read some Clusters by name but not list them; each
	// is shown only after a SelfSubjectAccessReview made with the user's
	// token allows get on it.
	admin    client.WithWatch
	scheme   *runtime.Scheme
	mapper   meta.RESTMapper
	pages    map[string]*template.Template
	sessions *sessions
}

// New makes a Server for the management cluster of o.Config. Errors come
// from the templates or the review client.
func New(o Options) (*Server, error) {
	if o.Config == nil || o.Scheme == nil || len(o.Clouds) == 0 || o.SessionNamespace == "" {
		return nil, errors.New("dashboard: Options.Config, Scheme, Clouds and SessionNamespace are required")
	}
	review, err := kubernetes.NewForConfig(o.Config)
	if err != nil {
		return nil, err
	}
	admin, err := client.NewWithWatch(o.Config, client.Options{Scheme: o.Scheme, Mapper: restMapper(o.Clouds)})
	if err != nil {
		return nil, err
	}
	s := &Server{opts: o, review: review, admin: admin, scheme: o.Scheme, mapper: restMapper(o.Clouds), pages: map[string]*template.Template{}}
	s.sessions = &sessions{ns: o.SessionNamespace, kube: review, open: s.openSession, live: map[string]*session{}, gone: map[string]time.Time{}}
	funcs := template.FuncMap{"csrfField": func() string { return CSRFField }, "kubeconfigTTLs": kubeconfigTTLs}
	for _, page := range []string{"login.html", "clusters.html", "cluster.html", "virtual.html", "add.html"} {
		t, err := template.New(page).Funcs(funcs).ParseFS(templateFiles, "templates/layout.html", "templates/table.html", "templates/detail.html", "templates/"+page)
		if err != nil {
			return nil, fmt.Errorf("dashboard template %s: %w", page, err)
		}
		s.pages[page] = t
	}
	return s, nil
}

// Start follows the session Secrets of Options.SessionNamespace until ctx
// ends, so that a session signed out on another replica ends here too; it
// returns once the first list is in, and must be called before Handler
// serves. It fails when the namespace is missing (with the command that
// makes it) or cannot be read.
func (s *Server) Start(ctx context.Context) error {
	return s.sessions.start(ctx)
}

// restMapper knows the kinds the dashboard reads and writes, so that a
// user's client needs no discovery.
func restMapper(clouds []management.Descriptor) meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	m.Add(mgmtv1.GroupVersion.WithKind("Cluster"), meta.RESTScopeRoot)
	for _, d := range clouds {
		m.Add(d.Kind, meta.RESTScopeNamespace)
	}
	m.Add(mgmtv1.GroupVersion.WithKind("Project"), meta.RESTScopeRoot)
	m.Add(mgmtv1.GroupVersion.WithKind("ClusterRegistrationToken"), meta.RESTScopeNamespace)
	m.Add(schema.GroupVersionKind{Group: "events.k8s.io", Version: "v1", Kind: "Event"}, meta.RESTScopeNamespace)
	// What a virtual cluster's page reads, on the host and in the virtual
	// cluster (internal/virtual/inspect); the Add form lists Secrets
	// metadata-only (its credentials), so that their values never reach
	// the dashboard.
	for _, k := range []string{"Pod", "Service", "ConfigMap", "Secret", "PersistentVolumeClaim"} {
		m.Add(corev1.SchemeGroupVersion.WithKind(k), meta.RESTScopeNamespace)
	}
	return m
}

func (s *Server) now() time.Time {
	if s.opts.Now != nil {
		return s.opts.Now()
	}
	return time.Now()
}

func (s *Server) ttl() time.Duration {
	if s.opts.SessionTTL > 0 {
		return s.opts.SessionTTL
	}
	return DefaultSessionTTL
}

// Handler serves the dashboard: GET /login and POST /login (sign-in),
// POST /logout, GET / (clusters; ?q= filters, ?sort=name|driver|phase|age),
// GET /events (the clusters table as server-sent events), GET
// /clusters/NAME (a hosted cluster) and GET /clusters/NAME/events (its
// page as server-sent events), POST /clusters/NAME/take (take the
// cloud's value of a conflicting field: form field path) and POST
// /clusters/NAME/keep (keep your value of it: pushed over the cloud's;
// form field path), POST /clusters/NAME/kubeconfig (a kubeconfig for a
// member through the manager's proxy: form field ttl), GET
// /virtual/NAMESPACE/NAME (a
// virtual cluster; ?ns= picks the virtual namespace shown), GET
// /virtual/NAMESPACE/NAME/kubeconfig (its kubeconfig, Secret vc-NAME),
// GET /add?kind=eks|aks|gke|registered (the Add forms: import an EKS, AKS
// or GKE cluster, register any cluster), POST /add/preview (htmx: the
// form with the YAML of the Cluster it would create, checked by a dry-run
// create) and POST /add (create it and redirect to /clusters/NAME; with
// action=preview, the page with the YAML, for a browser without
// JavaScript), /assets/ (CSS, htmx). Every page
// but /login and /assets/ needs a session; every POST but /login needs the
// session's CSRF token.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	assets, _ := fs.Sub(assetFiles, "assets")
	mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(assets)))
	mux.HandleFunc("GET /login", s.loginPage)
	mux.HandleFunc("POST /login", s.login)
	mux.HandleFunc("POST /logout", s.authed(s.logout))
	mux.HandleFunc("GET /{$}", s.authed(s.clustersPage))
	mux.HandleFunc("GET /events", s.authed(s.clusterEvents))
	mux.HandleFunc("GET /clusters/{name}", s.authed(s.clusterPage))
	mux.HandleFunc("GET /clusters/{name}/events", s.authed(s.clusterDetailEvents))
	mux.HandleFunc("POST /clusters/{name}/take", s.authed(s.answer(management.Take)))
	mux.HandleFunc("POST /clusters/{name}/keep", s.authed(s.answer(management.Keep)))
	mux.HandleFunc("POST /clusters/{name}/kubeconfig", s.authed(s.clusterKubeconfig))
	mux.HandleFunc("GET /virtual/{namespace}/{name}", s.authed(s.virtualPage))
	mux.HandleFunc("GET /virtual/{namespace}/{name}/kubeconfig", s.authed(s.virtualKubeconfig))
	mux.HandleFunc("POST /virtual/{namespace}/{name}/kubeconfig", s.authed(s.serviceAccountKubeconfig))
	mux.HandleFunc("GET /add", s.authed(s.addPage))
	mux.HandleFunc("POST /add", s.authed(s.addSubmit))
	mux.HandleFunc("POST /add/preview", s.authed(s.addPreview))
	return securityHeaders(mux)
}

// securityHeaders sets headers every answer carries: no framing, no
// sniffing, scripts and styles from the dashboard only.
func securityHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "same-origin")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'")
		h.ServeHTTP(w, r)
	})
}

// authed runs h with the request's session; without one, pages redirect
// to /login and other requests get 401. A POST without the session's CSRF
// token gets 403.
func (s *Server) authed(h func(http.ResponseWriter, *http.Request, *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sess := s.current(r)
		switch {
		case sess == nil && r.Method == http.MethodGet && !strings.HasSuffix(r.URL.Path, "/events"):
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return
		case sess == nil:
			http.Error(w, "sign in first", http.StatusUnauthorized)
			return
		case r.Method == http.MethodPost && !validCSRF(r, sess):
			http.Error(w, "missing or wrong CSRF token: reload the page and try again", http.StatusForbidden)
			return
		}
		// The request ends with the session: live updates stop at a
		// sign-out on any replica.
		ctx, cancel := context.WithCancelCause(r.Context())
		defer cancel(nil)
		stop := context.AfterFunc(sess.ctx, func() { cancel(errSessionEnded) })
		defer stop()
		h(w, r.WithContext(ctx), sess)
	}
}

// errSessionEnded is the cause of a request's end when its session ended
// meanwhile.
var errSessionEnded = errors.New("your session ended (signed out, or expired): sign in again")

// page is what every template gets.
type page struct {
	Title, User, CSRF, Error string
	Data                     any
}

// renderFragment writes template def of page name with data (a part of
// the page, for htmx to swap in); a template error is a 500.
func (s *Server) renderFragment(w http.ResponseWriter, name, def string, status int, data any) {
	var buf bytes.Buffer
	if err := s.pages[name].ExecuteTemplate(&buf, def, data); err != nil {
		http.Error(w, "dashboard: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = buf.WriteTo(w)
}

// render writes the whole page name with p; a template error is a 500.
func (s *Server) render(w http.ResponseWriter, name string, status int, p page) {
	s.renderFragment(w, name, name, status, p)
}

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	s.render(w, "login.html", http.StatusOK, page{Title: "Sign in"})
}

// login reviews the pasted token and starts a session.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	id, _, err := s.signIn(r.Context(), r.PostFormValue("token"))
	if err != nil {
		s.render(w, "login.html", http.StatusUnauthorized, page{Title: "Sign in", Error: err.Error()})
		return
	}
	s.setCookie(w, id)
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request, _ *session) {
	if err := s.signOut(r); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	s.setCookie(w, "")
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// hosted returns c seen through the cloud its config is of; ok is false
// for a Cluster of no cloud (a registered one).
func (s *Server) hosted(c *mgmtv1.Cluster) (management.View, bool) {
	return management.Hosted(s.opts.Clouds, c)
}
