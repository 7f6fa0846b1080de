package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	awseks "github.com/aws/aws-sdk-go-v2/service/eks"

	"github.com/clustersync/clustersync/internal/hosted/eks"
	"github.com/clustersync/clustersync/internal/ports"
	"github.com/clustersync/clustersync/internal/testenv"
)

// Hosted clusters of the three clouds side by side, the way a user makes
// them against the emulators, in the order examples/hosted/*-cluster.yaml
// give: `dev up`, `dev eks`, `dev aks`, `dev gke`, one `manager` with the
// three endpoints, `kubectl apply` of the three examples. kubectl get
// clusters shows each with its DRIVER and turns it Active; `cluster show`
// prints the same columns for each and -o json the same shape; tags
// (GKE: labels) edited with kubectl patch reach the cloud (cluster show
// prints them applied); the dashboard the manager serves
// (--dashboard-addr) lists them for a user signed in with a service
// account's token; a conflict on the EKS cluster's tags (changed in EKS
// and with kubectl while the manager is down) is answered with `cluster
// resolve --keep`, and the user's value reaches EKS; kubectl delete
// removes them.
func TestHostedUserPath(t *testing.T) {
	cli(t, "dev", "up", "--runtime", "fake", "--fake-nodes", "0")
	t.Cleanup(func() { devDown(t) })
	kubeconfig := filepath.Join(tests.Dir, "host", "kubeconfig.yaml")
	clouds := []struct {
		driver, name, field, patch string
	}{
		{"EKS", "demo-eks", "tags", `{"spec":{"eksConfig":{"tags":{"team":"platform","env":"e2e"}}}}`},
		{"AKS", "demo-aks", "tags", `{"spec":{"aksConfig":{"tags":{"team":"platform","env":"e2e"}}}}`},
		{"GKE", "demo-gke", "labels", `{"spec":{"gkeConfig":{"labels":{"team":"platform","env":"e2e"}}}}`},
	}
	dashboard := freeAddr(t)
	var eksEndpoint string
	managerArgs := []string{"manager", "--kubeconfig", kubeconfig, "--serve-addr", "", "--leader-elect=false", "--dashboard-addr", dashboard}
	for _, c := range clouds {
		cloud := strings.ToLower(c.driver)
		addr := freeAddr(t)
		background(t, c.driver+" emulator on", "dev", cloud, "--kubeconfig", kubeconfig, "--addr", addr, "--create-delay", "2s", "--update-delay", "1s")
		if cloud == "eks" {
			eksEndpoint = "http://" + addr
		}
		managerArgs = append(managerArgs, "--"+cloud+"-endpoint", "http://"+addr, "--"+cloud+"-refresh", "2", "--"+cloud+"-poll", "1")
	}
	stopManager := background(t, "clustersync manager running", managerArgs...)
	for _, c := range clouds {
		kubectl(t, kubeconfig, "apply", "-f", filepath.Join("..", "..", "examples", "hosted", strings.ToLower(c.driver)+"-cluster.yaml"))
	}
	testenv.Eventually(t, 3*time.Minute, func() error {
		out, err := kubectlErr(kubeconfig, "get", "clusters.management.clustersync.io", "--no-headers")
		if err != nil {
			return err
		}
		active := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if f := strings.Fields(line); len(f) >= 3 && f[2] == "Active" {
				active[f[0]] = f[1]
			}
		}
		for _, c := range clouds {
			if active[c.name] != c.driver {
				return fmt.Errorf("%s not Active with DRIVER %s; kubectl get clusters:\n%s", c.name, c.driver, out)
			}
		}
		return nil
	})
	// The dashboard the manager serves lists the three, for a user signed
	// in with a service account's token (kubectl create token).
	kubectl(t, kubeconfig, "create", "serviceaccount", "dashboard-viewer", "-n", "default")
	kubectl(t, kubeconfig, "create", "clusterrole", "clusters-view", "--verb=get,list,watch", "--resource=clusters.management.clustersync.io")
	kubectl(t, kubeconfig, "create", "clusterrolebinding", "clusters-view", "--clusterrole=clusters-view", "--serviceaccount=default:dashboard-viewer")
	token := strings.TrimSpace(kubectl(t, kubeconfig, "create", "token", "dashboard-viewer", "-n", "default"))
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	resp, err := browser.PostForm("http://"+dashboard+"/login", url.Values{"token": {token}})
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, c := range clouds {
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), `data-cluster="`+c.name+`"`) {
			t.Errorf("the dashboard (%s) does not list %s after sign-in:\n%s", resp.Status, c.name, page)
		}
	}
	var header string
	for _, c := range clouds {
		out := cli(t, "cluster", "show", c.name, "--kubeconfig", kubeconfig)
		var columns string
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "FIELD") {
				columns = strings.Join(strings.Fields(line), " ")
			}
		}
		if header == "" {
			header = columns
		}
		if columns == "" || columns != header {
			t.Errorf("cluster show %s: columns %q, want %q as for the other clouds:\n%s", c.name, columns, header, out)
		}
		kubectl(t, kubeconfig, "patch", "clusters.management.clustersync.io", c.name, "--type", "merge", "-p", c.patch)
	}
	var shape string
	for _, c := range clouds {
		testenv.Eventually(t, time.Minute, func() error {
			out, err := cliErr("cluster", "show", c.name, "--kubeconfig", kubeconfig, "-o", "json")
			if err != nil {
				return err
			}
			var rows []map[string]any
			if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) == 0 {
				return fmt.Errorf("cluster show -o json: %v\n%s", err, out)
			}
			keys := strings.Join(slices.Sorted(maps.Keys(rows[0])), ",")
			if shape == "" {
				shape = keys
			}
			if keys != shape {
				t.Errorf("cluster show %s -o json: row keys %s, want %s as for the other clouds", c.name, keys, shape)
			}
			for _, r := range rows {
				up, _ := r["upstream"].(map[string]any)
				applied, _ := r["applied"].(map[string]any)
				if r["path"] == c.field && up["env"] == "e2e" && applied["env"] == "e2e" {
					return nil
				}
			}
			return fmt.Errorf("%s of %s not applied in %s yet:\n%s", c.field, c.name, c.driver, out)
		})
	}
	// A conflict answered with `cluster resolve`: the tags are changed in
	// EKS (as in its console) and with kubectl while the manager is down,
	// so that the manager finds both changes at once; the Cluster's
	// Conflict names the field, and --keep pushes the user's value.
	stopManager()
	eksTags(t, eksEndpoint, "demo-eks", map[string]string{"team": "console"})
	kubectl(t, kubeconfig, "patch", "clusters.management.clustersync.io", "demo-eks", "--type", "merge", "-p", `{"spec":{"eksConfig":{"tags":{"team":"user","env":"e2e"}}}}`)
	background(t, "clustersync manager running", managerArgs...)
	testenv.Eventually(t, time.Minute, func() error {
		out, err := kubectlErr(kubeconfig, "get", "clusters.management.clustersync.io", "demo-eks", "-o", `jsonpath={.status.conditions[?(@.type=="Conflict")]}`)
		if err != nil || !strings.Contains(out, `"status":"True"`) || !strings.Contains(out, "tags") {
			return fmt.Errorf("no Conflict on tags yet: %v %s", err, out)
		}
		return nil
	})
	cli(t, "cluster", "resolve", "demo-eks", "tags", "--keep", "--kubeconfig", kubeconfig)
	testenv.Eventually(t, time.Minute, func() error {
		if got := eksTags(t, eksEndpoint, "demo-eks", nil); got["team"] != "user" {
			return fmt.Errorf("EKS tags %v, want team=user kept", got)
		}
		out, err := kubectlErr(kubeconfig, "get", "clusters.management.clustersync.io", "demo-eks", "-o", `jsonpath={.status.conditions[?(@.type=="Conflict")].status}`)
		if err != nil || strings.TrimSpace(out) != "False" {
			return fmt.Errorf("Conflict %q (%v), want False", out, err)
		}
		return nil
	})
	for _, c := range clouds {
		kubectl(t, kubeconfig, "delete", "clusters.management.clustersync.io", c.name, "--wait=false")
	}
	testenv.Eventually(t, time.Minute, func() error {
		out, err := kubectlErr(kubeconfig, "get", "clusters.management.clustersync.io", "--ignore-not-found", "--no-headers")
		if err != nil || strings.TrimSpace(out) != "" {
			return fmt.Errorf("clusters still there: %v\n%s", err, out)
		}
		return nil
	})
}

