package ekstest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// APIError is an EKS error as the emulator sends it: the HTTP status, the
// error type (X-Amzn-ErrorType header, e.g. "ResourceNotFoundException") and
// the message (JSON body {"message": ...}). The console API returns it too.
type APIError struct {
	// Status is the HTTP status code.
	Status int
	// Type is the EKS error shape name.
	Type string
	// Message is the human-readable message.
	Message string
	// ClusterName, NodegroupName and AddonName are echoed in the body as
	// EKS does for ResourceInUseException and ResourceNotFoundException.
	ClusterName, NodegroupName, AddonName string
}

// Error implements error.
func (e *APIError) Error() string { return e.Type + ": " + e.Message }

func errNotFound(format string, a ...any) *APIError {
	return &APIError{Status: http.StatusNotFound, Type: "ResourceNotFoundException", Message: fmt.Sprintf(format, a...)}
}

func errInUse(format string, a ...any) *APIError {
	return &APIError{Status: http.StatusConflict, Type: "ResourceInUseException", Message: fmt.Sprintf(format, a...)}
}

func errInvalid(format string, a ...any) *APIError {
	return &APIError{Status: http.StatusBadRequest, Type: "InvalidParameterException", Message: fmt.Sprintf(format, a...)}
}

func errRequest(format string, a ...any) *APIError {
	return &APIError{Status: http.StatusBadRequest, Type: "InvalidRequestException", Message: fmt.Sprintf(format, a...)}
}

type route struct {
	op     string
	params []string
}

// resolve maps method + escaped path to an operation and its path labels.
func resolve(method, escapedPath string) (route, bool) {
	raw := strings.Split(strings.Trim(escapedPath, "/"), "/")
	seg := make([]string, len(raw))
	for i, r := range raw {
		v, err := url.PathUnescape(r)
		if err != nil {
			return route{}, false
		}
		seg[i] = v
	}
	n := len(seg)
	switch {
	case n == 2 && seg[0] == "tags":
		switch method {
		case http.MethodGet:
			return route{"ListTagsForResource", seg[1:]}, true
		case http.MethodPost:
			return route{"TagResource", seg[1:]}, true
		case http.MethodDelete:
			return route{"UntagResource", seg[1:]}, true
		}
	case n >= 1 && seg[0] == "clusters":
		switch {
		case n == 1 && method == http.MethodGet:
			return route{"ListClusters", nil}, true
		case n == 1 && method == http.MethodPost:
			return route{"CreateCluster", nil}, true
		case n == 2 && method == http.MethodGet:
			return route{"DescribeCluster", seg[1:]}, true
		case n == 2 && method == http.MethodDelete:
			return route{"DeleteCluster", seg[1:]}, true
		case n == 3 && seg[2] == "update-config" && method == http.MethodPost:
			return route{"UpdateClusterConfig", seg[1:2]}, true
		case n == 3 && seg[2] == "updates" && method == http.MethodPost:
			return route{"UpdateClusterVersion", seg[1:2]}, true
		case n == 3 && seg[2] == "updates" && method == http.MethodGet:
			return route{"ListUpdates", seg[1:2]}, true
		case n == 4 && seg[2] == "updates" && method == http.MethodGet:
			return route{"DescribeUpdate", []string{seg[1], seg[3]}}, true
		case n == 3 && seg[2] == "node-groups" && method == http.MethodPost:
			return route{"CreateNodegroup", seg[1:2]}, true
		case n == 3 && seg[2] == "node-groups" && method == http.MethodGet:
			return route{"ListNodegroups", seg[1:2]}, true
		case n == 4 && seg[2] == "node-groups" && method == http.MethodGet:
			return route{"DescribeNodegroup", []string{seg[1], seg[3]}}, true
		case n == 4 && seg[2] == "node-groups" && method == http.MethodDelete:
			return route{"DeleteNodegroup", []string{seg[1], seg[3]}}, true
		case n == 5 && seg[2] == "node-groups" && seg[4] == "update-config" && method == http.MethodPost:
			return route{"UpdateNodegroupConfig", []string{seg[1], seg[3]}}, true
		case n == 5 && seg[2] == "node-groups" && seg[4] == "update-version" && method == http.MethodPost:
			return route{"UpdateNodegroupVersion", []string{seg[1], seg[3]}}, true
		case n == 3 && seg[2] == "addons" && method == http.MethodPost:
			return route{"CreateAddon", seg[1:2]}, true
		case n == 3 && seg[2] == "addons" && method == http.MethodGet:
			return route{"ListAddons", seg[1:2]}, true
		case n == 4 && seg[2] == "addons" && method == http.MethodGet:
			return route{"DescribeAddon", []string{seg[1], seg[3]}}, true
		case n == 4 && seg[2] == "addons" && method == http.MethodDelete:
			return route{"DeleteAddon", []string{seg[1], seg[3]}}, true
		}
	}
	return route{}, false
}

