// Package metricsapi serves the virtual cluster's resource metrics API
// (metrics.k8s.io/v1beta1, what `kubectl top pod` and `kubectl top node`
// read), as vCluster's metrics proxy does: the virtual API server's
// aggregation layer passes the requests to the syncer (APIService
// v1beta1.metrics.k8s.io → Service kube-system/metrics-server, whose
// endpoint is the control plane pod), which checks the caller's rights in
// the virtual cluster, reads the host's metrics API for the host copies of
// the virtual pods it may see, and answers with the virtual names.
//
// It needs a metrics API on the host (metrics-server; `clustersync dev up`
// runs one). The API is described at
// https://github.com/kubernetes/metrics/blob/master/pkg/apis/metrics/v1beta1/types.go
// and the aggregation layer's front-proxy authentication at
// https://kubernetes.io/docs/tasks/extend-kubernetes/configure-aggregation-layer/.
package metricsapi

import (
	"fmt"
	"strings"
)

// Group and Version are the API the package serves.
const (
	Group   = "metrics.k8s.io"
	Version = "v1beta1"
)

// Route is one request of the metrics API, parsed from its path.
type Route struct {
	// Discovery is set for /apis/metrics.k8s.io and
	// /apis/metrics.k8s.io/v1beta1 (the group and its resource list).
	Discovery bool
	// GroupOnly is set for /apis/metrics.k8s.io.
	GroupOnly bool
	// Resource is "pods" or "nodes".
	Resource string
	// Namespace of pods; "" for nodes, and for pods of every namespace.
	Namespace string
	// Name of one object; "" lists.
	Name string
}

// ParseRoute parses a request path of the metrics API. It returns an error
// naming the path for anything else (the caller answers 404).
func ParseRoute(path string) (Route, error) {
	const prefix = "/apis/" + Group
	notFound := fmt.Errorf("the metrics API has no path %q", path)
	rest, ok := strings.CutPrefix(strings.TrimSuffix(path, "/"), prefix)
	if !ok {
		return Route{}, notFound
	}
	if rest == "" {
		return Route{Discovery: true, GroupOnly: true}, nil
	}
	rest, ok = strings.CutPrefix(rest, "/"+Version)
	if !ok {
		return Route{}, notFound
	}
	parts := strings.Split(strings.TrimPrefix(rest, "/"), "/")
	if rest == "" {
		return Route{Discovery: true}, nil
	}
	for _, p := range parts {
		if p == "" {
			return Route{}, notFound
		}
	}
	switch {
	case parts[0] == "nodes" && len(parts) <= 2:
		r := Route{Resource: "nodes"}
		if len(parts) == 2 {
			r.Name = parts[1]
		}
		return r, nil
	case parts[0] == "pods" && len(parts) == 1:
		return Route{Resource: "pods"}, nil
	case parts[0] == "namespaces" && len(parts) >= 3 && len(parts) <= 4 && parts[2] == "pods":
		r := Route{Resource: "pods", Namespace: parts[1]}
		if len(parts) == 4 {
			r.Name = parts[3]
		}
		return r, nil
	}
	return Route{}, notFound
}
