package controlplane

import (
	"flag"
	"slices"
	"strings"
	"testing"

	"go.etcd.io/etcd/server/v3/embed"

	"github.com/clustersync/clustersync/internal/virtual/config"
)

func TestCheckExtraArgs(t *testing.T) {
	tests := []struct {
		component string
		args      []string
		want      []string
	}{
		{"apiServer", []string{"--oidc-issuer-url=https://issuer.example.com", "--oidc-client-id=vc", "--audit-log-maxage=7"}, nil},
		{"apiServer", []string{"--etcd-servers=https://elsewhere:2379", "oidc-client-id=vc", "--"}, []string{
			"[0]: --etcd-servers is set by clustersync's control plane", `[1]: "oidc-client-id=vc" is not a flag`, `[2]: "--" is not a flag`}},
		{"controllerManager", []string{"--controllers=*", "--terminated-pod-gc-threshold=100"}, []string{"[0]: --controllers is set"}},
		{"scheduler", []string{"--secure-port=1"}, []string{"[0]: --secure-port is set"}},
	}
	for _, tt := range tests {
		got := CheckExtraArgs(tt.component, tt.args)
		if len(got) != len(tt.want) {
			t.Errorf("%s %v: %v, want %v", tt.component, tt.args, got, tt.want)
			continue
		}
		for i, w := range tt.want {
			if !strings.HasPrefix(got[i], w) {
				t.Errorf("%s %v: problem %d %q, want %q…", tt.component, tt.args, i, got[i], w)
			}
		}
	}
	// Every flag the components are started with that an extra argument may
	// not give is one they are started with; every one of the embedded
	// etcd's is a flag of etcd's.
	all := slices.Concat(apiServerArgs(Layout{}, Options{}, Ports{}, "", EtcdTLS{}), controllerManagerArgs(Layout{}, Ports{}, "", false), schedulerArgs(Layout{}, Ports{}, ""))
	etcdFlags := flag.NewFlagSet("etcd", flag.ContinueOnError)
	embed.NewConfig().AddFlags(etcdFlags)
	for component, flags := range ownedFlags() {
		for _, f := range flags {
			if component == "etcd" {
				if etcdFlags.Lookup(f) == nil {
					t.Errorf("etcd: owned flag --%s is not a flag of etcd's", f)
				}
				continue
			}
			if f == "advertise-address" || f == "bind-address" {
				continue
			}
			if !slices.ContainsFunc(all, func(a string) bool { return strings.HasPrefix(a, "--"+f+"=") }) {
				t.Errorf("%s: owned flag --%s is not one the components are started with", component, f)
			}
		}
	}
}

// The embedded etcd's extra flags: those bound to its configuration apply,
// over clustersync's; the flags clustersync sets, those etcd reads only
// from its command line and what is not a flag are refused by index.
func TestEtcdArgs(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"--snapshot-count=5000", "--quota-backend-bytes=4294967296", "--auto-compaction-retention=1h", "--heartbeat-interval=200"}, nil},
		{[]string{"--data-dir=/elsewhere", "--snapshot-count=1", "--cert-file=/x"}, []string{"[0]: --data-dir is set by", "[2]: --cert-file is set by"}},
		{[]string{"--snapshot-count=1", "--listen-client-urls=http://0.0.0.0:2379"}, []string{"[1]: --listen-client-urls is read from etcd's own command line only"}},
		{[]string{"snapshot-count=1"}, []string{`[0]: "snapshot-count=1" is not a flag`}},
		{[]string{"--no-such-flag=1"}, []string{": flag provided but not defined: -no-such-flag"}},
		{[]string{"--snapshot-count=many"}, []string{`: invalid value "many" for flag -snapshot-count`}},
	}
	for _, tt := range tests {
		got := CheckEtcdArgs(tt.args)
		if len(got) != len(tt.want) {
			t.Errorf("%v: %v, want %v", tt.args, got, tt.want)
			continue
		}
		for i, w := range tt.want {
			if !strings.HasPrefix(got[i], w) {
				t.Errorf("%v: problem %d %q, want %q…", tt.args, i, got[i], w)
			}
		}
	}
	// The flags change their fields only: clustersync's others (its
	// certificates, log level, data folder, quota) stay.
	l := Layout{Dir: "/data"}
	cfg, err := etcdConfig(l, 2379, 2380, "stderr", nil, []string{"--snapshot-count=5000", "--max-request-bytes=3145728"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.SnapshotCount != 5000 || cfg.MaxRequestBytes != 3145728 || cfg.QuotaBackendBytes != 2<<30 || cfg.Dir != l.EtcdData() ||
		cfg.ClientTLSInfo.CertFile != l.PKI("etcd-server.crt") || !cfg.ClientTLSInfo.ClientCertAuth || cfg.LogLevel != "warn" {
		t.Errorf("after the flags: snapshot count %d, max request bytes %d, quota %d, dir %q, client TLS %+v, log level %q; want the flags' and clustersync's others",
			cfg.SnapshotCount, cfg.MaxRequestBytes, cfg.QuotaBackendBytes, cfg.Dir, cfg.ClientTLSInfo, cfg.LogLevel)
	}
	if cfg, err := etcdConfig(l, 2379, 2380, "stderr", nil, []string{"--quota-backend-bytes=3221225472"}); err != nil || cfg.QuotaBackendBytes != 3221225472 {
		t.Errorf("--quota-backend-bytes over clustersync's quota: %v, %d", err, cfg.QuotaBackendBytes)
	}
	// snapshotCount comes first, extraArgs after it (the later wins).
	c := &config.Config{}
	c.ControlPlane.BackingStore.Etcd.Embedded.SnapshotCount = 100
	c.ControlPlane.BackingStore.Etcd.Embedded.ExtraArgs = []string{"--snapshot-count=200"}
	if got := ExtraArgsOf(c).Etcd; !slices.Equal(got, []string{"--snapshot-count=100", "--snapshot-count=200"}) {
		t.Errorf("ExtraArgsOf: etcd %v", got)
	}
}
