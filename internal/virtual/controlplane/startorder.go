package controlplane

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/clustersync/clustersync/internal/proc"
)

// The containers of the control plane pod all start at once (the chart
// gives the kubelet no start order past the init container), and each
// component waits here for what it needs: kube-apiserver for etcd, the
// others for kube-apiserver. Started one after the other, behind the
// kubelet's startup probes, the pod took 14–15 s from install to an API
// answering through its Service (make bench-vcluster, 2026-11-28): each
// probe's period and each container's start came on top of the
// components' own start-up.

// readyPoll is how often a component polls for the one it waits for, and
// readyReport how often it says it still waits (with the last answer).
const (
	readyPoll   = 200 * time.Millisecond
	readyReport = 10 * time.Second
)

// WaitFor polls check every 200 ms until it returns nil or ctx ends, and
// tells say what it waits for (what) and check's last error every 10
// seconds, and how long it took when done. It returns ctx's error when ctx ends first,
// naming what and check's last error.
func WaitFor(ctx context.Context, what string, say func(string), check func(context.Context) error) error {
	start := time.Now()
	next := start.Add(readyReport)
	var last error
	err := wait.PollUntilContextCancel(ctx, readyPoll, true, func(ctx context.Context) (bool, error) {
		if last = check(ctx); last == nil {
			return true, nil
		}
		if now := time.Now(); now.After(next) {
			say(fmt.Sprintf("waiting for %s (%.0f s): %v", what, now.Sub(start).Seconds(), last))
			next = now.Add(readyReport)
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %s: %w (last answer: %v)", what, err, last)
	}
	say(fmt.Sprintf("%s is ready after %.1f s", what, time.Since(start).Seconds()))
	return nil
}

// WaitForPodEtcd waits (WaitFor) until the pod's embedded etcd answers its
// /health on PodEtcdHealthPort with 200; with an external etcd
// (o.Etcd) it returns at once: kube-apiserver retries that itself.
func WaitForPodEtcd(ctx context.Context, o PodOptions, say func(string)) error {
	if o.Etcd != nil {
		return nil
	}
	url := "http://127.0.0.1:" + strconv.Itoa(PodEtcdHealthPort) + "/health"
	c := &http.Client{Timeout: 2 * time.Second}
	return WaitFor(ctx, "etcd at "+url, say, func(ctx context.Context) error { return proc.HTTPOK(ctx, c, url) })
}

// WaitForPodAPIServer waits (WaitFor) until the pod's kube-apiserver
// answers /readyz with 200, asked with the admin kubeconfig of o.Dir.
// Errors: the kubeconfig cannot be read, or ctx ended first.
func WaitForPodAPIServer(ctx context.Context, o PodOptions, say func(string)) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", Layout{Dir: o.Dir}.AdminKubeconfig())
	if err != nil {
		return err
	}
	return WaitForAPIServer(ctx, cfg, say)
}

// WaitForAPIServer waits (WaitFor) until the API server of cfg answers
// /readyz with 200. Errors: cfg makes no client, or ctx ended first.
func WaitForAPIServer(ctx context.Context, cfg *rest.Config, say func(string)) error {
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = 2 * time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	return WaitFor(ctx, "kube-apiserver at "+cfg.Host, say, readyz(cs))
}

// readyz is a check that the API server of cs answers /readyz with 200.
func readyz(cs kubernetes.Interface) func(context.Context) error {
	return func(ctx context.Context) error {
		_, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err
	}
}
