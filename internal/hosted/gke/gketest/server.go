package gketest

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/clustersync/clustersync/internal/pki"
)

// Method names, as Calls counts them and FailNext takes them: the
// resource and method of the GKE REST API (container.googleapis.com v1).
const (
	// MethodClustersCreate is POST .../locations/{l}/clusters.
	MethodClustersCreate = "clusters.create"
	// MethodClustersList is GET .../locations/{l}/clusters.
	MethodClustersList = "clusters.list"
	// MethodClustersGet is GET .../clusters/{c}.
	MethodClustersGet = "clusters.get"
	// MethodClustersUpdate is PUT .../clusters/{c}.
	MethodClustersUpdate = "clusters.update"
	// MethodClustersDelete is DELETE .../clusters/{c}.
	MethodClustersDelete = "clusters.delete"
	// MethodClustersSetResourceLabels is POST .../clusters/{c}:setResourceLabels.
	MethodClustersSetResourceLabels = "clusters.setResourceLabels"
	// MethodClustersSetNetworkPolicy is POST .../clusters/{c}:setNetworkPolicy.
	MethodClustersSetNetworkPolicy = "clusters.setNetworkPolicy"
	// MethodClustersSetMaintenancePolicy is POST
	// .../clusters/{c}:setMaintenancePolicy.
	MethodClustersSetMaintenancePolicy = "clusters.setMaintenancePolicy"
	// MethodNodePoolsCreate is POST .../clusters/{c}/nodePools.
	MethodNodePoolsCreate = "nodePools.create"
	// MethodNodePoolsList is GET .../clusters/{c}/nodePools.
	MethodNodePoolsList = "nodePools.list"
	// MethodNodePoolsGet is GET .../nodePools/{np}.
	MethodNodePoolsGet = "nodePools.get"
	// MethodNodePoolsUpdate is PUT .../nodePools/{np}.
	MethodNodePoolsUpdate = "nodePools.update"
	// MethodNodePoolsDelete is DELETE .../nodePools/{np}.
	MethodNodePoolsDelete = "nodePools.delete"
	// MethodNodePoolsSetSize is POST .../nodePools/{np}:setSize.
	MethodNodePoolsSetSize = "nodePools.setSize"
	// MethodNodePoolsSetAutoscaling is POST .../nodePools/{np}:setAutoscaling.
	MethodNodePoolsSetAutoscaling = "nodePools.setAutoscaling"
	// MethodNodePoolsSetManagement is POST .../nodePools/{np}:setManagement.
	MethodNodePoolsSetManagement = "nodePools.setManagement"
	// MethodOperationsGet is GET .../locations/{l}/operations/{op}.
	MethodOperationsGet = "operations.get"
	// MethodOperationsList is GET .../locations/{l}/operations.
	MethodOperationsList = "operations.list"
	// MethodUnknown counts requests for paths (or methods of a path) the
	// emulator does not serve; they are answered 404 (405 for a known
	// path with another HTTP method).
	MethodUnknown = "unknown"
)

// Options configures a Server. The zero value is usable: no delays (an
// operation is DONE at the next request), the real clock, fake endpoints
// and the Server's own CA.
type Options struct {
	// Now is the clock; an operation is DONE once Now reaches its start
	// plus its delay, evaluated on every request and Go API call (never
	// with timers). Default time.Now.
	Now func() time.Time
	// CreateDelay is how long CREATE_CLUSTER and CREATE_NODE_POOL
	// operations run (the cluster or pool is PROVISIONING meanwhile).
	CreateDelay time.Duration
	// UpdateDelay is how long every other mutation runs (UPDATE_CLUSTER,
	// UPGRADE_MASTER, UPGRADE_NODES, SET_LABELS, SET_NETWORK_POLICY,
	// SET_MAINTENANCE_POLICY, SET_NODE_POOL_SIZE, SET_NODE_POOL_MANAGEMENT).
	UpdateDelay time.Duration
	// DeleteDelay is how long DELETE_CLUSTER and DELETE_NODE_POOL run (the
	// cluster or pool is STOPPING meanwhile, gone afterwards).
	DeleteDelay time.Duration
	// EndpointFor returns Cluster.endpoint (an IP address or host name,
	// no scheme, as GKE reports it) of the named cluster, e.g. the
	// address of a test's Kubernetes API server. Default: a stable fake
	// public IP "34.x.y.z" hashed from project, location and name.
	EndpointFor func(cluster string) string
	// CertificateAuthorityFor returns the PEM CA bundle reported (base64,
	// standard encoding) as Cluster.masterAuth.clusterCaCertificate.
	// Default: the CA generated for this Server, see CACertPEM.
	CertificateAuthorityFor func(cluster string) []byte
}

