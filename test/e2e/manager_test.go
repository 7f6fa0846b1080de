package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/kubectl/pkg/util/podutils"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/charts"
	"github.com/clustersync/clustersync/internal/manager"
	"github.com/clustersync/clustersync/internal/testenv"
)

// charts/manager installed with Helm on the local host's real node: two
// manager replicas run, exactly one — the Lease holder — is Ready (only the
// leader listens for registered clusters), and the Service's endpoints are
// that pod; when it is deleted, the other replica takes the Lease and
// becomes the one Ready. Uninstalling removes the Deployment's pods.
func TestManagerChart(t *testing.T) {
	devUpReal(t)
	pushImages(t)
	kubeconfig := filepath.Join(home, "host", "kubeconfig.yaml")
	host := clientFor(t, kubeconfig)
	const ns = "cs-manager"
	if err := host.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	c, err := charts.Load(charts.ManagerName)
	if err != nil {
		t.Fatal(err)
	}
	cfg := helmConfig(t, kubeconfig, ns)
	in := action.NewInstall(cfg)
	in.ReleaseName, in.Namespace = "mgr", ns
	if _, err := in.RunWithContext(ctx, c, map[string]any{"image": map[string]any{"tag": "e2e"}}); err != nil {
		t.Fatalf("helm install charts/manager: %v", err)
	}

	leader := func() string {
		t.Helper()
		var ready string
		testenv.Eventually(t, 3*time.Minute, func() error {
			var pods corev1.PodList
			if err := host.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"app.kubernetes.io/instance": "mgr"}); err != nil {
				return err
			}
			var running, readyPods []string
			for _, p := range pods.Items {
				if p.DeletionTimestamp != nil {
					continue
				}
				if p.Status.Phase == corev1.PodRunning {
					running = append(running, p.Name)
				}
				if podutils.IsPodReady(&p) {
					readyPods = append(readyPods, p.Name)
				}
			}
			if len(running) != 2 || len(readyPods) != 1 {
				return fmt.Errorf("manager pods running %v, ready %v; want 2 running, 1 ready", running, readyPods)
			}
			var lease coordinationv1.Lease
			if err := host.Get(ctx, client.ObjectKey{Namespace: ns, Name: manager.DefaultLeaderElectionID}, &lease); err != nil {
				return err
			}
			if id := ptrValue(lease.Spec.HolderIdentity); !strings.HasPrefix(id, readyPods[0]) {
				return fmt.Errorf("Lease held by %q, the ready pod is %s", id, readyPods[0])
			}
			var eps corev1.Endpoints
			if err := host.Get(ctx, client.ObjectKey{Namespace: ns, Name: "mgr"}, &eps); err != nil {
				return err
			}
			var targets []string
			for _, s := range eps.Subsets {
				for _, a := range s.Addresses {
					if a.TargetRef != nil {
						targets = append(targets, a.TargetRef.Name)
					}
				}
			}
			if len(targets) != 1 || targets[0] != readyPods[0] {
				return fmt.Errorf("Service mgr leads to %v, want only the leader %s", targets, readyPods[0])
			}
			ready = readyPods[0]
			return nil
		})
		return ready
	}
	first := leader()
	if err := host.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: first, Namespace: ns}}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	second := leader()
	if second == first {
		t.Fatalf("pod %s still leads after its deletion", first)
	}
	t.Logf("leader %s deleted; %s leads and is the Service's endpoint after %.1f s", first, second, time.Since(start).Seconds())

	if _, err := action.NewUninstall(cfg).Run("mgr"); err != nil {
		t.Fatalf("helm uninstall: %v", err)
	}
	testenv.Eventually(t, 2*time.Minute, func() error {
		if n := containersOf(t, ns); n > 0 {
			return fmt.Errorf("%d manager containers still on the node", n)
		}
		return nil
	})
}

// helmConfig is Helm's action configuration for namespace ns of the cluster
// of kubeconfig.
func helmConfig(t *testing.T, kubeconfig, ns string) *action.Configuration {
	t.Helper()
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig, flags.Namespace = &kubeconfig, &ns
	cfg := new(action.Configuration)
	if err := cfg.Init(flags, ns, "secret", func(string, ...any) {}); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func ptrValue(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
