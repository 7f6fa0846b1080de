package hostcluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/clustersync/clustersync/internal/binaries"
)

const (
	// tailLines is how many lines of kwokctl's output and of a component's
	// log an error shows.
	tailLines = 20
	// kwokctlGrace is how long runUp lets kwokctl create go on after the cluster is
	// ready before stopping it. kwokctl waits up to 2 minutes for the API
	// server through `kubectl get --raw /version` and, with no kubectl on
	// PATH, tries to download one, which fails offline; that wait would
	// only delay us.
	kwokctlGrace = 2 * time.Second
	// pollInterval is how often readiness is checked.
	pollInterval = 200 * time.Millisecond
)

// args returns kwokctl's arguments for a command on this cluster.
func (c *Cluster) args(cmd ...string) []string {
	return append(cmd, "--name", c.Name)
}

// createArgs returns the arguments of `kwokctl create cluster`. There is no
// --wait: runUp and the readiness checks wait instead, with client-go.
func (c *Cluster) createArgs(b binaries.Set, extra []string) []string {
	args := c.args("create", "cluster")
	args = append(args,
		"--config", c.kwokctlConfigPath(),
		"--runtime", "binary",
		"--kubeconfig", c.Kubeconfig,
		"--etcd-binary", b.Etcd,
		"--kube-apiserver-binary", b.KubeAPIServer,
		"--kube-controller-manager-binary", b.KubeControllerManager,
		"--kube-scheduler-binary", b.KubeScheduler,
		"--kwok-controller-binary", b.Kwok,
		"--extra-args", "kube-apiserver=service-cluster-ip-range="+c.ServiceCIDR,
	)
	for _, e := range append(append(singleMemberArgs(), c.realNodeExtraArgs()...), extra...) {
		args = append(args, "--extra-args", e)
	}
	return args
}

// singleMemberArgs are kwokctl --extra-args of every new cluster that turn
// off leader election in kube-controller-manager and kube-scheduler: the
// cluster has one of each, and with leader election each exits when it
// cannot renew its lease for its renew deadline (10 s; an API server
// restarting on a busy machine), and one started again waits for the lease
// its predecessor held to expire (15 s) before it works. See --leader-elect
// in https://kubernetes.io/docs/reference/command-line-tools-reference/kube-scheduler/
// and .../kube-controller-manager/.
func singleMemberArgs() []string {
	return []string{
		"kube-controller-manager=leader-elect=false",
		"kube-scheduler=leader-elect=false",
	}
}

// kwokEnv is the environment of kwokctl: ours without KWOK_* variables
// (kwokctl reads many of them as defaults), plus KWOK_WORKDIR.
func kwokEnv(workdir string) []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "KWOK_") })
	return append(env, "KWOK_WORKDIR="+workdir)
}

// syncBuffer is a bytes.Buffer safe for one writer and concurrent readers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.buf.Bytes())
}

// start starts kwokctl with args. Its output goes to Dir/kwokctl.log and to
// the returned buffer; done receives the result of Wait. Cancelling ctx sends
// kwokctl SIGTERM, on which it stops waiting and exits, and SIGKILL 10 s
// later.
func (c *Cluster) start(ctx context.Context, args []string) (out *syncBuffer, done <-chan error, err error) {
	logPath := filepath.Join(c.Dir, "kwokctl.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("hostcluster: %w", err)
	}
	fmt.Fprintf(logFile, "\n# %s\n$ KWOK_WORKDIR=%s %s %s\n", time.Now().Format(time.RFC3339), c.kwokWorkdir(), c.kwokctl, strings.Join(args, " "))
	out = &syncBuffer{}
	cmd := exec.CommandContext(ctx, c.kwokctl, args...)
	cmd.Env = kwokEnv(c.kwokWorkdir())
	cmd.Stdin = nil
	w := io.MultiWriter(logFile, out)
	cmd.Stdout, cmd.Stderr = w, w
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, nil, c.failure(commandString(args), err, nil, "")
	}
	ch := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		if err != nil {
			fmt.Fprintf(logFile, "# kwokctl: %v\n", err)
		}
		logFile.Close()
		ch <- err
	}()
	return out, ch, nil
}

// run runs kwokctl with args to the end.
func (c *Cluster) run(ctx context.Context, args []string) error {
	out, done, err := c.start(ctx, args)
	if err != nil {
		return err
	}
	if err := <-done; err != nil {
		return c.failure(commandString(args), withContext(ctx, err), out.Bytes(), "")
	}
	return nil
}

// runUp runs `kwokctl create cluster` or `kwokctl start cluster` while
// watching the components, because kwokctl does not: it exits 0 even when
// kube-apiserver exited at once (after waiting 2 minutes for it), and it
// may exit 0 before the API server is ready (it waits for /version only).
// A component that exits fails runUp at once, with its log. Once every
// component runs and the API server is ready, kwokctl is given grace to
// finish and is then stopped.
func (c *Cluster) runUp(ctx context.Context, args []string, grace time.Duration) error {
	kctx, stopKwokctl := context.WithCancel(ctx)
	defer stopKwokctl()
	out, done, err := c.start(kctx, args)
	if err != nil {
		return err
	}
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	var readyAt time.Time
	stopped, exited := false, false
	for {
		var kwokctlDone <-chan error // nil once kwokctl has exited
		if !exited {
			kwokctlDone = done
		}
		select {
		case err := <-kwokctlDone:
			exited = true
			if err != nil && !stopped {
				focus := "kube-apiserver"
				if ctx.Err() != nil {
					focus = "" // interrupted: the logs would only distract
				}
				return c.failure(commandString(args), withContext(ctx, err), out.Bytes(), focus)
			}
			if stopped || !readyAt.IsZero() {
				return nil
			}
			continue // done before the components are ready: watch on
		case <-ctx.Done(): // once kwokctl has exited, only this ends the wait
			return c.failure(commandString(args), withContext(ctx, ctx.Err()), out.Bytes(), "kube-apiserver")
		case <-tick.C:
		}
		if stopped {
			continue
		}
		if dead := c.deadComponents(); len(dead) > 0 {
			if !exited {
				stopKwokctl()
				<-done
			}
			return c.failure(commandString(args), fmt.Errorf("%s exited", strings.Join(dead, ", ")), out.Bytes(), "")
		}
		switch {
		case readyAt.IsZero():
			if c.allRunning() && c.apiReady(ctx) == nil {
				readyAt = time.Now()
				if exited {
					return nil
				}
			}
		case time.Since(readyAt) >= grace:
			if grace > 0 {
				fmt.Fprintf(c.Log, "The API server is ready but kwokctl is still waiting for it (is kubectl on PATH?); stopping kwokctl\n")
			}
			stopped = true
			stopKwokctl()
		}
	}
}

