package ekstest

import (
	"encoding/xml"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The AWS query protocols: CloudFormation (awsquery) and EC2 (ec2query)
// both POST a form (Action=...&Version=...&...) to "/", and answer in XML.
// They differ in the XML: awsquery wraps the result in <ActionResult> and
// puts the request ID in <ResponseMetadata>, errors in
// <ErrorResponse><Error>; ec2query has no result wrapper, a lowerCamel
// <requestId>, and errors in <Response><Errors><Error>.

// API versions sent in the Version form field.
const (
	cloudFormationVersion = "2010-05-15"
	ec2Version            = "2016-11-15"
)

// XML namespaces of the responses.
const (
	cloudFormationNS = "http://cloudformation.amazonaws.com/doc/2010-05-15/"
	ec2NS            = "http://ec2.amazonaws.com/doc/2016-11-15/"
)

// queryError is an error of a query-protocol service: the HTTP status, the
// error code (e.g. "ValidationError", "InvalidLaunchTemplateId.NotFound")
// and the message.
type queryError struct {
	status        int
	code, message string
}

func (e *queryError) Error() string { return e.code + ": " + e.message }

func cfnValidation(format string, a ...any) *queryError {
	return &queryError{status: http.StatusBadRequest, code: "ValidationError", message: fmt.Sprintf(format, a...)}
}

func ec2Err(code, format string, a ...any) *queryError {
	return &queryError{status: http.StatusBadRequest, code: code, message: fmt.Sprintf(format, a...)}
}

// form is a decoded query request body.
type form url.Values

func (f form) str(key string) string { return url.Values(f).Get(key) }

func (f form) has(key string) bool {
	_, ok := f[key]
	return ok
}

// hasPrefix reports whether any key starts with prefix + ".".
func (f form) hasPrefix(prefix string) bool {
	for k := range f {
		if strings.HasPrefix(k, prefix+".") {
			return true
		}
	}
	return false
}

// list returns the key prefixes of the elements of the list at key, in
// index order: "key.member.N" (awsquery) or "key.N" (ec2query, flattened).
func (f form) list(key string) []string {
	byIndex := map[int]string{}
	for k := range f {
		for _, p := range []string{key + ".member.", key + "."} {
			rest, ok := strings.CutPrefix(k, p)
			if !ok {
				continue
			}
			n, _, _ := strings.Cut(rest, ".")
			if i, err := strconv.Atoi(n); err == nil && i > 0 {
				byIndex[i] = p + n
				break
			}
		}
	}
	out := make([]string, 0, len(byIndex))
	for _, i := range slices.Sorted(maps.Keys(byIndex)) {
		out = append(out, byIndex[i])
	}
	return out
}

// strs returns the values of a list of scalars.
func (f form) strs(key string) []string {
	var out []string
	for _, p := range f.list(key) {
		out = append(out, f.str(p))
	}
	return out
}

// tags reads a list of Key/Value pairs at key (ec2query uses "Tag", awsquery
// "Tags"); the keys are in request order.
func (f form) tags(key string) ([]string, map[string]string) {
	var order []string
	m := map[string]string{}
	for _, p := range f.list(key) {
		k := f.str(p + ".Key")
		if _, dup := m[k]; !dup {
			order = append(order, k)
		}
		m[k] = f.str(p + ".Value")
	}
	return order, m
}

// isQuery reports whether r is a query-protocol request: a form POSTed to
// "/". EKS never posts to "/".
func isQuery(r *http.Request) bool {
	return r.Method == http.MethodPost && (r.URL.Path == "/" || r.URL.Path == "") &&
		strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded")
}

// serveQuery answers a CloudFormation or EC2 request.
func (s *Server) serveQuery(w http.ResponseWriter, r *http.Request) {
	body, err := readAll(r)
	if err != nil {
		writeCFNError(w, &queryError{status: http.StatusBadRequest, code: "MalformedQueryString", message: err.Error()})
		return
	}
	values, err := url.ParseQuery(string(body))
	if err != nil {
		writeCFNError(w, &queryError{status: http.StatusBadRequest, code: "MalformedQueryString", message: err.Error()})
		return
	}
	f := form(values)
	action, version := f.str("Action"), f.str("Version")
	isEC2 := version == ec2Version
	writeErr := writeCFNError
	if isEC2 {
		writeErr = writeEC2Error
	}
	known := (isEC2 && slices.Contains(ec2Actions, action)) || (version == cloudFormationVersion && slices.Contains(cloudFormationActions, action))
	s.mu.Lock()
	defer s.mu.Unlock()
	if !known {
		s.calls["Unknown"]++
		writeErr(w, &queryError{status: http.StatusBadRequest, code: "InvalidAction",
			message: fmt.Sprintf("The action %s is not valid for version %q in the emulator", action, version)})
		return
	}
	s.calls[action]++
	if f := s.faults[action]; f != nil {
		f.n--
		if f.n <= 0 {
			delete(s.faults, action)
		}
		status := f.status
		if status == 0 {
			status = http.StatusBadRequest
		}
		msg := "injected fault"
		switch f.errType {
		case "Throttling", "ThrottlingException":
			msg = "Rate exceeded"
		case "RequestLimitExceeded":
			msg = "Request limit exceeded."
		}
		writeErr(w, &queryError{status: status, code: f.errType, message: msg})
		return
	}
	now := s.settle()
	if isEC2 {
		out, qerr := s.ec2Dispatch(action, f, now)
		if qerr != nil {
			writeEC2Error(w, qerr)
			return
		}
		out.XMLName = xml.Name{Local: action + "Response"}
		out.Xmlns, out.RequestID = ec2NS, newUUID()
		writeXML(w, out)
		return
	}
	result, qerr := s.cfnDispatch(action, f, now)
	if qerr != nil {
		writeCFNError(w, qerr)
		return
	}
	out := cfnResponse{XMLName: xml.Name{Local: action + "Response"}, Xmlns: cloudFormationNS, RequestID: newUUID()}
	if result != nil {
		result.XMLName = xml.Name{Local: action + "Result"}
		out.Result = result
	}
	writeXML(w, out)
}

func writeXML(w http.ResponseWriter, v any) {
	b, err := xml.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(xml.Header))
	_, _ = w.Write(b)
}

