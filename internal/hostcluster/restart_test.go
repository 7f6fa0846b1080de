package hostcluster_test

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/clustersync/clustersync/internal/hostcluster"
)

// TestRestartAPIServer restarts the API server of a running cluster, as a
// crash (SIGKILL) and as a graceful stop (SIGTERM): each time a new
// process serves the same address and objects, etcd and kwok-controller
// are the same processes as before, and every component runs (the
// controller manager and the scheduler exit during the minute a graceful
// stop takes, having lost their leader lease, and are started again).
func TestRestartAPIServer(t *testing.T) {
	b := requireBinaries(t)
	dir := filepath.Join(t.TempDir(), "host")
	deleteOnCleanup(t, dir)
	ctx := t.Context()
	c, err := hostcluster.Create(ctx, hostcluster.Options{Dir: dir, Nodes: hostcluster.NoNodes, Binaries: b, Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	cm, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kept"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	before := componentPids(t, c)
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
		start := time.Now()
		if err := c.RestartAPIServer(ctx, sig); err != nil {
			t.Fatalf("RestartAPIServer(%s): %v", sig, err)
		}
		t.Logf("restarted after %s in %s", sig, time.Since(start).Round(time.Millisecond))
		after := componentPids(t, c)
		for name, pid := range after {
			switch {
			case !running(pid):
				t.Errorf("after %s: %s (pid %d) does not run", sig, name, pid)
			case name == "kube-apiserver" && pid == before[name]:
				t.Errorf("after %s: kube-apiserver has the pid of before, %d", sig, pid)
			case (name == "etcd" || name == "kwok-controller") && pid != before[name]:
				t.Errorf("after %s: %s pid %d, was %d", sig, name, pid, before[name])
			}
		}
		if s := c.Status(ctx); !s.Running() {
			t.Errorf("after %s: status %+v, want running", sig, s)
		}
		if running(before["kube-apiserver"]) {
			t.Errorf("after %s: the old kube-apiserver (pid %d) still runs", sig, before["kube-apiserver"])
		}
		got, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "kept", metav1.GetOptions{})
		if err != nil || got.UID != cm.UID {
			t.Fatalf("after %s: ConfigMap kept: %v (UID %s, want %s)", sig, err, got.UID, cm.UID)
		}
		before = after
	}
}
