// Command realnode measures the local host's real node and clustersync's
// images and prints the figures; it asserts nothing (`make bench` runs it).
//
//   - dev up: the seconds from `clustersync dev up` (a fresh host, real node)
//     until its command returns, and until a first pod (the sandbox image)
//     is Running on the real node; then `dev down`.
//   - a virtual cluster on that host (controlplane.go): `virtual create`
//     to ready, and its control plane pod's memory as the kubelet counts
//     it (working set, the pod's and each container's; not the RSS of its
//     processes summed, which counts the shared clustersync binary once per
//     process) idle, 2 minutes after ready, and after a load of objects and
//     running pods.
//   - make run: `clustersync demo --exit` end to end, with its own
//     breakdown ("Where the time went").
//   - images: the size of each image `make image` builds (compressed bytes
//     a pull transfers), built from this source tree; the clustersync
//     image needs the static control plane (hack/build-binaries.sh static)
//     and is skipped without it.
//
// Usage: go run ./test/bench/realnode [-clustersync bin/clustersync] [-idle-after 2m]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/clustersync/clustersync/internal/binaries"
	"github.com/clustersync/clustersync/internal/hostcluster"
	"github.com/clustersync/clustersync/internal/images"
	"github.com/clustersync/clustersync/test/bench/internal/devhost"
)

func main() {
	exe := flag.String("clustersync", "bin/clustersync", "clustersync binary")
	idleAfter := flag.Duration("idle-after", IdleAfter, "how long after ready the control plane pod's idle memory is read")
	flag.Parse()
	if err := run(context.Background(), *exe, *idleAfter); err != nil {
		fmt.Fprintln(os.Stderr, "realnode bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, exe string, idleAfter time.Duration) error {
	exe, err := filepath.Abs(exe)
	if err != nil {
		return err
	}
	home, err := os.MkdirTemp("", "clustersync-bench-realnode-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	cli := devhost.CLI(ctx, exe, home)

	fmt.Println("Real node (warm: binaries cached)")
	start := time.Now()
	out, err := cli("dev", "up")
	defer func() { _, _ = cli("dev", "down") }()
	if err != nil {
		return err
	}
	up := time.Since(start)
	if strings.Contains(out, "No real node") || strings.Contains(out, "did not start") {
		return fmt.Errorf("no real node on this machine:\n%s", out)
	}
	first, err := firstPod(ctx, filepath.Join(home, "host", "kubeconfig.yaml"))
	if err != nil {
		return err
	}
	fmt.Printf("  dev up (control plane, registry, sandbox image, real node Ready): %.1f s\n", up.Seconds())
	fmt.Printf("  dev up -> first pod Running on %s:                   %.1f s\n", hostcluster.RealNodeName, (up + first).Seconds())
	if err := controlPlaneMemory(ctx, cli, home, idleAfter); err != nil {
		return err
	}
	start = time.Now()
	if _, err := cli("dev", "down"); err != nil {
		return err
	}
	fmt.Printf("  dev down (node teardown included):                                %.1f s\n", time.Since(start).Seconds())

	start = time.Now()
	out, err = cli("demo", "--exit")
	if err != nil {
		return err
	}
	line := regexp.MustCompile(`Where the time went: (.*)`).FindStringSubmatch(out)
	if line == nil {
		return fmt.Errorf("demo printed no time breakdown:\n%s", out)
	}
	fmt.Printf("\nmake run (clustersync demo --exit): %.1f s wall; %s\n", time.Since(start).Seconds(), line[1])

	return imageSizes(ctx)
}

// firstPod creates a pod of the sandbox image on the real node and returns
// how long it took to be Running.
func firstPod(ctx context.Context, kubeconfig string) (time.Duration, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return 0, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "first", Namespace: "default"}, Spec: corev1.PodSpec{
		TerminationGracePeriodSeconds: ptr.To[int64](0),
		Containers: []corev1.Container{{Name: "pause",
			Image: images.Reference(images.DefaultRegistry, images.PauseRepository, hostcluster.RealNodePauseTag)}}}}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
		return err == nil, nil // the default ServiceAccount may not exist yet
	})
	if err != nil {
		return 0, fmt.Errorf("create the first pod: %w", err)
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods("default").Get(ctx, "first", metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning, nil
	})
	if err != nil {
		return 0, fmt.Errorf("first pod not Running: %w", err)
	}
	return time.Since(start), nil
}

// imageSizes builds the images of `make image` from this source tree and
// prints their sizes.
func imageSizes(ctx context.Context) error {
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "clustersync-bench-images-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	static := filepath.Join(binaries.CacheDir(), "kubernetes-"+binaries.KubernetesVersion+"-static")
	controlPlane := []string{filepath.Join(static, "kube-apiserver"), filepath.Join(static, "kube-controller-manager")}
	fmt.Println("\nImages (bytes a pull transfers: manifest, config, compressed layers)")
	for _, b := range controlPlane {
		if _, err := os.Stat(b); errors.Is(err, fs.ErrNotExist) {
			fmt.Printf("  clustersync: skipped, %s is missing (hack/build-binaries.sh static)\n", b)
			controlPlane = nil
			break
		}
	}
	if controlPlane == nil {
		// The other images need no control plane: stand-ins keep BuildAll whole.
		for _, n := range []string{"kube-apiserver", "kube-controller-manager"} {
			p := filepath.Join(work, "standin-"+n)
			if err := images.GoBuild(ctx, root, "./internal/images/pause", p, ""); err != nil {
				return err
			}
			controlPlane = append(controlPlane, p)
		}
	}
	built, err := images.BuildAll(ctx, images.BuildOptions{ModuleDir: root, WorkDir: work, Version: "bench",
		ControlPlane: controlPlane, CACertificates: "/etc/ssl/certs/ca-certificates.crt"})
	if err != nil {
		return err
	}
	for _, b := range built {
		if b.Repository == images.ClustersyncRepository && strings.Contains(controlPlane[0], "standin-") {
			continue
		}
		size, err := images.Size(b.Image)
		if err != nil {
			return err
		}
		d, err := b.Image.Digest()
		if err != nil {
			return err
		}
		fmt.Printf("  %-26s %7.1f MB  %s\n", b.Repository, float64(size)/1e6, d)
	}
	return nil
}
