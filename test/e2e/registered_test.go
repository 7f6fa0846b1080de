package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hostcluster"
	"github.com/clustersync/clustersync/internal/manager"
	"github.com/clustersync/clustersync/internal/proc"
	"github.com/clustersync/clustersync/internal/registered/agent"
	"github.com/clustersync/clustersync/internal/registered/registration"
	"github.com/clustersync/clustersync/internal/testenv"
)

// A cluster imported as a user imports one, with the agent and its cleanup
// Job running as real pods of the clustersync image: the local host is both
// the management cluster (the manager runs on this machine, serving on the
// real node's bridge address) and the cluster imported. `cluster import`
// prints the command, curl | kubectl apply installs the agent, whose pod
// runs on the real node, dials the manager and the Cluster turns Active;
// `kubectl delete cluster` runs the cleanup Job as a pod to completion and
// the agent is gone.
func TestRegisteredAgentOnRealNode(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a real node needs root")
	}
	root := standInControlPlane(t)
	devUpReal(t)
	cli(t, "dev", "image", "--source", root, "--tag", "e2e")
	kubeconfig := filepath.Join(home, "host", "kubeconfig.yaml")

	// The manager, serving agents on the node's bridge address, which pods
	// reach.
	serve := "10.244.0.1:18443"
	healthPort, err := proc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	health := fmt.Sprintf("127.0.0.1:%d", healthPort)
	mctx, stopManager := context.WithCancel(ctx)
	mgr := exec.CommandContext(mctx, exe, "manager", "--kubeconfig", kubeconfig, "--leader-elect=false", "--health-addr", health,
		"--serve-addr", serve, "--external-url", "https://"+serve, "--agent-image", "ghcr.io/clustersync/clustersync:e2e")
	logFile := filepath.Join(t.TempDir(), "manager.log")
	log, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	mgr.Stdout, mgr.Stderr = log, log
	if err := mgr.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stopManager()
		_ = mgr.Wait()
		log.Close()
		if t.Failed() {
			t.Logf("manager log (last lines):\n%s", proc.Tail(logFile, 40))
		}
	})

	testenv.Eventually(t, time.Minute, func() error {
		resp, err := http.Get("http://" + health + "/readyz")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("manager /readyz: %s", resp.Status)
		}
		return nil
	})
	importOut := cli(t, "cluster", "import", "edge", "--kubeconfig", kubeconfig)
	m := regexp.MustCompile(`(?m)^\s*(curl --insecure -sfL \S+ \| kubectl apply -f -)$`).FindStringSubmatch(importOut)
	if m == nil {
		t.Fatalf("cluster import prints no curl | kubectl command:\n%s", importOut)
	}
	apply := exec.Command("bash", "-o", "pipefail", "-c", m[1])
	apply.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	if out, err := apply.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", m[1], err, out)
	}

	scheme, err := manager.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	c := clientFor(t, kubeconfig)
	cs := hostClientset(t, kubeconfig)
	mc, err := client.New(restConfig(t, kubeconfig), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 2*time.Minute, func() error {
		var cl mgmtv1.Cluster
		if err := mc.Get(ctx, client.ObjectKey{Name: "edge"}, &cl); err != nil {
			return err
		}
		if cl.Status.Phase != mgmtv1.PhaseActive {
			return fmt.Errorf("cluster edge phase %q (agent: %s)", cl.Status.Phase, podStates(c, registration.AgentNamespace))
		}
		return nil
	})
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(registration.AgentNamespace)); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 1 || pods.Items[0].Spec.NodeName != hostcluster.RealNodeName || pods.Items[0].Status.Phase != corev1.PodRunning {
		t.Errorf("want the agent pod Running on %s: %s", hostcluster.RealNodeName, podStates(c, registration.AgentNamespace))
	}

	del := exec.Command("kubectl", "delete", "clusters.management.clustersync.io", "edge", "--wait=false")
	del.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	if out, err := del.CombinedOutput(); err != nil {
		t.Fatalf("kubectl delete cluster edge: %v\n%s", err, out)
	}
	testenv.Eventually(t, 2*time.Minute, func() error {
		var job batchv1.Job
		if err := c.Get(ctx, client.ObjectKey{Namespace: agent.CleanupNamespace, Name: agent.CleanupName}, &job); err != nil {
			return err
		}
		if job.Status.Succeeded < 1 {
			return fmt.Errorf("cleanup Job: %d succeeded, %d failed (pods: %s; log: %s)", job.Status.Succeeded, job.Status.Failed,
				podStates(c, agent.CleanupNamespace), podLogs(cs, agent.CleanupNamespace, "job-name="+agent.CleanupName))
		}
		return nil
	})
	var jobPods corev1.PodList
	if err := c.List(ctx, &jobPods, client.InNamespace(agent.CleanupNamespace), client.MatchingLabels{"job-name": agent.CleanupName}); err != nil {
		t.Fatal(err)
	}
	for _, p := range jobPods.Items {
		if p.Spec.NodeName != hostcluster.RealNodeName || p.Status.Phase != corev1.PodSucceeded {
			t.Errorf("cleanup pod %s: node %q phase %s, want Succeeded on %s", p.Name, p.Spec.NodeName, p.Status.Phase, hostcluster.RealNodeName)
		}
	}
	testenv.Eventually(t, 2*time.Minute, func() error {
		err := c.Get(ctx, client.ObjectKey{Name: registration.AgentNamespace}, &corev1.Namespace{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("namespace %s still there (%v)", registration.AgentNamespace, err)
		}
		var cl mgmtv1.Cluster
		if err := mc.Get(ctx, client.ObjectKey{Name: "edge"}, &cl); !apierrors.IsNotFound(err) {
			return fmt.Errorf("cluster edge still there (phase %q, %v)", cl.Status.Phase, err)
		}
		return nil
	})
}

// podStates describes the pods of namespace ns: name, node, phase and the
// first waiting reason.
func podStates(c client.Client, ns string) string {
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(ns)); err != nil {
		return err.Error()
	}
	var s []string
	for _, p := range pods.Items {
		d := fmt.Sprintf("%s on %q %s", p.Name, p.Spec.NodeName, p.Status.Phase)
		for _, cs := range p.Status.ContainerStatuses {
			if w := cs.State.Waiting; w != nil {
				d += " (" + w.Reason + ": " + w.Message + ")"
			}
		}
		s = append(s, d)
	}
	return "[" + strings.Join(s, "; ") + "]"
}

// podLogs returns the last lines of the logs of the pods of ns that match
// selector.
func podLogs(cs kubernetes.Interface, ns, selector string) string {
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return err.Error()
	}
	var s []string
	for _, p := range pods.Items {
		data, err := cs.CoreV1().Pods(ns).GetLogs(p.Name, &corev1.PodLogOptions{TailLines: ptr.To[int64](10)}).DoRaw(ctx)
		if err != nil {
			data = []byte(err.Error())
		}
		s = append(s, p.Name+": "+strings.TrimSpace(string(data)))
	}
	return strings.Join(s, "\n")
}
