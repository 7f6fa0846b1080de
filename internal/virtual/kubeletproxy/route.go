// Package kubeletproxy is the kubelet endpoint of a virtual cluster's fake
// nodes. The virtual API server sends `kubectl logs`, `exec`, `attach` and
// `port-forward` to the kubelet of the pod's node; every fake node names
// this server (status.addresses InternalIP, status.daemonEndpoints), which
// serves those requests by calling the same subresource of the pod's host
// copy on the host API server, with the syncer's host credentials — as
// vCluster's syncer does. It serves only pods of its own virtual cluster:
// the host pod must carry this virtual cluster's managed-by label and the
// virtual pod's name and namespace, so a tenant can never reach a pod that
// is not its own through it.
package kubeletproxy

import (
	"fmt"
	"net/url"
	"strings"
)

// Subresource is the kind of a kubelet request, named as the pod
// subresource of the host API that serves it.
type Subresource string

// The kubelet requests the proxy serves.
const (
	Log         Subresource = "log"
	Exec        Subresource = "exec"
	Attach      Subresource = "attach"
	PortForward Subresource = "portforward"
)

// Route is one kubelet request, translated for the host API.
type Route struct {
	Subresource Subresource
	// Namespace and Pod name the virtual pod.
	Namespace, Pod string
	// Query is the host API's query for the subresource.
	Query url.Values
}

// kubeletPaths are the kubelet API's path prefixes (the kubelet's
// server.go, and the locations kube-apiserver builds in
// pkg/registry/core/pod/strategy.go).
var kubeletPaths = map[string]Subresource{
	"containerLogs": Log, "exec": Exec, "attach": Attach, "portForward": PortForward,
}

// streamParams maps the kubelet's stream query parameters to the host
// API's: kube-apiserver calls the kubelet with input/output/error, the API
// takes stdin/stdout/stderr; port-forward's port becomes ports.
var streamParams = map[string]string{
	"input": "stdin", "output": "stdout", "error": "stderr", "tty": "tty", "command": "command", "port": "ports",
}

// logParams are the query parameters of a log request, the same on both
// sides.
var logParams = []string{"follow", "previous", "timestamps", "sinceSeconds", "sinceTime", "tailLines", "limitBytes", "stream"}

// ParseRoute reads a kubelet request path and query:
//
//	/containerLogs/NAMESPACE/POD/CONTAINER
//	/exec/NAMESPACE/POD[/UID]/CONTAINER     /attach/… likewise
//	/portForward/NAMESPACE/POD[/UID]
//
// It returns an error naming the path when it is none of these; query
// parameters the host API does not take are dropped.
func ParseRoute(path string, query url.Values) (Route, error) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	sub, ok := kubeletPaths[parts[0]]
	if !ok {
		return Route{}, fmt.Errorf("kubelet path %q: only containerLogs, exec, attach and portForward are served", path)
	}
	for _, p := range parts[1:] {
		if p == "" || p == "." || p == ".." {
			return Route{}, fmt.Errorf("kubelet path %q: empty or relative segment", path)
		}
	}
	var container string
	switch {
	case sub == PortForward && (len(parts) == 3 || len(parts) == 4):
	case sub == Log && len(parts) == 4:
		container = parts[3]
	case (sub == Exec || sub == Attach) && (len(parts) == 4 || len(parts) == 5):
		container = parts[len(parts)-1]
	default:
		return Route{}, fmt.Errorf("kubelet path %q: want /%s/NAMESPACE/POD%s", path, parts[0], map[Subresource]string{
			Log: "/CONTAINER", Exec: "[/UID]/CONTAINER", Attach: "[/UID]/CONTAINER", PortForward: "[/UID]",
		}[sub])
	}
	r := Route{Subresource: sub, Namespace: parts[1], Pod: parts[2], Query: url.Values{}}
	if container != "" {
		r.Query.Set("container", container)
	}
	if sub == Log {
		for _, k := range logParams {
			if v, ok := query[k]; ok {
				r.Query[k] = v
			}
		}
		return r, nil
	}
	for k, v := range query {
		if hk, ok := streamParams[k]; ok {
			r.Query[hk] = v
		}
	}
	return r, nil
}

// HostPath is the host API path of the route's subresource on host pod
// namespace/name.
func (r Route) HostPath(namespace, name string) string {
	return fmt.Sprintf("/api/v1/namespaces/%s/pods/%s/%s", url.PathEscape(namespace), url.PathEscape(name), r.Subresource)
}