// writeCFNError writes an awsquery error: <ErrorResponse><Error>.
func writeCFNError(w http.ResponseWriter, e *queryError) {
	type errorXML struct {
		Type    string `xml:"Type"`
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
	}
	body := struct {
		XMLName   xml.Name `xml:"ErrorResponse"`
		Xmlns     string   `xml:"xmlns,attr"`
		Error     errorXML `xml:"Error"`
		RequestID string   `xml:"RequestId"`
	}{Xmlns: cloudFormationNS, Error: errorXML{Type: "Sender", Code: e.code, Message: e.message}, RequestID: newUUID()}
	if e.status >= 500 {
		body.Error.Type = "Receiver"
	}
	b, _ := xml.Marshal(body)
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(e.status)
	_, _ = w.Write(b)
}

// writeEC2Error writes an ec2query error: <Response><Errors><Error>.
func writeEC2Error(w http.ResponseWriter, e *queryError) {
	type errorXML struct {
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
	}
	body := struct {
		XMLName   xml.Name   `xml:"Response"`
		Errors    []errorXML `xml:"Errors>Error"`
		RequestID string     `xml:"RequestID"`
	}{Errors: []errorXML{{Code: e.code, Message: e.message}}, RequestID: newUUID()}
	b, _ := xml.Marshal(body)
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	w.WriteHeader(e.status)
	_, _ = w.Write([]byte(xml.Header))
	_, _ = w.Write(b)
}

// isoTime formats a timestamp as the query protocols do (ISO 8601, UTC,
// milliseconds).
func isoTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
