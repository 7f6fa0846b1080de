package akstest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// APIError is an ARM error as the emulator answers it: the HTTP status and
// the body {"error":{"code":Code,"message":Message}}. The Go API
// (ImportCluster, Autoscale) returns it too.
type APIError struct {
	// Status is the HTTP status code.
	Status int
	// Code is the ARM error code, e.g. "ResourceNotFound".
	Code string
	// Message is the human-readable message.
	Message string
}

// Error implements error.
func (e *APIError) Error() string { return fmt.Sprintf("%s (%d): %s", e.Code, e.Status, e.Message) }

func apiErr(status int, code, format string, a ...any) *APIError {
	return &APIError{Status: status, Code: code, Message: fmt.Sprintf(format, a...)}
}

// reply is a successful answer: status, headers and a JSON body (nil: none).
type reply struct {
	status int
	header http.Header
	body   any
}

// req is a routed request.
type req struct {
	op                      string
	sub, rg, name, pool, id string
	loc                     string
	method                  string
	query                   url.Values
	header                  http.Header
	body                    []byte
	base                    string // scheme://host of the request
}

// route maps a method and path to an operation name and its path
// parameters. Segment names match case-insensitively, as in ARM; ok is false
// for paths the emulator does not serve, and op is empty when the path is
// known but the method is not.
func route(method, escapedPath string) (r req, ok bool) {
	raw := strings.Split(strings.Trim(escapedPath, "/"), "/")
	seg := make([]string, len(raw))
	low := make([]string, len(raw))
	for i, p := range raw {
		v, err := url.PathUnescape(p)
		if err != nil {
			return r, false
		}
		seg[i], low[i] = v, strings.ToLower(v)
	}
	n := len(seg)
	if n < 2 || low[0] != "subscriptions" || seg[1] == "" {
		return r, false
	}
	r.sub = seg[1]
	pick := func(ops map[string]string) (req, bool) {
		r.op = ops[method]
		return r, true
	}
	const provider = "microsoft.containerservice"
	switch {
	case n == 3 && low[2] == "resourcegroups":
		return pick(map[string]string{http.MethodGet: "resourceGroups.list"})
	case n == 4 && low[2] == "resourcegroups":
		r.rg = seg[3]
		return pick(map[string]string{
			http.MethodHead: "resourceGroups.checkExistence", http.MethodGet: "resourceGroups.get",
			http.MethodPut: "resourceGroups.createOrUpdate", http.MethodDelete: "resourceGroups.delete",
		})
	case n == 4 && low[2] == "operationresults":
		r.id = seg[3]
		return pick(map[string]string{http.MethodGet: "operationResults.get"})
	case n == 5 && low[2] == "providers" && low[3] == provider && low[4] == "managedclusters":
		return pick(map[string]string{http.MethodGet: "managedClusters.list"})
	case n == 8 && low[2] == "providers" && low[3] == provider && low[4] == "locations" && low[6] == "operations":
		r.loc, r.id = seg[5], seg[7]
		return pick(map[string]string{http.MethodGet: "operations.get"})
	case n == 8 && low[2] == "providers" && low[3] == provider && low[4] == "locations" && low[6] == "operationresults":
		r.loc, r.id = seg[5], seg[7]
		return pick(map[string]string{http.MethodGet: "operationResults.get"})
	case n >= 7 && low[2] == "resourcegroups" && low[4] == "providers" && low[5] == provider && low[6] == "managedclusters":
		r.rg = seg[3]
		switch {
		case n == 7:
			return pick(map[string]string{http.MethodGet: "managedClusters.listByResourceGroup"})
		case n == 8:
			r.name = seg[7]
			return pick(map[string]string{
				http.MethodGet: "managedClusters.get", http.MethodPut: "managedClusters.createOrUpdate",
				http.MethodPatch: "managedClusters.updateTags", http.MethodDelete: "managedClusters.delete",
			})
		case n == 9 && low[8] == "listclusteradmincredential":
			r.name = seg[7]
			return pick(map[string]string{http.MethodPost: "managedClusters.listClusterAdminCredential"})
		case n == 9 && low[8] == "listclusterusercredential":
			r.name = seg[7]
			return pick(map[string]string{http.MethodPost: "managedClusters.listClusterUserCredential"})
		case n == 9 && low[8] == "agentpools":
			r.name = seg[7]
			return pick(map[string]string{http.MethodGet: "agentPools.list"})
		case n == 10 && low[8] == "agentpools":
			r.name, r.pool = seg[7], seg[9]
			return pick(map[string]string{
				http.MethodGet: "agentPools.get", http.MethodPut: "agentPools.createOrUpdate",
				http.MethodDelete: "agentPools.delete",
			})
		}
	}
	return r, false
}

