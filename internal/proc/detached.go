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
	_, err := Detached{Name: name, Exe: exe, Args: args, LogFile: logFile, Ready: ready, Timeout: timeout}.Start(ctx)
	return err
}

// Detached describes a process that outlives its starter: a daemon of the
// local host (the registry, a real node's containerd, kubelet, kube-proxy),
// found again later by its PID.
type Detached struct {
	// Name labels the process in errors, e.g. "kubelet".
	Name string
	// Exe and Args are the program and its arguments.
	Exe  string
	Args []string
	// Env is added to this process's environment (later entries win).
	Env []string
	// LogFile receives stdout and stderr (appended).
	LogFile string
	// Ready reports whether the process is ready; checked every 100 ms.
	Ready func() bool
	// Timeout bounds the wait for Ready.
	Timeout time.Duration
}

// Start starts the process in its own session and waits until Ready
// reports true. It returns the PID; it fails with the last lines of the
// log when the process exits first or Timeout passes (the process is then
// killed), or when ctx ends.
func (d Detached) Start(ctx context.Context) (int, error) {
	log, err := os.OpenFile(d.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 0, fmt.Errorf("%s: log file: %w", d.Name, err)
	}
	defer log.Close()
	cmd := exec.Command(d.Exe, d.Args...)
	cmd.Stdout, cmd.Stderr = log, log
	if len(d.Env) > 0 {
		cmd.Env = append(os.Environ(), d.Env...)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("start %s: %w", d.Name, err)
	}
	pid := cmd.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.NewTimer(d.Timeout)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			return 0, fmt.Errorf("%s failed to start (%v); last lines of %s:\n%s", d.Name, err, d.LogFile, Tail(d.LogFile, 25))
		case <-deadline.C:
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			return 0, fmt.Errorf("%s not ready after %s; see %s:\n%s", d.Name, d.Timeout, d.LogFile, Tail(d.LogFile, 25))
		case <-ctx.Done():
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			return 0, ctx.Err()
		case <-tick.C:
			if d.Ready() {
				return pid, nil
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