// Server is an emulated GKE API endpoint (container.googleapis.com v1).
// Create it with New (or NewUnstarted and Start, or mount Handler), point
// the client at URL with option.WithEndpoint, and Close it when done. All
// methods are safe for concurrent use.
type Server struct {
	// URL is the base URL of the emulator, e.g. "http://127.0.0.1:41234";
	// empty until the Server is started.
	URL string

	opts  Options
	caPEM []byte

	hs *http.Server
	ln net.Listener

	mu       sync.Mutex
	clusters map[string]*cluster
	ops      map[string]*operation
	opOrder  []*operation
	running  []*operation
	calls    map[string]int
	faults   map[string]*fault
	opFaults []string
}

// fault is an error injected by FailNext.
type fault struct {
	err *APIError
	n   int
}

// APIError is a Google API error as the emulator answers it: the HTTP
// status Code and the body
// {"error":{"code":Code,"message":Message,"status":Status,
// "errors":[{"message":Message,"domain":"global","reason":Reason}]}},
// which the client returns as a *googleapi.Error with Code, Message and
// Errors[0].Reason. The Go API (ImportCluster) returns it too.
type APIError struct {
	// Code is the HTTP status code, e.g. 404.
	Code int
	// Status is the canonical google.rpc.Code name, e.g. "NOT_FOUND".
	Status string
	// Reason is the legacy error reason, e.g. "notFound".
	Reason string
	// Message is the human-readable message.
	Message string
}

// Error implements error.
func (e *APIError) Error() string {
	return fmt.Sprintf("googleapi: Error %d: %s, %s (%s)", e.Code, e.Message, e.Reason, e.Status)
}

func apiErr(code int, status, reason, format string, a ...any) *APIError {
	return &APIError{Code: code, Status: status, Reason: reason, Message: fmt.Sprintf(format, a...)}
}

// errBadRequest is 400 INVALID_ARGUMENT badRequest.
func errBadRequest(format string, a ...any) *APIError {
	return apiErr(http.StatusBadRequest, "INVALID_ARGUMENT", "badRequest", format, a...)
}

// errPrecondition is 400 FAILED_PRECONDITION failedPrecondition.
func errPrecondition(format string, a ...any) *APIError {
	return apiErr(http.StatusBadRequest, "FAILED_PRECONDITION", "failedPrecondition", format, a...)
}

// errNotFound is 404 NOT_FOUND notFound for a resource name.
func errNotFound(name string) *APIError {
	return apiErr(http.StatusNotFound, "NOT_FOUND", "notFound", "Not found: %s.", name)
}

// errExists is 409 ALREADY_EXISTS alreadyExists for a resource name.
func errExists(name string) *APIError {
	return apiErr(http.StatusConflict, "ALREADY_EXISTS", "alreadyExists", "Already exists: %s.", name)
}

// errAborted is 409 ABORTED aborted (a stale etag).
func errAborted(format string, a ...any) *APIError {
	return apiErr(http.StatusConflict, "ABORTED", "aborted", format, a...)
}

// statusFor derives the google.rpc.Code name and a default reason from an
// HTTP status and the reason given to FailNext.
func statusFor(code int, reason string) (status, defReason string) {
	switch code {
	case http.StatusBadRequest:
		if reason == "failedPrecondition" {
			return "FAILED_PRECONDITION", "failedPrecondition"
		}
		return "INVALID_ARGUMENT", "badRequest"
	case http.StatusUnauthorized:
		return "UNAUTHENTICATED", "authError"
	case http.StatusForbidden:
		return "PERMISSION_DENIED", "forbidden"
	case http.StatusNotFound:
		return "NOT_FOUND", "notFound"
	case http.StatusConflict:
		if reason == "alreadyExists" {
			return "ALREADY_EXISTS", "alreadyExists"
		}
		return "ABORTED", "aborted"
	case http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED", "rateLimitExceeded"
	case http.StatusInternalServerError:
		return "INTERNAL", "backendError"
	case http.StatusNotImplemented:
		return "UNIMPLEMENTED", "notImplemented"
	case http.StatusServiceUnavailable:
		return "UNAVAILABLE", "backendError"
	case http.StatusGatewayTimeout:
		return "DEADLINE_EXCEEDED", "deadlineExceeded"
	}
	return "UNKNOWN", "unknown"
}