// Handler returns the HTTP handler serving the emulated ARM API (see the
// package documentation for the paths).
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serveHTTP) }

func (s *Server) serveHTTP(w http.ResponseWriter, hr *http.Request) {
	r, ok := route(hr.Method, hr.URL.EscapedPath())
	if !ok {
		s.count("unknown")
		s.writeError(w, hr, apiErr(http.StatusNotFound, "InvalidResourceType",
			"The resource type could not be found for the path '%s'.", hr.URL.Path))
		return
	}
	if r.op == "" {
		s.count("unknown")
		s.writeError(w, hr, apiErr(http.StatusMethodNotAllowed, "MethodNotAllowed",
			"The requested resource does not support http method '%s'.", hr.Method))
		return
	}
	s.count(r.op)
	if e := checkAuth(hr); e != nil {
		s.writeError(w, hr, e)
		return
	}
	if hr.URL.Query().Get("api-version") == "" {
		s.writeError(w, hr, apiErr(http.StatusBadRequest, "MissingApiVersionParameter",
			"The api-version query parameter (?api-version=) is required for all requests."))
		return
	}
	if hr.Body != nil {
		b, err := io.ReadAll(io.LimitReader(hr.Body, 8<<20))
		_ = hr.Body.Close()
		if err != nil {
			s.writeError(w, hr, apiErr(http.StatusBadRequest, "InvalidRequestContent", "The request content could not be read: %v.", err))
			return
		}
		r.body = b
	}
	r.method, r.query, r.header = hr.Method, hr.URL.Query(), hr.Header
	scheme := "http"
	if hr.TLS != nil {
		scheme = "https"
	}
	r.base = scheme + "://" + hr.Host

	s.mu.Lock()
	if f := s.faults[r.op]; f != nil {
		f.n--
		if f.n <= 0 {
			delete(s.faults, r.op)
		}
		s.mu.Unlock()
		switch f.status {
		case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
			http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			w.Header().Set("Retry-After-Ms", s.retryAfterMs())
		}
		s.writeError(w, hr, &APIError{Status: f.status, Code: f.code, Message: f.message})
		return
	}
	now := s.settle()
	out, e := s.dispatch(&r, now)
	s.mu.Unlock()
	if e != nil {
		s.writeError(w, hr, e)
		return
	}
	h := w.Header()
	for k, v := range out.header {
		h[k] = v
	}
	h.Set("x-ms-request-id", newUUID())
	if out.body == nil {
		w.WriteHeader(out.status)
		return
	}
	b, err := json.Marshal(out.body)
	if err != nil {
		s.writeError(w, hr, apiErr(http.StatusInternalServerError, "InternalServerError", "encoding the answer: %v", err))
		return
	}
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(out.status)
	if hr.Method != http.MethodHead {
		_, _ = w.Write(b)
	}
}

func (s *Server) count(op string) {
	s.mu.Lock()
	s.calls[op]++
	s.mu.Unlock()
}

// checkAuth accepts any bearer token, as the emulator does not model Azure
// AD; ARM's own messages are used for a missing or malformed header.
func checkAuth(hr *http.Request) *APIError {
	a := hr.Header.Get("Authorization")
	if a == "" {
		return apiErr(http.StatusUnauthorized, "AuthenticationFailed", "Authentication failed. The 'Authorization' header is missing.")
	}
	scheme, token, _ := strings.Cut(a, " ")
	if !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return apiErr(http.StatusUnauthorized, "AuthenticationFailedInvalidHeader", "Authentication failed. The 'Authorization' header is provided in an invalid format.")
	}
	return nil
}