// Handler returns the HTTP handler: the EKS REST-JSON protocol on the EKS
// paths, and CloudFormation and EC2 (query protocols) on POST /.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(s.serveHTTP)
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if isQuery(r) {
		s.serveQuery(w, r)
		return
	}
	rt, ok := resolve(r.Method, r.URL.EscapedPath())
	if !ok {
		s.mu.Lock()
		s.calls["Unknown"]++
		s.mu.Unlock()
		writeError(w, &APIError{Status: http.StatusNotFound, Type: "UnknownOperationException", Message: "unknown operation " + r.Method + " " + r.URL.Path})
		return
	}
	var body []byte
	if r.Body != nil {
		var err error
		body, err = readAll(r)
		if err != nil {
			writeError(w, &APIError{Status: http.StatusBadRequest, Type: "BadRequestException", Message: err.Error()})
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[rt.op]++
	if f := s.faults[rt.op]; f != nil {
		f.n--
		if f.n <= 0 {
			delete(s.faults, rt.op)
		}
		status := f.status
		if status == 0 {
			status = http.StatusBadRequest
		}
		msg := "injected fault"
		if f.errType == "ThrottlingException" {
			msg = "Rate exceeded"
		}
		writeError(w, &APIError{Status: status, Type: f.errType, Message: msg})
		return
	}
	now := s.settle()
	out, apiErr := s.dispatch(rt, r.URL.Query(), body, now)
	if apiErr != nil {
		writeError(w, apiErr)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-RequestId", newUUID())
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(out)
}

func readAll(r *http.Request) ([]byte, error) {
	defer r.Body.Close()
	return io.ReadAll(r.Body)
}

func writeError(w http.ResponseWriter, e *APIError) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-ErrorType", e.Type)
	w.Header().Set("X-Amzn-RequestId", newUUID())
	w.WriteHeader(e.Status)
	body := map[string]string{"message": e.Message}
	if e.ClusterName != "" {
		body["clusterName"] = e.ClusterName
	}
	if e.NodegroupName != "" {
		body["nodegroupName"] = e.NodegroupName
	}
	if e.AddonName != "" {
		body["addonName"] = e.AddonName
	}
	_ = json.NewEncoder(w).Encode(body)
}

func decode(body []byte, v any) *APIError {
	if len(strings.TrimSpace(string(body))) == 0 {
		return nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		return &APIError{Status: http.StatusBadRequest, Type: "BadRequestException", Message: "malformed JSON body: " + err.Error()}
	}
	return nil
}

func (s *Server) dispatch(rt route, q url.Values, body []byte, now time.Time) (any, *APIError) {
	p := rt.params
	switch rt.op {
	case "CreateCluster":
		var req createClusterRequest
		if err := decode(body, &req); err != nil {
			return nil, err
		}
		c, err := s.createCluster(req, now)
		if err != nil {
			return nil, err
		}
		return map[string]any{"cluster": s.wireCluster(c)}, nil
	case "ListClusters":
		names := slices.Sorted(maps.Keys(s.state))
		page, next, err := paginate(names, q)
		if err != nil {
			return nil, err
		}
		return map[string]any{"clusters": page, "nextToken": next}, nil
	case "DescribeCluster":
		c, err := s.getCluster(p[0])
		if err != nil {
			return nil, err
		}
		return map[string]any{"cluster": s.wireCluster(c)}, nil
	case "DeleteCluster":
		c, err := s.deleteCluster(p[0], now)
		if err != nil {
			return nil, err
		}
		return map[string]any{"cluster": s.wireCluster(c)}, nil
	case "UpdateClusterConfig":
		var req updateClusterConfigRequest
		if err := decode(body, &req); err != nil {
			return nil, err
		}
		u, err := s.updateClusterConfig(p[0], req, now)
		if err != nil {
			return nil, err
		}
		return map[string]any{"update": u.wire()}, nil
	case "UpdateClusterVersion":
		var req updateClusterVersionRequest
		if err := decode(body, &req); err != nil {
			return nil, err
		}
		u, err := s.updateClusterVersion(p[0], req.Version, req.ClientRequestToken, now)
		if err != nil {
			return nil, err
		}
		return map[string]any{"update": u.wire()}, nil
	case "ListUpdates":
		c, err := s.getCluster(p[0])
		if err != nil {
			return nil, err
		}
		ng, ad := q.Get("nodegroupName"), q.Get("addonName")
		if ng != "" && c.nodegroups[ng] == nil {
			return nil, errNotFound("No node group found for name: %s.", ng)
		}
		if ad != "" && c.addons[ad] == nil {
			return nil, errNotFound("No addon: %s found in cluster: %s", ad, c.name)
		}
		var ids []string
		for _, u := range c.updates {
			if u.nodegroup == ng && u.addon == ad {
				ids = append(ids, u.id)
			}
		}
		page, next, perr := paginate(ids, q)
		if perr != nil {
			return nil, perr
		}
		return map[string]any{"updateIds": page, "nextToken": next}, nil
	case "DescribeUpdate":
		c, err := s.getCluster(p[0])
		if err != nil {
			return nil, err
		}
		ng, ad := q.Get("nodegroupName"), q.Get("addonName")
		for _, u := range c.updates {
			if u.id == p[1] && u.nodegroup == ng && u.addon == ad {
				return map[string]any{"update": u.wire()}, nil
			}
		}
		return nil, errNotFound("No update found for ID: %s", p[1])
	case "CreateNodegroup":
		var req createNodegroupRequest
		if err := decode(body, &req); err != nil {
			return nil, err
		}
		c, ng, err := s.createNodegroup(p[0], req, now)
		if err != nil {
			return nil, err
		}
		return map[string]any{"nodegroup": ng.wire(c)}, nil
	case "ListNodegroups":
		c, err := s.getCluster(p[0])
		if err != nil {
			return nil, err
		}
		page, next, perr := paginate(slices.Sorted(maps.Keys(c.nodegroups)), q)
		if perr != nil {
			return nil, perr
		}
		return map[string]any{"nodegroups": page, "nextToken": next}, nil
	case "DescribeNodegroup":
		c, ng, err := s.getNodegroup(p[0], p[1])
		if err != nil {
			return nil, err
		}
		return map[string]any{"nodegroup": ng.wire(c)}, nil
	case "DeleteNodegroup":
		c, ng, err := s.deleteNodegroup(p[0], p[1], now)
		if err != nil {
			return nil, err
		}
		return map[string]any{"nodegroup": ng.wire(c)}, nil
	case "UpdateNodegroupConfig":
		var req updateNodegroupConfigRequest
		if err := decode(body, &req); err != nil {
			return nil, err
		}
		u, err := s.updateNodegroupConfig(p[0], p[1], req, now)
		if err != nil {
			return nil, err
		}
		return map[string]any{"update": u.wire()}, nil
	case "UpdateNodegroupVersion":
		var req updateNodegroupVersionRequest
		if err := decode(body, &req); err != nil {
			return nil, err
		}
		u, err := s.updateNodegroupVersion(p[0], p[1], req, now)
		if err != nil {
			return nil, err
		}
		return map[string]any{"update": u.wire()}, nil
	case "CreateAddon":
		var req createAddonRequest
		if err := decode(body, &req); err != nil {
			return nil, err
		}
		c, a, err := s.createAddon(p[0], req, now)
		if err != nil {
			return nil, err
		}
		return map[string]any{"addon": a.wire(c)}, nil
	case "ListAddons":
		c, err := s.getCluster(p[0])
		if err != nil {
			return nil, err
		}
		page, next, perr := paginate(slices.Sorted(maps.Keys(c.addons)), q)
		if perr != nil {
			return nil, perr
		}
		return map[string]any{"addons": page, "nextToken": next}, nil
	case "DescribeAddon":
		c, a, err := s.getAddon(p[0], p[1])
		if err != nil {
			return nil, err
		}
		return map[string]any{"addon": a.wire(c)}, nil
	case "DeleteAddon":
		c, a, err := s.getAddon(p[0], p[1])
		if err != nil {
			return nil, err
		}
		if a.status != StatusDeleting {
			a.status = StatusDeleting
			a.modifiedAt = now
			a.deleteAt = now.Add(s.opts.DeleteDelay)
		}
		return map[string]any{"addon": a.wire(c)}, nil
	case "ListTagsForResource":
		tags, err := s.tagsFor(p[0])
		if err != nil {
			return nil, err
		}
		return map[string]any{"tags": copyMap(*tags)}, nil
	case "TagResource":
		var req tagResourceRequest
		if err := decode(body, &req); err != nil {
			return nil, err
		}
		if len(req.Tags) == 0 {
			return nil, &APIError{Status: http.StatusBadRequest, Type: "BadRequestException", Message: "tags must not be empty"}
		}
		if err := validateTags(req.Tags); err != nil {
			return nil, err
		}
		tags, err := s.tagsFor(p[0])
		if err != nil {
			return nil, err
		}
		for k, v := range req.Tags {
			(*tags)[k] = v
		}
		return map[string]any{}, nil
	case "UntagResource":
		keys := q["tagKeys"]
		if len(keys) == 0 {
			return nil, &APIError{Status: http.StatusBadRequest, Type: "BadRequestException", Message: "tagKeys must not be empty"}
		}
		tags, err := s.tagsFor(p[0])
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			delete(*tags, k)
		}
		return map[string]any{}, nil
	}
	return nil, &APIError{Status: http.StatusNotFound, Type: "UnknownOperationException", Message: rt.op}
}

