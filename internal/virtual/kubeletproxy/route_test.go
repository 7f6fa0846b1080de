package kubeletproxy

import (
	"net/url"
	"reflect"
	"strings"
	"testing"
)

func TestParseRoute(t *testing.T) {
	tests := []struct {
		name, path, query string
		want              Route
		wantErr           string
	}{
		{
			name: "logs keep their options", path: "/containerLogs/team/web-0/app",
			query: "follow=true&tailLines=10&timestamps=true&unknown=1",
			want: Route{Subresource: Log, Namespace: "team", Pod: "web-0",
				Query: url.Values{"container": {"app"}, "follow": {"true"}, "tailLines": {"10"}, "timestamps": {"true"}}},
		},
		{
			name: "exec: the kubelet's stream names become the API's", path: "/exec/team/web-0/app",
			query: "command=sh&command=-c&command=id&input=1&output=1&error=1&tty=1",
			want: Route{Subresource: Exec, Namespace: "team", Pod: "web-0", Query: url.Values{
				"container": {"app"}, "command": {"sh", "-c", "id"}, "stdin": {"1"}, "stdout": {"1"}, "stderr": {"1"}, "tty": {"1"}}},
		},
		{
			name: "exec with the pod UID", path: "/exec/team/web-0/0b0a-uid/app", query: "command=date&output=1",
			want: Route{Subresource: Exec, Namespace: "team", Pod: "web-0",
				Query: url.Values{"container": {"app"}, "command": {"date"}, "stdout": {"1"}}},
		},
		{
			name: "attach", path: "/attach/team/web-0/app", query: "output=1&error=1",
			want: Route{Subresource: Attach, Namespace: "team", Pod: "web-0",
				Query: url.Values{"container": {"app"}, "stdout": {"1"}, "stderr": {"1"}}},
		},
		{
			name: "port-forward", path: "/portForward/team/web-0", query: "port=8080&port=9090",
			want: Route{Subresource: PortForward, Namespace: "team", Pod: "web-0", Query: url.Values{"ports": {"8080", "9090"}}},
		},
		{name: "other kubelet APIs are not served", path: "/stats/summary", wantErr: "only containerLogs"},
		{name: "pods list", path: "/pods", wantErr: "only containerLogs"},
		{name: "logs without a container", path: "/containerLogs/team/web-0", wantErr: "want /containerLogs/NAMESPACE/POD/CONTAINER"},
		{name: "too many segments", path: "/exec/team/web-0/uid/app/more", wantErr: "want /exec/NAMESPACE/POD[/UID]/CONTAINER"},
		{name: "a relative segment", path: "/containerLogs/team/../app", wantErr: "relative segment"},
		{name: "an empty segment", path: "/portForward/team//x", wantErr: "empty or relative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseRoute(tt.path, q)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), tt.path) {
					t.Fatalf("error %v, want one naming the path and saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseRoute = %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestHostPath(t *testing.T) {
	r := Route{Subresource: PortForward}
	if got, want := r.HostPath("vc-team", "web-0-x-team-x-vc"), "/api/v1/namespaces/vc-team/pods/web-0-x-team-x-vc/portforward"; got != want {
		t.Errorf("HostPath = %s, want %s", got, want)
	}
}