// eksTags tags EKS cluster name in the emulator at endpoint with set (as
// someone in the EKS console would; nil sets nothing) and returns its tags.
func eksTags(t *testing.T, endpoint, name string, set map[string]string) map[string]string {
	t.Helper()
	ctx := context.Background()
	cs, err := eks.NewClientsFactory(endpoint)(ctx, "us-west-2", map[string][]byte{eks.AccessKeyField: []byte("e2e"), eks.SecretKeyField: []byte("e2e")})
	if err != nil {
		t.Fatal(err)
	}
	out, err := cs.EKS.DescribeCluster(ctx, &awseks.DescribeClusterInput{Name: &name})
	if err != nil {
		t.Fatal(err)
	}
	if set != nil {
		if _, err := cs.EKS.TagResource(ctx, &awseks.TagResourceInput{ResourceArn: out.Cluster.Arn, Tags: set}); err != nil {
			t.Fatal(err)
		}
		if out, err = cs.EKS.DescribeCluster(ctx, &awseks.DescribeClusterInput{Name: &name}); err != nil {
			t.Fatal(err)
		}
	}
	return out.Cluster.Tags
}

// freeAddr returns a loopback address for a server the test starts in
// another process: its port leased to the test (ports.ForTest), so that no
// other local server, in any package running meanwhile, is handed it.
func freeAddr(t *testing.T) string {
	t.Helper()
	return fmt.Sprintf("127.0.0.1:%d", ports.ForTest(t, 1)[0])
}

// background runs clustersync with args until t ends or stop is called
// (interrupted, then waited for), once it printed a line containing ready
// (30 s at most); its output is logged when t fails.
func background(t *testing.T, ready string, args ...string) (stop func()) {
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
	var stopOnce sync.Once
	stop = func() {
		stopOnce.Do(func() {
			_ = cmd.Process.Signal(syscall.SIGINT)
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-done
			}
		})
	}
	t.Cleanup(func() {
		stop()
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
	return stop
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
