package hostcluster

import (
	"context"
	"fmt"
	"syscall"
	"time"
)

// RestartAPIServer stops the running cluster's kube-apiserver process with
// sig — syscall.SIGKILL, a crash, or syscall.SIGTERM, a graceful stop
// (about a minute: the API server waits for its long-running requests) —
// waits until it has exited, and starts it again with the flags it had
// (`kwokctl start cluster` starts the components that do not run),
// returning once every component runs and the API server is ready. etcd,
// kwok-controller, kube-controller-manager and the nodes keep running. It
// is meant for fault-injection tests (test/chaos).
//
// kube-scheduler is stopped (SIGTERM) before the API server and started
// again with it: a kube-scheduler that outlives the API server relists its
// pods when its watch comes back, and a pod deleted and created again under
// the same name meanwhile then reaches it as one update of an assigned pod
// to another node (or none), on which kube-scheduler v1.37 exits, "Scheduler
// cache is corrupted" (https://github.com/kubernetes/kubernetes/pull/141255;
// TestSchedulerExitsOnRecreatedPod shows it). In a real cluster its kubelet
// would start it again; this cluster has no supervisor, so a fresh one,
// which lists after the API server is back, stands in for that.
//
// The API server's port stays leased to the cluster while it is down
// (see Create), so no cluster created meanwhile can take it, and the new
// process is started once the kernel has released the port of the old one,
// which it does only after every thread of the old one has exited
// (ports.WaitReleased). The whole restart is bounded by c.Timeout.
func (c *Cluster) RestartAPIServer(ctx context.Context, sig syscall.Signal) error {
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	pid := c.pid("kube-apiserver")
	if !alive(pid) {
		return fmt.Errorf("hostcluster: kube-apiserver of host cluster %q is not running", c.Name)
	}
	if sched := c.pid("kube-scheduler"); alive(sched) {
		if err := syscall.Kill(sched, syscall.SIGTERM); err != nil {
			return fmt.Errorf("hostcluster: stop kube-scheduler (pid %d): %w", sched, err)
		}
		if err := c.waitExited(ctx, []int{sched}); err != nil {
			return err
		}
	}
	if err := syscall.Kill(pid, sig); err != nil {
		return fmt.Errorf("hostcluster: stop kube-apiserver (pid %d): %w", pid, err)
	}
	tick := time.NewTicker(pollInterval / 4)
	defer tick.Stop()
	for alive(pid) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("hostcluster: kube-apiserver (pid %d) still running after %s: %w", pid, sig, ctx.Err())
		case <-tick.C:
		}
	}
	return c.startCluster(ctx)
}

// startCluster runs `kwokctl start cluster`, which starts the components
// that do not run, once their ports are released (waitPortsReleased),
// until they all run and the API server is ready (runUp). kwokctl has
// nothing left to do then but wait for kubectl, so it is stopped at once.
func (c *Cluster) startCluster(ctx context.Context) error {
	c.removeStalePids()
	if err := c.waitPortsReleased(ctx); err != nil {
		return err
	}
	return c.runUp(ctx, c.args("start", "cluster"), 0)
}
