package hostcluster_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/clustersync/clustersync/internal/hostcluster"
)

// TestRestartAPIServer restarts the API server of a running cluster, as a
// crash (SIGKILL) and as a graceful stop (SIGTERM): each time a new
// process serves the same address and objects, etcd, kwok-controller and
// kube-controller-manager are the same processes as before (the controller
// manager, without leader election, outlives even the minute a graceful
// stop takes), kube-scheduler is a new one, and every component runs.
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
			case (name == "kube-apiserver" || name == "kube-scheduler") && pid == before[name]:
				t.Errorf("after %s: %s has the pid of before, %d", sig, name, pid)
			case (name == "etcd" || name == "kwok-controller" || name == "kube-controller-manager") && pid != before[name]:
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

// TestSchedulerExitsOnRecreatedPod shows on purpose why RestartAPIServer
// restarts kube-scheduler with the API server: a kube-scheduler that
// outlives a restart of the API server, while a scheduled pod is deleted
// and created again under the same name, relists, gets the two pods as one
// update of an assigned pod to no node, and exits ("Scheduler cache is
// corrupted"; https://github.com/kubernetes/kubernetes/pull/141255). The
// scheduler is paused (SIGSTOP) over the restart so that the pod is
// recreated before it relists, which in the chaos test was up to timing.
// Then RestartAPIServer, with the same pod recreated at once: the
// scheduler is a new process, it schedules the pod and keeps running.
//
// Should this test fail because the scheduler survives the first part,
// kube-scheduler has the fix, and RestartAPIServer can leave it running.
func TestSchedulerExitsOnRecreatedPod(t *testing.T) {
	b := requireBinaries(t)
	dir := filepath.Join(t.TempDir(), "host")
	deleteOnCleanup(t, dir)
	ctx := t.Context()
	c, err := hostcluster.Create(ctx, hostcluster.Options{Dir: dir, Nodes: 1, Binaries: b, Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	pods := cs.CoreV1().Pods("default")
	// create makes the pod "p" and waits until it is scheduled.
	create := func(what string) {
		t.Helper()
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "p"},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
		}
		if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatalf("%s: create pod: %v", what, err)
		}
	}
	scheduled := func(what string) {
		t.Helper()
		poll(t, time.Minute, what+": pod p scheduled", func() error {
			p, err := pods.Get(ctx, "p", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if p.Spec.NodeName == "" {
				return errors.New("no node yet")
			}
			return nil
		})
	}
	recreate := func(what string) {
		t.Helper()
		if err := pods.Delete(ctx, "p", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
			t.Fatalf("%s: delete pod: %v", what, err)
		}
		poll(t, 30*time.Second, what+": pod p gone", func() error {
			if _, err := pods.Get(ctx, "p", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("still there (%v)", err)
			}
			return nil
		})
		create(what)
	}
	create("first")
	scheduled("first")

	before := componentPids(t, c)
	sched := before["kube-scheduler"]
	if err := syscall.Kill(sched, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	cont := func() { _ = syscall.Kill(sched, syscall.SIGCONT) }
	defer cont()
	// Writes the paused scheduler does not see move etcd's revision on, so
	// that the new API server's watch cache begins after the last revision
	// the scheduler saw, and its watch from there is answered "too old
	// resource version": it relists.
	for i := range 3 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("write-%d", i)}}
		if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Kill(before["kube-apiserver"], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	assertExited(t, map[string]int{"kube-apiserver": before["kube-apiserver"]})
	if err := c.Start(ctx); err != nil { // starts the API server alone
		t.Fatal(err)
	}
	recreate("paused scheduler")
	cont()
	schedLog := func() []byte {
		t.Helper()
		log, err := os.ReadFile(filepath.Join(c.KwokDir(), "logs", "kube-scheduler.log"))
		if err != nil {
			t.Fatal(err)
		}
		return log
	}
	poll(t, time.Minute, "paused scheduler: kube-scheduler exits", func() error {
		if running(sched) {
			return fmt.Errorf("still runs; its log:\n%s", schedLog())
		}
		return nil
	})
	log := schedLog()
	if !bytes.Contains(log, []byte("Scheduler cache is corrupted")) {
		t.Fatalf("kube-scheduler exited without saying its cache is corrupted; its log:\n%s", log)
	}
	t.Logf("kube-scheduler (pid %d) exited: Scheduler cache is corrupted", sched)

	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	scheduled("started again")
	before = componentPids(t, c)
	if err := c.RestartAPIServer(ctx, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	recreate("RestartAPIServer")
	scheduled("RestartAPIServer")
	after := componentPids(t, c)
	if after["kube-scheduler"] == before["kube-scheduler"] || !running(after["kube-scheduler"]) {
		t.Errorf("after RestartAPIServer: kube-scheduler pid %d (running %v), was %d: want a new one running",
			after["kube-scheduler"], running(after["kube-scheduler"]), before["kube-scheduler"])
	}
}
