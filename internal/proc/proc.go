// Package proc runs the child processes of a local control plane
// (kube-apiserver, kube-controller-manager, the syncer): output to a log
// file, a readiness wait that fails fast with the last lines of the log when
// the process exits, and a graceful stop.
package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Process is one running child process.
type Process struct {
	// Name is a short label used in errors, e.g. "kube-apiserver".
	Name string
	// LogFile receives the process's stdout and stderr.
	LogFile string
	cmd     *exec.Cmd
	done    chan struct{}
	err     error
}

// Start runs bin with args, appending its output to logFile. The process gets
// its own process group so that Stop ends it and its children, and is
// killed (SIGKILL) when the process that started it dies: kube-apiserver
// takes a first SIGTERM for a graceful shutdown that, with its etcd gone
// as well, does not end (a test's API server outlived its test binary,
// killed by go test's timeout, by 1.5 hours), and exits only on a second.
func Start(name, bin string, args []string, logFile string, env []string) (*Process, error) {
	log, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%s: log file: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = childAttr()
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("%s: start %s: %w", name, bin, err)
	}
	p := &Process{Name: name, LogFile: logFile, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		log.Close()
		close(p.done)
	}()
	return p, nil
}

// PID is the process ID.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// ExitError describes how the process ended and the end of its log.
func (p *Process) ExitError() error {
	return fmt.Errorf("%s exited (%v); last lines of %s:\n%s", p.Name, p.err, p.LogFile, Tail(p.LogFile, 20))
}

// WaitReady calls ready every 100 ms until it returns nil, the process exits
// (an error with the tail of its log), or timeout passes (an error with the
// last readiness error and the tail of the log).
func (p *Process) WaitReady(ctx context.Context, timeout time.Duration, ready func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	var last error
	for {
		if last = ready(ctx); last == nil {
			return nil
		}
		select {
		case <-p.done:
			return p.ExitError()
		case <-ctx.Done():
			return fmt.Errorf("%s not ready after %s (%v); last lines of %s:\n%s", p.Name, timeout, last, p.LogFile, Tail(p.LogFile, 20))
		case <-t.C:
		}
	}
}

// Stop sends SIGTERM to the process group and waits up to grace before
// sending SIGKILL. It returns once the process has exited.
func (p *Process) Stop(grace time.Duration) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// Tail returns the last n lines of file, or a note saying why it cannot.
func Tail(file string, n int) string {
	data, err := os.ReadFile(file)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "  " + strings.Join(lines, "\n  ")
}

// Alive reports whether a process with pid exists (signal 0 succeeds).
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Running reports whether process pid runs: it exists and is not a zombie
// (an exited process its parent has not reaped, which signal 0 would still
// find). A process whose main thread is a zombie may still have threads
// exiting and its sockets open: see ports.WaitReleased. /proc is read where
// it exists, else signal 0 is sent.
func Running(pid int) bool {
	if pid <= 0 {
		return false
	}
	if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		// "pid (comm) S ...": the state follows the last ')'.
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
			s := stat[i+2]
			return s != 'Z' && s != 'X'
		}
		return true
	} else if _, err := os.Stat("/proc/self/stat"); err == nil {
		return false // /proc works and has no such process
	}
	return Alive(pid)
}

// HTTPOK GETs url with c (http.DefaultClient when nil) and returns nil on
// 200 OK; it is the readiness probe of the health endpoints of child
// processes (/healthz, /readyz).
func HTTPOK(ctx context.Context, c *http.Client, url string) error {
	if c == nil {
		c = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return nil
}