// New starts an emulator on 127.0.0.1 (a free port) and sets URL. It
// panics if it cannot listen, like httptest.NewServer.
func New(opts Options) *Server {
	s := NewUnstarted(opts)
	if err := s.Start("127.0.0.1:0"); err != nil {
		panic("gketest: " + err.Error())
	}
	return s
}

// NewUnstarted returns an emulator that does not listen yet: call Start,
// or mount Handler on a server of your own. URL is empty until Start.
func NewUnstarted(opts Options) *Server {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Server{
		opts:     opts,
		clusters: map[string]*cluster{},
		ops:      map[string]*operation{},
		calls:    map[string]int{},
		faults:   map[string]*fault{},
	}
	ca, err := pki.NewCA("gketest")
	if err != nil {
		panic(err) // crypto/rand failing; New panics like httptest
	}
	s.caPEM = ca.CertPEM()
	return s
}

// Start listens on addr (host:port; port 0 picks a free one), serves the
// emulator there over plain HTTP in the background and sets URL
// ("http://" and the listening address). Calling Start on a started
// Server is an error.
func (s *Server) Start(addr string) error {
	if s.hs != nil {
		return errors.New("server already started")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	s.ln = ln
	s.hs = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	s.URL = "http://" + ln.Addr().String()
	go func() { _ = s.hs.Serve(ln) }()
	return nil
}

// Close stops the listener started by New or Start and closes its open
// connections; it is a no-op for an unstarted Server.
func (s *Server) Close() {
	if s.hs != nil {
		_ = s.hs.Close()
	}
}

// CACertPEM returns the PEM of the self-signed CA generated for this
// Server, the default Cluster.masterAuth.clusterCaCertificate (base64 of
// this PEM) unless Options.CertificateAuthorityFor is set.
func (s *Server) CACertPEM() []byte { return append([]byte(nil), s.caPEM...) }

// FailNext makes the next n HTTP calls of method (one of the Method*
// names, e.g. "clusters.create") fail with the HTTP status code, before
// any state is touched. The error's status is derived from code (400
// INVALID_ARGUMENT, or FAILED_PRECONDITION when reason is
// "failedPrecondition"; 401 UNAUTHENTICATED, 403 PERMISSION_DENIED, 404
// NOT_FOUND, 409 ABORTED, or ALREADY_EXISTS when reason is
// "alreadyExists"; 429 RESOURCE_EXHAUSTED, 500 INTERNAL, 501
// UNIMPLEMENTED, 503 UNAVAILABLE, 504 DEADLINE_EXCEEDED, others UNKNOWN).
// code 0 means 500; an empty reason gets the usual one for the code (e.g.
// "backendError" for 500 and 503); an empty message a generic one. n <= 0
// clears the fault. Injected failures are counted by Calls. The client
// retries 503 and 504 by itself for the GET methods, clusters.delete and
// nodePools.delete, so each injected failure of those costs one call.
func (s *Server) FailNext(method string, code int, reason, message string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n <= 0 {
		delete(s.faults, method)
		return
	}
	if code == 0 {
		code = http.StatusInternalServerError
	}
	status, defReason := statusFor(code, reason)
	if reason == "" {
		reason = defReason
	}
	if message == "" {
		message = fmt.Sprintf("Injected failure of %s (HTTP %d).", method, code)
	}
	s.faults[method] = &fault{err: &APIError{Code: code, Status: status, Reason: reason, Message: message}, n: n}
}

// FailOperations makes the next n operations that start after this call
// end DONE with error {code: 13 (INTERNAL), message} (Operation.error, a
// google.rpc.Status, and the deprecated Operation.statusMessage) instead
// of succeeding, without applying their change (see the package
// documentation for the state they leave). n <= 0 clears pending
// failures.
func (s *Server) FailOperations(n int, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opFaults = nil
	if message == "" {
		message = "Injected operation failure."
	}
	for range n {
		s.opFaults = append(s.opFaults, message)
	}
}

// Calls returns how many HTTP calls each method received (including
// failed and fault-injected ones), keyed by the Method* names (and
// MethodUnknown for requests the emulator does not serve).
func (s *Server) Calls() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.calls)
}