// paginate pages a sorted list with maxResults (1..100, default 100) and an
// opaque nextToken (base64 of the offset).
func paginate(items []string, q url.Values) ([]string, *string, *APIError) {
	max := 100
	if v := q.Get("maxResults"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return nil, nil, errInvalid("maxResults must be between 1 and 100")
		}
		max = n
	}
	start := 0
	if t := q.Get("nextToken"); t != "" {
		b, err := base64.RawURLEncoding.DecodeString(t)
		if err != nil {
			return nil, nil, errInvalid("The nextToken provided is invalid.")
		}
		n, err := strconv.Atoi(strings.TrimPrefix(string(b), "offset:"))
		if err != nil || n < 0 || n > len(items) {
			return nil, nil, errInvalid("The nextToken provided is invalid.")
		}
		start = n
	}
	end := min(start+max, len(items))
	page := append([]string{}, items[start:end]...)
	if end < len(items) {
		tok := base64.RawURLEncoding.EncodeToString([]byte("offset:" + strconv.Itoa(end)))
		return page, &tok, nil
	}
	return page, nil, nil
}

var nameRE = regexp.MustCompile(`^[0-9A-Za-z][A-Za-z0-9\-_]*$`)
var versionRE = regexp.MustCompile(`^1\.(\d+)$`)

func minor(v string) (int, bool) {
	m := versionRE.FindStringSubmatch(v)
	if m == nil {
		return 0, false
	}
	n, _ := strconv.Atoi(m[1])
	return n, true
}

func validateTags(tags map[string]string) *APIError {
	for k, v := range tags {
		if k == "" || len(k) > 128 || len(v) > 256 {
			return errInvalid("Tag key %q or value is invalid", k)
		}
		if strings.HasPrefix(strings.ToLower(k), "aws:") {
			return errInvalid("Tag keys with the aws: prefix are reserved: %s", k)
		}
	}
	return nil
}
