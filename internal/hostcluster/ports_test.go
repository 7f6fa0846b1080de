package hostcluster_test

import (
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clustersync/clustersync/internal/hostcluster"
	"github.com/clustersync/clustersync/internal/ports"
)

// TestStoppedClusterKeepsPorts checks that a stopped cluster's ports stay
// its own: a cluster created while it is stopped gets other ports (kwokctl
// alone would hand it the same ones, nothing listening on them, and the
// stopped cluster could not start again), and a port another process took
// meanwhile fails Start at once, naming that process.
func TestStoppedClusterKeepsPorts(t *testing.T) {
	b := requireBinaries(t)
	ctx := t.Context()
	create := func(name string) *hostcluster.Cluster {
		dir := filepath.Join(t.TempDir(), name)
		deleteOnCleanup(t, dir)
		c, err := hostcluster.Create(ctx, hostcluster.Options{Dir: dir, Name: name, Nodes: hostcluster.NoNodes, Binaries: b, Log: testLog{t}})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	portsOf := func(c *hostcluster.Cluster) []int {
		ps, err := c.Ports()
		if err != nil || len(ps) != 6 {
			t.Fatalf("%s: ports %v, %v; want 6", c.Name, ps, err)
		}
		return ps
	}
	a := create("a")
	pa := portsOf(a)
	for _, p := range pa {
		if !ports.DefaultBand().Contains(p) {
			t.Errorf("port %d of a is outside %s", p, ports.DefaultBand())
		}
	}
	if err := a.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	bc := create("b")
	for _, p := range portsOf(bc) {
		if slices.Contains(pa, p) {
			t.Errorf("b was given port %d of the stopped cluster a (%v)", p, pa)
		}
	}

	// Another process takes a's API server port: Start says so at once.
	u, err := url.Parse(a.Server())
	if err != nil {
		t.Fatal(err)
	}
	apiPort, _ := strconv.Atoi(u.Port())
	l, err := net.Listen("tcp", "127.0.0.1:"+u.Port())
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = a.Start(ctx)
	l.Close()
	if err == nil || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) || !strings.Contains(err.Error(), "kube-apiserver") {
		t.Fatalf("Start with port %d taken: %v, want an error naming kube-apiserver and this process", apiPort, err)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("Start took %s to fail", took)
	}
	t.Logf("Start with the port taken, after %s: %v", time.Since(start).Round(time.Millisecond), err)

	if err := a.Start(ctx); err != nil {
		t.Fatalf("Start once the port is free: %v", err)
	}
	if s := a.Status(ctx); !s.Running() {
		t.Errorf("a: %+v, want running", s)
	}
	if got := portsOf(a); !slices.Equal(got, pa) {
		t.Errorf("a's ports after Start %v, were %v", got, pa)
	}
}