// ResetCalls zeroes the counters returned by Calls.
func (s *Server) ResetCalls() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = map[string]int{}
}

// req is a routed request: the method name and the path parameters.
type req struct {
	method                   string
	project, location        string
	cluster, pool, operation string
	body                     []byte
}

// route maps an HTTP method and path to a method name and its path
// parameters. ok is false for paths the emulator does not serve; method
// is empty when the path is known but the HTTP method is not.
func route(httpMethod, path string) (r req, ok bool) {
	seg := strings.Split(strings.Trim(path, "/"), "/")
	if len(seg) < 6 || seg[0] != "v1" || seg[1] != "projects" || seg[2] == "" || seg[3] != "locations" || seg[4] == "" {
		return r, false
	}
	r.project, r.location = seg[2], seg[4]
	rest := seg[5:]
	pick := func(m map[string]string) (req, bool) {
		r.method = m[httpMethod]
		return r, true
	}
	switch {
	case len(rest) == 1 && rest[0] == "clusters":
		return pick(map[string]string{http.MethodGet: MethodClustersList, http.MethodPost: MethodClustersCreate})
	case len(rest) == 2 && rest[0] == "clusters":
		name, verb, custom := strings.Cut(rest[1], ":")
		if name == "" {
			return r, false
		}
		r.cluster = name
		if !custom {
			return pick(map[string]string{http.MethodGet: MethodClustersGet, http.MethodPut: MethodClustersUpdate, http.MethodDelete: MethodClustersDelete})
		}
		switch verb {
		case "setResourceLabels":
			return pick(map[string]string{http.MethodPost: MethodClustersSetResourceLabels})
		case "setNetworkPolicy":
			return pick(map[string]string{http.MethodPost: MethodClustersSetNetworkPolicy})
		case "setMaintenancePolicy":
			return pick(map[string]string{http.MethodPost: MethodClustersSetMaintenancePolicy})
		}
	case len(rest) == 3 && rest[0] == "clusters" && rest[1] != "" && rest[2] == "nodePools":
		r.cluster = rest[1]
		return pick(map[string]string{http.MethodGet: MethodNodePoolsList, http.MethodPost: MethodNodePoolsCreate})
	case len(rest) == 4 && rest[0] == "clusters" && rest[1] != "" && rest[2] == "nodePools":
		name, verb, custom := strings.Cut(rest[3], ":")
		if name == "" {
			return r, false
		}
		r.cluster, r.pool = rest[1], name
		if !custom {
			return pick(map[string]string{http.MethodGet: MethodNodePoolsGet, http.MethodPut: MethodNodePoolsUpdate, http.MethodDelete: MethodNodePoolsDelete})
		}
		switch verb {
		case "setSize":
			return pick(map[string]string{http.MethodPost: MethodNodePoolsSetSize})
		case "setAutoscaling":
			return pick(map[string]string{http.MethodPost: MethodNodePoolsSetAutoscaling})
		case "setManagement":
			return pick(map[string]string{http.MethodPost: MethodNodePoolsSetManagement})
		}
	case len(rest) == 1 && rest[0] == "operations":
		return pick(map[string]string{http.MethodGet: MethodOperationsList})
	case len(rest) == 2 && rest[0] == "operations" && rest[1] != "" && !strings.Contains(rest[1], ":"):
		r.operation = rest[1]
		return pick(map[string]string{http.MethodGet: MethodOperationsGet})
	}
	return r, false
}

// Handler returns the HTTP handler serving the emulated GKE API (see the
// package documentation for the paths).
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serveHTTP) }

