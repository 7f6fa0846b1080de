package hostcluster

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"time"
)

// RestartAPIServer stops the running cluster's kube-apiserver process with
// sig — syscall.SIGKILL, a crash, or syscall.SIGTERM, a graceful stop
// (about a minute: the API server waits for its long-running requests) —
// waits until it has exited, and starts it again with the flags it had
// (`kwokctl start cluster` starts the components that do not run),
// returning once every component runs and the API server is ready. etcd,
// kwok-controller and the nodes keep running; kube-controller-manager and
// kube-scheduler exit when the API server is away longer than their
// leader lease lasts (after SIGTERM), and are started again with it. It
// is meant for fault-injection tests (test/chaos).
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
	c.removeStalePids()
	return c.startStopped(ctx)
}

// startStopped runs `kwokctl start cluster`, which starts the components
// that do not run, once their ports are released, until they all run and
// the API server is ready, as runUp does.
func (c *Cluster) startStopped(ctx context.Context) error {
	if err := c.waitPortsReleased(ctx); err != nil {
		return err
	}
	args := c.args("start", "cluster")
	kctx, stopKwokctl := context.WithCancel(ctx)
	defer stopKwokctl()
	out, done, err := c.start(kctx, args)
	if err != nil {
		return err
	}
	// kwokctl goes on waiting for kubectl (see kwokctlGrace) after the
	// components run: it is stopped as soon as they do.
	exited := false
	defer func() {
		if !exited {
			stopKwokctl()
			<-done
		}
	}()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		if dead := c.deadComponents(); len(dead) > 0 {
			return c.failure(commandString(args), fmt.Errorf("%s exited", strings.Join(dead, ", ")), out.Bytes(), "")
		}
		if c.allRunning() && c.apiReady(ctx) == nil {
			return nil
		}
		var kwokctlDone <-chan error // nil once kwokctl has exited: never ready
		if !exited {
			kwokctlDone = done
		}
		select {
		case <-ctx.Done():
			return c.failure(commandString(args), withContext(ctx, ctx.Err()), out.Bytes(), "kube-apiserver")
		case err := <-kwokctlDone:
			exited = true
			if err != nil {
				return c.failure(commandString(args), withContext(ctx, err), out.Bytes(), "kube-apiserver")
			}
		case <-tick.C:
		}
	}
}
