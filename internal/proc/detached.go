package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// StartDetached starts exe with args as a detached process (its own
// session, so it outlives the caller and a terminal's hang-up), output
// appended to logFile, and waits until ready reports true, checking every
// 100 ms. It fails with the last lines of the log when the process exits
// first, and when timeout passes.
func StartDetached(ctx context.Context, name, exe string, args []string, logFile string, ready func() bool, timeout time.Duration) error {
	log, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("%s: log file: %w", name, err)
	}
	defer log.Close()
	cmd := exec.Command(exe, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			return fmt.Errorf("%s failed to start (%v); last lines of %s:\n%s", name, err, logFile, Tail(logFile, 25))
		case <-deadline.C:
			return fmt.Errorf("%s not ready after %s; see %s:\n%s", name, timeout, logFile, Tail(logFile, 25))
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			if ready() {
				return nil
			}
		}
	}
}

// StopPID sends SIGTERM to process pid and waits up to grace for it to
// exit, then kills its process group (SIGKILL) and says so in the error.
// A process that is already gone is not an error.
func StopPID(ctx context.Context, name string, pid int, grace time.Duration) error {
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stop %s (pid %d): %w", name, pid, err)
	}
	deadline := time.Now().Add(grace)
	for Alive(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			return fmt.Errorf("%s (pid %d) did not stop within %s; killed", name, pid, grace)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil
}
