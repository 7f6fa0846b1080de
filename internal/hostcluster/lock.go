package hostcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// lockPorts takes a machine-wide lock (flock on a file in the temporary
// folder) that is held while kwokctl creates or starts a cluster, until its
// components listen. kwokctl picks ports by probing downwards from 32767 for
// free ones, so two clusters created at the same time, e.g. by the TestMain
// of two test packages that `go test ./...` runs in parallel, would pick the
// same ports. It returns the unlock function.
func lockPorts(ctx context.Context) (func(), error) {
	path := filepath.Join(os.TempDir(), "clustersync-kwokctl.lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDONLY, 0o666)
	if err != nil {
		return nil, fmt.Errorf("hostcluster: lock: %w", err)
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("hostcluster: lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("hostcluster: waiting for another host cluster to start (lock %s): %w", path, ctx.Err())
		case <-tick.C:
		}
	}
}
