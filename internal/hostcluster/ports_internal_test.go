package hostcluster

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/clustersync/clustersync/internal/ports"
)

func TestKwokPorts(t *testing.T) {
	want := componentPorts{EtcdPeer: 20000, Etcd: 20001, KubeAPIServer: 20002, KwokController: 20003, KubeControllerManager: 20004, KubeScheduler: 20005}
	// kwokctl.yaml as kwokctlConfig writes it reads back the same.
	c := &Cluster{ServiceCIDR: "10.96.0.0/16"}
	cfg, err := c.kwokctlConfig(want)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := kwokPorts([]byte(cfg)); err != nil || got != want {
		t.Errorf("kwokPorts(kwokctlConfig) = %+v, %v; want %+v\n%s", got, err, want, cfg)
	}
	// kwok.yaml holds several documents; the KwokctlConfiguration's count.
	kwok := "apiVersion: config.kwok.x-k8s.io/v1alpha1\nkind: KwokConfiguration\noptions:\n  etcdPort: 1\n---\n" +
		"apiVersion: config.kwok.x-k8s.io/v1alpha1\nkind: KwokctlConfiguration\noptions:\n  etcdPeerPort: 32766\n  etcdPort: 32765\n  kubeApiserverPort: 32764\n  kwokControllerPort: 32763\n  kubeControllerManagerPort: 32762\n  kubeSchedulerPort: 32761\n  runtime: binary\n---\nkind: Stage\n"
	got, err := kwokPorts([]byte(kwok))
	old := componentPorts{EtcdPeer: 32766, Etcd: 32765, KubeAPIServer: 32764, KwokController: 32763, KubeControllerManager: 32762, KubeScheduler: 32761}
	if err != nil || got != old {
		t.Errorf("kwokPorts(kwok.yaml) = %+v, %v; want %+v", got, err, old)
	}
	if ps := old.of("etcd"); len(ps) != 2 || ps[0] != 32765 || ps[1] != 32766 {
		t.Errorf("etcd's ports %v", ps)
	}
	if n := len(old.all()); n != numPorts {
		t.Errorf("all() has %d ports, want %d", n, numPorts)
	}
}

// TestPortsInUse checks the failure message of a component that could not
// bind: who holds the port and which state folder leases it.
func TestPortsInUse(t *testing.T) {
	owner := t.TempDir()
	r := &ports.Registry{Dir: filepath.Join(t.TempDir(), "leases"), Band: ports.DefaultBand(), InUse: func(p int) bool { return !ports.Bindable(p) }}
	ps, err := r.Reserve(t.Context(), owner, 1)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(ps[0]))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c := &Cluster{ports: r}
	lines := []string{
		`E1127 listener.go:12] "Unhandled Error" err="failed to listen on 0.0.0.0:` + strconv.Itoa(ps[0]) + `: listen tcp 0.0.0.0:` + strconv.Itoa(ps[0]) + `: bind: address already in use"`,
		"another line",
	}
	got := c.portsInUse(lines)
	if len(got) != 1 || !strings.Contains(got[0], "pid "+strconv.Itoa(os.Getpid())) || !strings.Contains(got[0], "leased to "+owner) {
		t.Errorf("portsInUse = %q, want this process and the lease's owner %s", got, owner)
	}
	if got := c.portsInUse([]string{"no bind error"}); len(got) != 0 {
		t.Errorf("portsInUse of no bind error = %q", got)
	}
}
