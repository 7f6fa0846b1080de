package dns

import (
	"os"
	"strings"
	"testing"
)

// vClusterCorefile is the Corefile vCluster v0.36.1 renders for its
// default values (pkg/coredns/template.go): the one a user copies into
// controlPlane.coredns.overwriteConfig and edits.
const vClusterCorefile = `.:1053 {
    errors
    health
    ready
    rewrite name regex .*\.nodes\.vcluster\.com kubernetes.default.svc.cluster.local
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    hosts /etc/coredns/NodeHosts {
        ttl 60
        reload 15s
        fallthrough
    }
    prometheus :9153
    forward . /etc/resolv.conf
    cache 30
    loop
    reload
    loadbalance
}

import /etc/coredns/custom/*.server`

func TestUserCorefile(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		want    []string // lines the result must hold, trimmed
		notWant []string // lines it must not hold
		wantErr []string // what the error must name
	}{
		{
			name: "vCluster's default Corefile",
			text: vClusterCorefile,
			want: []string{".:1053 {", "health :8180", "ready :8181", "kubernetes cluster.local in-addr.arpa ip6.arpa {",
				"kubeconfig /data/kubeconfig.yaml", "pods insecure", "reload 15s", "import /etc/coredns/custom/*.server",
				`rewrite name regex .*\.nodes\.vcluster\.com kubernetes.default.svc.cluster.local`},
			notWant: []string{"health", "reload"},
		},
		{
			name: "a kubernetes plugin without a block, health with one, vCluster's embedded kubeconfig elsewhere",
			text: "example.org:1053 {\n  kubernetes example.org {\n    kubeconfig /data/vcluster/admin.conf\n  }\n  forward . 10.0.0.10\n}\n" +
				".:1053 {\n  health {\n    lameduck 5s\n  }\n  ready :8181\n  kubernetes cluster.local # the cluster\n  log\n}\n",
			want:    []string{"kubeconfig /data/kubeconfig.yaml", "health :8180 {", "lameduck 5s", "kubernetes cluster.local {", "ready :8181", "log"},
			notWant: []string{"kubeconfig /data/vcluster/admin.conf"},
		},
		{
			name:    "a kubeconfig or endpoint of the user's is kept",
			text:    ".:1053 {\n health :8180\n ready\n kubernetes cluster.local {\n  endpoint https://10.0.0.1:443\n }\n}",
			want:    []string{"endpoint https://10.0.0.1:443", "health :8180"},
			notWant: []string{"kubeconfig /data/kubeconfig.yaml"},
		},
		{
			name:    "port 53",
			text:    ".:53 {\n health\n ready\n}",
			wantErr: []string{`server block ".:53" must listen on port 1053`},
		},
		{
			name:    "no port",
			text:    ". {\n health\n ready\n}",
			wantErr: []string{`server block "." must listen on port 1053`},
		},
		{
			name:    "a plugin not built in, on line 3",
			text:    ".:1053 {\n health\n etcd cluster.local\n ready\n}",
			wantErr: []string{"line 3", `plugin "etcd" is not built into`, "kubernetes"},
		},
		{
			name:    "health on the syncer's port",
			text:    ".:1053 {\n health :8080\n ready\n}",
			wantErr: []string{"line 2", "health listens on :8180"},
		},
		{
			name:    "no ready",
			text:    ".:1053 {\n health\n forward . /etc/resolv.conf\n}",
			wantErr: []string{"needs `health` and `ready`"},
		},
		{
			name:    "unbalanced braces",
			text:    ".:1053 {\n health\n ready\n kubernetes cluster.local {\n",
			wantErr: []string{UserCorefileKey},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := UserCorefile(tt.text, Options{Kubeconfig: "/data/kubeconfig.yaml"})
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("no error; got\n%s", got)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not name %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkLines(t, got, tt.want, tt.notWant)
		})
	}
}

// docs/concepts.md lists the plugins built in, as Plugins gives them.
func TestDocsListThePlugins(t *testing.T) {
	b, err := os.ReadFile("../../../docs/concepts.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Join(strings.Fields(string(b)), " ")
	var quoted []string
	for _, p := range Plugins() {
		quoted = append(quoted, "`"+p+"`")
	}
	if want := "The plugins built in: " + strings.Join(quoted, ", ") + ";"; !strings.Contains(doc, want) {
		t.Errorf("docs/concepts.md does not say %q", want)
	}
}
