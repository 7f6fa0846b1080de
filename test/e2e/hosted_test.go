package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/clustersync/clustersync/internal/testenv"
)

// An AKS cluster the way a user makes one against the emulator, in the
// order examples/hosted/aks-cluster.yaml gives: `dev up`, `dev aks`,
// `manager --aks-endpoint`, `kubectl apply` of the example. kubectl get
// clusters shows it with DRIVER AKS and turns Active; a tag edited with
// kubectl patch reaches Azure (cluster show prints it applied); kubectl
// delete removes it.
func TestHostedAKSUserPath(t *testing.T) {
	cli(t, "dev", "up", "--runtime", "fake", "--fake-nodes", "0")
	t.Cleanup(func() { devDown(t) })
	kubeconfig := filepath.Join(tests.Dir, "host", "kubeconfig.yaml")
	addr := freeAddr(t)
	background(t, "AKS emulator on", "dev", "aks", "--kubeconfig", kubeconfig, "--addr", addr, "--create-delay", "2s", "--update-delay", "1s")
	background(t, "clustersync manager running", "manager", "--kubeconfig", kubeconfig, "--aks-endpoint", "http://"+addr,
		"--aks-refresh", "2", "--aks-poll", "1", "--serve-addr", "", "--leader-elect=false")
	kubectl(t, kubeconfig, "apply", "-f", filepath.Join("..", "..", "examples", "hosted", "aks-cluster.yaml"))
	testenv.Eventually(t, 2*time.Minute, func() error {
		out, err := kubectlErr(kubeconfig, "get", "clusters.management.clustersync.io", "demo-aks")
		if err != nil {
			return err
		}
		if f := strings.Fields(lastLine(out)); len(f) < 3 || f[1] != "AKS" || f[2] != "Active" {
			return fmt.Errorf("kubectl get clusters:\n%s", out)
		}
		return nil
	})
	kubectl(t, kubeconfig, "patch", "clusters.management.clustersync.io", "demo-aks", "--type", "merge",
		"-p", `{"spec":{"aksConfig":{"tags":{"team":"platform","env":"e2e"}}}}`)
	testenv.Eventually(t, time.Minute, func() error {
		out, err := cliErr("cluster", "show", "demo-aks", "--kubeconfig", kubeconfig, "-o", "json")
		if err != nil {
			return err
		}
		var rows []struct{ Path, Upstream, Applied string }
		if err := json.Unmarshal([]byte(out), &rows); err != nil {
			return fmt.Errorf("cluster show -o json: %v\n%s", err, out)
		}
		for _, r := range rows {
			if r.Path == "tags" && strings.Contains(r.Upstream, `"env":"e2e"`) && strings.Contains(r.Applied, `"env":"e2e"`) {
				return nil
			}
		}
		return fmt.Errorf("tags not applied in AKS yet:\n%s", out)
	})
	kubectl(t, kubeconfig, "delete", "clusters.management.clustersync.io", "demo-aks", "--wait=false")
	testenv.Eventually(t, time.Minute, func() error {
		out, err := kubectlErr(kubeconfig, "get", "clusters.management.clustersync.io", "demo-aks", "--ignore-not-found")
		if err != nil || strings.TrimSpace(out) != "" {
			return fmt.Errorf("cluster demo-aks still there: %v\n%s", err, out)
		}
		return nil
	})
}

// freeAddr returns a loopback address no one listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// background runs clustersync with args until t ends (interrupted, then
// waited for), once it printed a line containing ready (30 s at most);
// its output is logged when t fails.
func background(t *testing.T, ready string, args ...string) {
	t.Helper()
	cmd := exec.Command(tests.Exe, args...)
	cmd.Env = append(os.Environ(), "CLUSTERSYNC_HOME="+tests.Dir, "KUBECONFIG=")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var out strings.Builder
	cmd.Stderr = writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return out.Write(p) })
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			mu.Lock()
			t.Logf("clustersync %s:\n%s", strings.Join(args, " "), out.String())
			mu.Unlock()
		}
	})
	seen := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		once := sync.Once{}
		for sc.Scan() {
			mu.Lock()
			out.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if strings.Contains(sc.Text(), ready) {
				once.Do(func() { close(seen) })
			}
		}
	}()
	select {
	case <-seen:
	case <-time.After(30 * time.Second):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("clustersync %s did not print %q in 30 s:\n%s", strings.Join(args, " "), ready, out.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// kubectl runs kubectl with kubeconfig and fails t when it fails.
func kubectl(t *testing.T, kubeconfig string, args ...string) string {
	t.Helper()
	out, err := kubectlErr(kubeconfig, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func kubectlErr(kubeconfig string, args ...string) (string, error) {
	cmd := exec.Command("kubectl", append([]string{"--kubeconfig", kubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
