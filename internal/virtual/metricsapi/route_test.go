package metricsapi

import (
	"strings"
	"testing"
)

func TestParseRoute(t *testing.T) {
	tests := []struct {
		path    string
		want    Route
		wantErr bool
	}{
		{path: "/apis/metrics.k8s.io", want: Route{Discovery: true, GroupOnly: true}},
		{path: "/apis/metrics.k8s.io/", want: Route{Discovery: true, GroupOnly: true}},
		{path: "/apis/metrics.k8s.io/v1beta1", want: Route{Discovery: true}},
		{path: "/apis/metrics.k8s.io/v1beta1/pods", want: Route{Resource: "pods"}},
		{path: "/apis/metrics.k8s.io/v1beta1/namespaces/demo/pods", want: Route{Resource: "pods", Namespace: "demo"}},
		{path: "/apis/metrics.k8s.io/v1beta1/namespaces/demo/pods/web-0", want: Route{Resource: "pods", Namespace: "demo", Name: "web-0"}},
		{path: "/apis/metrics.k8s.io/v1beta1/nodes", want: Route{Resource: "nodes"}},
		{path: "/apis/metrics.k8s.io/v1beta1/nodes/node-1", want: Route{Resource: "nodes", Name: "node-1"}},
		{path: "/apis/metrics.k8s.io/v1", wantErr: true},
		{path: "/apis/metrics.k8s.io/v1beta1/services", wantErr: true},
		{path: "/apis/metrics.k8s.io/v1beta1/pods/web-0", wantErr: true}, // a pod needs its namespace
		{path: "/apis/metrics.k8s.io/v1beta1/namespaces/demo", wantErr: true},
		{path: "/apis/metrics.k8s.io/v1beta1/namespaces/demo/pods/web-0/log", wantErr: true},
		{path: "/apis/metrics.k8s.io/v1beta1/namespaces//pods", wantErr: true},
		{path: "/apis/metrics.k8s.io/v1beta1/nodes/a/b", wantErr: true},
		{path: "/apis/metrics.k8s.io.evil/v1beta1/pods", wantErr: true},
		{path: "/api/v1/pods", wantErr: true},
	}
	for _, tt := range tests {
		got, err := ParseRoute(tt.path)
		if tt.wantErr {
			if err == nil || !strings.Contains(err.Error(), tt.path) {
				t.Errorf("ParseRoute(%q) = %+v, %v; want an error naming the path", tt.path, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseRoute(%q) = %+v, %v; want %+v", tt.path, got, err, tt.want)
		}
	}
}