// withContext explains an error of a command or wait that ctx ended.
func withContext(ctx context.Context, err error) error {
	cerr := ctx.Err()
	if cerr == nil {
		return err
	}
	what := "interrupted"
	if errors.Is(cerr, context.DeadlineExceeded) {
		what = "timed out"
	}
	if err == nil || errors.Is(err, cerr) || err.Error() == cerr.Error() {
		return fmt.Errorf("%s (%w)", what, cerr)
	}
	return fmt.Errorf("%s (%w: %v)", what, cerr, err)
}

// commandString is the kwokctl command for messages: its subcommand and
// --name; the whole command line is in kwokctl.log.
func commandString(args []string) string {
	var words []string
	for i := 0; i < len(args); i++ {
		if strings.HasPrefix(args[i], "-") {
			if args[i] == "--name" && i+1 < len(args) {
				words = append(words, args[i], args[i+1])
			}
			i++ // every flag we pass has a value
			continue
		}
		words = append(words, args[i])
	}
	return "kwokctl " + strings.Join(words, " ")
}

// stepError is an error of this package with diagnostics in its message.
type stepError struct {
	msg string
	err error
}

func (e *stepError) Error() string { return e.msg }
func (e *stepError) Unwrap() error { return e.err }

// failure builds the error of a failed step: the step (a kwokctl command or
// a wait), the cause, the last lines of kwokctl's output if any, and the last
// lines of the log of every component that exited, or else of focus.
func (c *Cluster) failure(step string, err error, output []byte, focus string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s failed: %v", step, err)
	if lines := lastLines(output, tailLines); len(lines) > 0 {
		fmt.Fprintf(&b, "\nkwokctl output (last %d lines; all of it in %s):", len(lines), filepath.Join(c.Dir, "kwokctl.log"))
		for _, l := range lines {
			b.WriteString("\n    " + cut(formatLogLine(l)))
		}
	}
	dead := c.deadComponents()
	show := dead
	if len(show) == 0 && focus != "" {
		show = []string{focus}
	}
	for _, name := range show {
		path := filepath.Join(c.KwokDir(), "logs", name+".log")
		lines, ferr := tailFile(path, tailLines)
		if ferr != nil {
			continue
		}
		state := "log"
		if slices.Contains(dead, name) {
			state = "exited; log"
		}
		fmt.Fprintf(&b, "\ncomponent %s %s (last %d lines of %s):", name, state, len(lines), path)
		for _, l := range lines {
			b.WriteString("\n    " + cut(l))
		}
		for _, why := range c.portsInUse(lines) {
			b.WriteString("\n  " + why)
		}
	}
	return &stepError{msg: b.String(), err: err}
}

// maxLine caps the length of a log line in an error.
const maxLine = 500

// cut shortens a log line to maxLine bytes.
func cut(line string) string {
	if len(line) <= maxLine {
		return line
	}
	return strings.ToValidUTF8(line[:maxLine], "") + "…"
}

// lastLines returns the last n non-empty lines of data.
func lastLines(data []byte, n int) []string {
	var lines []string
	for l := range strings.SplitSeq(string(data), "\n") {
		l = strings.TrimRight(l, "\r")
		if strings.TrimSpace(l) == "" {
			continue
		}
		lines = append(lines, l)
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// tailFile returns the last n lines of a file, reading at most its last
// 64 KiB.
func tailFile(path string, n int) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	const window = 64 << 10
	off := max(st.Size()-window, 0)
	data := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(data, off); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if off > 0 {
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			data = data[i+1:] // drop the partial first line
		}
	}
	return lastLines(data, n), nil
}

// formatLogLine turns one of kwokctl's JSON log lines into "LEVEL msg
// key=value …"; other lines are returned as they are.
func formatLogLine(line string) string {
	var m map[string]any
	if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &m) != nil {
		return line
	}
	msg, ok := m["msg"].(string)
	if !ok {
		return line
	}
	level, _ := m["level"].(string)
	var b strings.Builder
	b.WriteString(level + " " + msg)
	keys := make([]string, 0, len(m))
	for k := range m {
		switch k {
		case "time", "level", "msg", "source", "cluster":
		default:
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := m[k]
		if obj, ok := v.(map[string]any); ok && obj["human"] != nil {
			v = obj["human"] // kwokctl's durations: {"nanosecond":…,"human":"1.2s"}
		}
		var s string
		switch v := v.(type) {
		case string:
			s = v
			if strings.ContainsAny(s, " \t\"") {
				s = fmt.Sprintf("%q", s)
			}
		default:
			j, _ := json.Marshal(v)
			s = string(j)
		}
		b.WriteString(" " + k + "=" + s)
	}
	return b.String()
}