func (s *Server) serveHTTP(w http.ResponseWriter, hr *http.Request) {
	r, ok := route(hr.Method, hr.URL.Path)
	if !ok {
		s.count(MethodUnknown)
		writeError(w, apiErr(http.StatusNotFound, "NOT_FOUND", "notFound", "Not found: %s %s.", hr.Method, hr.URL.Path))
		return
	}
	if r.method == "" {
		s.count(MethodUnknown)
		writeError(w, apiErr(http.StatusMethodNotAllowed, "UNIMPLEMENTED", "methodNotAllowed", "Method %s is not allowed on %s.", hr.Method, hr.URL.Path))
		return
	}
	if hr.Body != nil {
		b, err := io.ReadAll(io.LimitReader(hr.Body, 8<<20))
		_ = hr.Body.Close()
		if err != nil {
			s.count(r.method)
			writeError(w, errBadRequest("The request body could not be read: %v.", err))
			return
		}
		r.body = b
	}

	s.mu.Lock()
	s.calls[r.method]++
	if f := s.faults[r.method]; f != nil {
		f.n--
		if f.n <= 0 {
			delete(s.faults, r.method)
		}
		s.mu.Unlock()
		writeError(w, f.err)
		return
	}
	now := s.settle()
	out, e := s.dispatch(&r, now)
	s.mu.Unlock()
	if e != nil {
		writeError(w, e)
		return
	}
	b, err := protojson.Marshal(out)
	if err != nil {
		writeError(w, apiErr(http.StatusInternalServerError, "INTERNAL", "backendError", "Encoding the answer: %v.", err))
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=UTF-8")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

func (s *Server) count(method string) {
	s.mu.Lock()
	s.calls[method]++
	s.mu.Unlock()
}

// writeError answers e as Google APIs do.
func writeError(w http.ResponseWriter, e *APIError) {
	type item struct {
		Message string `json:"message"`
		Domain  string `json:"domain"`
		Reason  string `json:"reason"`
	}
	type body struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Status  string `json:"status"`
		Errors  []item `json:"errors"`
	}
	b, _ := json.Marshal(map[string]body{"error": {
		Code: e.Code, Message: e.Message, Status: e.Status,
		Errors: []item{{Message: e.Message, Domain: "global", Reason: e.Reason}},
	}})
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=UTF-8")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(e.Code)
	_, _ = w.Write(b)
}

// decode parses a request body into m; an empty body is an empty message.
func decode(b []byte, m proto.Message) *APIError {
	if len(strings.TrimSpace(string(b))) == 0 {
		return nil
	}
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(b, m); err != nil {
		return errBadRequest("Invalid JSON payload received. %v", err)
	}
	return nil
}

// dispatch runs a routed request with s.mu held.
func (s *Server) dispatch(r *req, now time.Time) (proto.Message, *APIError) {
	switch r.method {
	case MethodClustersCreate:
		return s.createCluster(r, now)
	case MethodClustersList:
		return s.listClusters(r), nil
	case MethodClustersGet:
		c, e := s.findCluster(r.project, r.location, r.cluster)
		if e != nil {
			return nil, e
		}
		return c.render(), nil
	case MethodClustersUpdate:
		return s.updateCluster(r, now)
	case MethodClustersDelete:
		return s.deleteCluster(r, now)
	case MethodClustersSetResourceLabels:
		return s.setLabels(r, now)
	case MethodClustersSetNetworkPolicy:
		return s.setNetworkPolicy(r, now)
	case MethodClustersSetMaintenancePolicy:
		return s.setMaintenancePolicy(r, now)
	case MethodNodePoolsCreate:
		return s.createPool(r, now)
	case MethodNodePoolsList:
		return s.listPools(r)
	case MethodNodePoolsGet:
		_, p, e := s.findPool(r.project, r.location, r.cluster, r.pool)
		if e != nil {
			return nil, e
		}
		return proto.Clone(p.pb), nil
	case MethodNodePoolsUpdate:
		return s.updatePool(r, now)
	case MethodNodePoolsDelete:
		return s.deletePool(r, now)
	case MethodNodePoolsSetSize:
		return s.setPoolSize(r, now)
	case MethodNodePoolsSetAutoscaling:
		return s.setPoolAutoscaling(r, now)
	case MethodNodePoolsSetManagement:
		return s.setPoolManagement(r, now)
	case MethodOperationsGet:
		op, e := s.findOperation(r.project, r.location, r.operation)
		if e != nil {
			return nil, e
		}
		return proto.Clone(op.pb), nil
	case MethodOperationsList:
		return s.listOperations(r), nil
	}
	return nil, apiErr(http.StatusMethodNotAllowed, "UNIMPLEMENTED", "methodNotAllowed", "Method %s is not served.", r.method)
}

// randomHex returns n random hex digits.
func randomHex(n int) string {
	b := make([]byte, (n+1)/2)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)[:n]
}

// hashOf is a stable digest of parts.
func hashOf(parts ...string) []byte {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return h.Sum(nil)
}

func copyMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