func (s *Server) writeError(w http.ResponseWriter, hr *http.Request, e *APIError) {
	body, _ := json.Marshal(map[string]any{"error": map[string]string{"code": e.Code, "message": e.Message}})
	h := w.Header()
	h.Set("x-ms-request-id", newUUID())
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(e.Status)
	if hr.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

func (s *Server) retryAfterMs() string {
	return strconv.FormatInt(int64(s.opts.RetryAfter/time.Millisecond), 10)
}

// dispatch runs a routed request with s.mu held.
func (s *Server) dispatch(r *req, now time.Time) (*reply, *APIError) {
	switch r.op {
	case "resourceGroups.list":
		return s.listGroups(r)
	case "resourceGroups.checkExistence":
		if s.group(r.sub, r.rg) == nil {
			return &reply{status: http.StatusNotFound}, nil
		}
		return &reply{status: http.StatusNoContent}, nil
	case "resourceGroups.get":
		g := s.group(r.sub, r.rg)
		if g == nil {
			return nil, errGroupNotFound(r.rg)
		}
		return &reply{status: http.StatusOK, body: g.render()}, nil
	case "resourceGroups.createOrUpdate":
		return s.putGroup(r, now)
	case "resourceGroups.delete":
		return s.deleteGroup(r, now)
	case "operations.get":
		return s.getOperation(r)
	case "operationResults.get":
		return s.getOperationResult(r)
	case "managedClusters.list":
		return s.listClusters(r.sub, "")
	case "managedClusters.listByResourceGroup":
		if s.group(r.sub, r.rg) == nil {
			return nil, errGroupNotFound(r.rg)
		}
		return s.listClusters(r.sub, r.rg)
	case "managedClusters.get":
		c, e := s.findCluster(r)
		if e != nil {
			return nil, e
		}
		return &reply{status: http.StatusOK, header: etagHeader(c.etag), body: s.renderCluster(c)}, nil
	case "managedClusters.createOrUpdate":
		return s.putCluster(r, now)
	case "managedClusters.updateTags":
		return s.patchCluster(r, now)
	case "managedClusters.delete":
		return s.deleteCluster(r, now)
	case "managedClusters.listClusterAdminCredential":
		return s.credentials(r, "clusterAdmin")
	case "managedClusters.listClusterUserCredential":
		return s.credentials(r, "clusterUser")
	case "agentPools.list":
		c, e := s.findCluster(r)
		if e != nil {
			return nil, e
		}
		list := []any{}
		for _, p := range c.pools {
			list = append(list, s.renderPool(c, p))
		}
		return &reply{status: http.StatusOK, body: obj{"value": list}}, nil
	case "agentPools.get":
		c, e := s.findCluster(r)
		if e != nil {
			return nil, e
		}
		p := c.pool(r.pool)
		if p == nil {
			return nil, errPoolNotFound(c, r.pool)
		}
		return &reply{status: http.StatusOK, header: etagHeader(p.etag), body: s.renderPool(c, p)}, nil
	case "agentPools.createOrUpdate":
		return s.putPool(r, now)
	case "agentPools.delete":
		return s.deletePool(r, now)
	}
	return nil, apiErr(http.StatusMethodNotAllowed, "MethodNotAllowed", "The requested resource does not support http method '%s'.", r.method)
}

func etagHeader(etag string) http.Header {
	return http.Header{"Etag": {`"` + etag + `"`}}
}

// decodeBody parses a JSON object body; an empty body is an empty object.
func decodeBody(b []byte) (obj, *APIError) {
	m := obj{}
	if len(strings.TrimSpace(string(b))) == 0 {
		return m, nil
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, apiErr(http.StatusBadRequest, "InvalidRequestContent", "The request content was invalid and could not be deserialized: %v.", err)
	}
	if m == nil {
		m = obj{}
	}
	return m, nil
}

// checkPreconditions applies If-Match and If-None-Match to a resource whose
// current eTag is etag (exists false: the resource is absent).
func checkPreconditions(h http.Header, exists bool, etag, what string) *APIError {
	if im := h.Get("If-Match"); im != "" {
		switch {
		case !exists:
			return apiErr(http.StatusPreconditionFailed, "PreconditionFailed", "Precondition failed: If-Match %s was given but %s does not exist.", im, what)
		case strings.TrimSpace(im) != "*" && unquote(im) != etag:
			return apiErr(http.StatusPreconditionFailed, "PreconditionFailed", "Precondition failed: If-Match %s does not match the current eTag \"%s\" of %s.", im, etag, what)
		}
	}
	if inm := h.Get("If-None-Match"); inm != "" && exists {
		if strings.TrimSpace(inm) == "*" || unquote(inm) == etag {
			return apiErr(http.StatusPreconditionFailed, "PreconditionFailed", "Precondition failed: If-None-Match %s was given but %s exists.", inm, what)
		}
	}
	return nil
}

// unquote strips a weak marker and the quotes of an entity tag, so
// clients may send the eTag of a body as is or quoted.
func unquote(t string) string {
	t = strings.TrimSpace(t)
	t = strings.TrimPrefix(t, "W/")
	return strings.Trim(t, `"`)
}
