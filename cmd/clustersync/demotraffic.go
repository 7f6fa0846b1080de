package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/hostcluster"
	"github.com/clustersync/clustersync/internal/images"
	"github.com/clustersync/clustersync/internal/virtual/instance"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// demoCheckPod is the pod of the virtual cluster that GETs the web
// Service.
const demoCheckPod = "web-check"

// proveTraffic shows that the demo's pods really run on the real node: a
// pod of the virtual cluster GETs the web Service's cluster IP (its output
// read through the host API server, from the kubelet), and this machine
// GETs each web pod's IP on port 8080. Every answer must be the demo page:
// the ConfigMap web-content's page and the names of the Secret
// web-credentials' keys, none of their values. It prints one line per GET
// and fails on the first wrong answer.
func proveTraffic(ctx context.Context, out io.Writer, vc *instance.Instance, vclient client.Client, host *hostcluster.Cluster) error {
	want, err := demoPageWants(ctx, vclient)
	if err != nil {
		return err
	}
	tr := translate.Translator{VCluster: vc.Name, HostNamespace: vc.HostNamespace}
	hostCS, err := kubernetes.NewForConfig(host.Config)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nTraffic (the web pods run on node %s):\n", hostcluster.RealNodeName)

	// The Service's cluster IP, once the virtual Service carries the
	// host's (the syncer recreates it so).
	var ip string
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		var vs corev1.Service
		if err := vclient.Get(ctx, client.ObjectKey{Namespace: demoName, Name: "web"}, &vs); err != nil {
			return false, nil
		}
		hs, err := hostCS.CoreV1().Services(vc.HostNamespace).Get(ctx, tr.HostName("web", demoName), metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		ip = vs.Spec.ClusterIP
		return ip != "" && ip == hs.Spec.ClusterIP, nil
	})
	if err != nil {
		return fmt.Errorf("service %s/web: no cluster IP shared with its host copy: %w", demoName, err)
	}

	// From a pod of the virtual cluster.
	url := "http://" + ip + "/"
	check := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: demoCheckPod, Namespace: demoName}, Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever, TerminationGracePeriodSeconds: ptr.To[int64](0),
		Containers: []corev1.Container{{Name: "get", Image: images.Reference(images.DefaultRegistry, images.DemoRepository, "latest"), Args: []string{"get", url}}}}}
	if err := deletePodAndWait(ctx, vclient, check); err != nil {
		return err
	}
	if err := vclient.Create(ctx, check); err != nil {
		return err
	}
	var phase corev1.PodPhase
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		var p corev1.Pod
		if err := vclient.Get(ctx, client.ObjectKeyFromObject(check), &p); err != nil {
			return false, nil
		}
		phase = p.Status.Phase
		return phase == corev1.PodSucceeded || phase == corev1.PodFailed, nil
	})
	if err != nil {
		return fmt.Errorf("pod %s/%s did not finish within 90 s (phase %q)", demoName, demoCheckPod, phase)
	}
	logs, err := hostCS.CoreV1().Pods(vc.HostNamespace).GetLogs(tr.HostName(demoCheckPod, demoName), &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("logs of pod %s/%s (through the host's kubelet): %w", demoName, demoCheckPod, err)
	}
	servedBy, err := want.check(string(logs))
	if phase != corev1.PodSucceeded || err != nil {
		return fmt.Errorf("GET %s from pod %s/%s: phase %s, %v; its output:\n%s", url, demoName, demoCheckPod, phase, err, logs)
	}
	fmt.Fprintf(out, "  GET %-26s from pod %s/%s (Service %s/web): the page, served by %s\n", url, demoName, demoCheckPod, demoName, servedBy)
	_ = vclient.Delete(ctx, check)

	// From this machine, to each pod.
	var pods corev1.PodList
	if err := vclient.List(ctx, &pods, client.InNamespace(demoName), client.MatchingLabels{"app": "web"}); err != nil {
		return err
	}
	httpc := http.Client{Timeout: 5 * time.Second}
	for _, p := range pods.Items {
		if p.Status.PodIP == "" || p.DeletionTimestamp != nil {
			continue
		}
		url := "http://" + p.Status.PodIP + ":8080/"
		resp, err := httpc.Get(url)
		if err != nil {
			return fmt.Errorf("GET %s (pod %s/%s) from this machine: %w", url, demoName, p.Name, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return fmt.Errorf("GET %s: %w", url, err)
		}
		servedBy, err := want.check(string(body))
		if resp.StatusCode != http.StatusOK || err != nil {
			return fmt.Errorf("GET %s (pod %s/%s): %s, %v", url, demoName, p.Name, resp.Status, err)
		}
		fmt.Fprintf(out, "  GET %-26s from this machine (pod %s/%s): the page, served by %s\n", url, demoName, p.Name, servedBy)
	}
	fmt.Fprintf(out, "  Each page holds the ConfigMap's content and the Secret's key names (%s), never their values.\n", strings.Join(want.keys, ", "))
	return nil
}

// demoPage is what a right answer of the demo server holds.
type demoPage struct {
	content []string // the ConfigMap's values
	keys    []string // the Secret's key names, sorted
	values  []string // the Secret's values, which must not appear
}

// demoPageWants reads the ConfigMap and Secret the web pods mount.
func demoPageWants(ctx context.Context, vclient client.Client) (demoPage, error) {
	var cm corev1.ConfigMap
	if err := vclient.Get(ctx, client.ObjectKey{Namespace: demoName, Name: "web-content"}, &cm); err != nil {
		return demoPage{}, err
	}
	var sec corev1.Secret
	if err := vclient.Get(ctx, client.ObjectKey{Namespace: demoName, Name: "web-credentials"}, &sec); err != nil {
		return demoPage{}, err
	}
	var w demoPage
	for _, v := range cm.Data {
		w.content = append(w.content, strings.TrimSpace(v))
	}
	for k, v := range sec.Data {
		w.keys = append(w.keys, k)
		w.values = append(w.values, string(v))
	}
	slices.Sort(w.keys)
	return w, nil
}

// servedByRE finds the serving pod's name on the demo page.
var servedByRE = regexp.MustCompile(`Served by pod ([^<\s]+)`)

// check returns the name of the pod that served page, or what is wrong
// with it.
func (w demoPage) check(page string) (string, error) {
	for _, c := range w.content {
		if !strings.Contains(page, c) {
			return "", fmt.Errorf("the page lacks the ConfigMap's content %q", c)
		}
	}
	if want := "Secret keys read: " + strings.Join(w.keys, ", "); !strings.Contains(page, want) {
		return "", fmt.Errorf("the page lacks %q", want)
	}
	for _, v := range w.values {
		if v != "" && strings.Contains(page, v) {
			return "", fmt.Errorf("the page shows a Secret's value")
		}
	}
	m := servedByRE.FindStringSubmatch(page)
	if m == nil {
		return "", fmt.Errorf("the page does not say which pod served it")
	}
	return m[1], nil
}

// deletePodAndWait deletes pod (left by an earlier run) and waits until it
// is gone.
func deletePodAndWait(ctx context.Context, c client.Client, pod *corev1.Pod) error {
	if err := c.Delete(ctx, pod.DeepCopy(), client.GracePeriodSeconds(0)); apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{})
		return apierrors.IsNotFound(err), nil
	})
}
