package registered_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/hostedtest"
	"github.com/clustersync/clustersync/internal/registered"
	"github.com/clustersync/clustersync/internal/registered/kubetoken"
)

// benchPods is the size of the cluster BenchmarkProxyListPods lists.
const benchPods = 1000

// kubectl get pods -A's request (every pod, as a Table) on a cluster of
// 1,000 pods, through the manager's /k8s/clusters proxy and one agent's
// tunnel with a member's kubeconfig token, side by side with the same
// request straight to the cluster's API server. Reports requests/s and
// the 99th percentile latency in ms; requests are sent one at a time.
func BenchmarkProxyListPods(b *testing.B) {
	hostedtest.Require(b, mgmt)
	ctx := context.Background()
	serverURL := startManager(b)
	members := []mgmtv1.ClusterMember{{Kind: "ServiceAccount", Name: "bench:owner", Role: mgmtv1.RoleClusterOwner}}
	crt, err := registered.Import(ctx, mgmt.Client, "bench", members, time.Minute)
	if err != nil {
		b.Fatal(err)
	}
	kubectl(b, fetchInsecure(b, crt.Status.ManifestURL), "--kubeconfig", down.Kubeconfig, "apply", "-f", "-")
	startAgent(b, "", "")
	waitFor(b, "cluster bench Active", func(context.Context) (bool, error) {
		c, err := cluster(b, "bench")
		return err == nil && c.Status.Phase == mgmtv1.PhaseActive, err
	})
	fillPods(b, down.Kube, "bench-pods", benchPods)

	owner := rest.AnonymousClientConfig(mgmt.Config)
	owner.BearerToken = token(b, mgmt, "bench", "owner")
	kc, _, err := kubetoken.Request(ctx, owner, serverURL, fetchInsecure(b, serverURL+"/v1/cacerts"), "bench", time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	proxied, err := clientcmd.RESTConfigFromKubeConfig(kc)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		cfg  *rest.Config
	}{{"direct", down.Config}, {"proxy", proxied}} {
		b.Run(c.name, func(b *testing.B) {
			cfg := rest.CopyConfig(c.cfg)
			cfg.QPS, cfg.Burst = -1, 0 // no client-side throttling
			kube, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				b.Fatal(err)
			}
			// As kubectl get pods -A asks: Tables of 500 rows, page after
			// page.
			list := func() (rows int, err error) {
				cont := ""
				for {
					var t metav1.Table
					err := kube.CoreV1().RESTClient().Get().AbsPath("/api/v1/pods").Param("limit", "500").Param("continue", cont).
						SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json").Do(ctx).Into(&t)
					if err != nil {
						return rows, err
					}
					rows += len(t.Rows)
					if cont = t.Continue; cont == "" {
						return rows, nil
					}
				}
			}
			if rows, err := list(); err != nil || rows < benchPods {
				b.Fatalf("list pods %s: %d rows, want %d at least (%v)", c.name, rows, benchPods, err)
			}
			took := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			start := time.Now()
			for b.Loop() {
				t0 := time.Now()
				if _, err := list(); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(t0))
			}
			elapsed := time.Since(start)
			slices.Sort(took)
			b.ReportMetric(float64(len(took))/elapsed.Seconds(), "req/s")
			b.ReportMetric(float64(took[(len(took)*99)/100].Microseconds())/1000, "p99-ms")
		})
	}
}

// fillPods creates namespace ns with n pods (they stay Pending: the
// cluster has no nodes), 8 at a time.
func fillPods(b *testing.B, kube kubernetes.Interface, ns string, n int) {
	b.Helper()
	ctx := context.Background()
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	// The namespace's default service account, which pods need, comes
	// from the controller manager.
	waitFor(b, "service account default in "+ns, func(ctx context.Context) (bool, error) {
		_, err := kube.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	var wg sync.WaitGroup
	errs := make(chan error, n)
	next := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%04d", i), Labels: map[string]string{"app": "bench"}},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "example.com/bench:1"}}}}
				if _, err := kube.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
					errs <- err
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}
