package main

import (
	"context"
	"encoding/json"
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
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/hostcluster"
	"github.com/clustersync/clustersync/internal/images"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// proveTraffic shows that the demo's pods really run on the real node and
// that the virtual cluster works for them as a cluster of their own. From
// pods of the virtual cluster, their output read through the virtual API
// server (kubectl logs, served by the syncer's kubelet proxy):
//  1. web.demo.svc.cluster.local resolves, through the virtual cluster's
//     DNS, to the virtual Service's IP;
//  2. a GET of http://web.demo.svc.cluster.local/ returns the demo page;
//  3. a GET of https://kubernetes.default.svc/api/v1/namespaces/demo/pods
//     with the pod's service-account token lists the virtual pods (virtual
//     names, not the host's).
//
// Then this machine GETs each web pod's IP on port 8080. Every page must
// hold the ConfigMap web-content's page and the names of the Secret
// web-credentials' keys, none of their values. It prints one line per
// check and fails on the first wrong answer.
func proveTraffic(ctx context.Context, out io.Writer, vc demoCluster, vcfg *rest.Config, vclient client.Client, host *hostcluster.Cluster) error {
	want, err := demoPageWants(ctx, vclient)
	if err != nil {
		return err
	}
	tr := translate.Translator{VCluster: vc.name, HostNamespace: vc.hostNamespace}
	hostCS, err := kubernetes.NewForConfig(host.Config)
	if err != nil {
		return err
	}
	virtualCS, err := kubernetes.NewForConfig(vcfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nTraffic (the web pods run on node %s; pod output read with kubectl logs through the virtual cluster):\n", hostcluster.RealNodeName)

	// The Service's cluster IP, once the virtual Service carries the
	// host's (the syncer recreates it so).
	var ip string
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		var vs corev1.Service
		if err := vclient.Get(ctx, client.ObjectKey{Namespace: demoName, Name: "web"}, &vs); err != nil {
			return false, nil
		}
		hs, err := hostCS.CoreV1().Services(vc.hostNamespace).Get(ctx, tr.HostName("web", demoName), metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		ip = vs.Spec.ClusterIP
		return ip != "" && ip == hs.Spec.ClusterIP, nil
	})
	if err != nil {
		return fmt.Errorf("service %s/web: no cluster IP shared with its host copy: %w", demoName, err)
	}
	run := func(pod string, args ...string) (string, error) {
		return runDemoPod(ctx, vclient, virtualCS, pod, args...)
	}

	// 1. DNS.
	const name = "web.demo.svc.cluster.local"
	got, err := run("dns-check", "lookup", name)
	if err != nil {
		return err
	}
	if strings.TrimSpace(got) != ip {
		return fmt.Errorf("%s resolved to %q in pod %s/dns-check, want the Service's IP %s", name, strings.TrimSpace(got), demoName, ip)
	}
	fmt.Fprintf(out, "  %s resolves to %s (Service %s/web) in pod %s/dns-check, through the virtual cluster's DNS\n", name, ip, demoName, demoName)

	// 2. HTTP by name.
	url := "http://" + name + "/"
	page, err := run("web-check", "get", url)
	if err != nil {
		return err
	}
	servedBy, err := want.check(page)
	if err != nil {
		return fmt.Errorf("GET %s from pod %s/web-check: %v; its output:\n%s", url, demoName, err, page)
	}
	fmt.Fprintf(out, "  GET %s from pod %s/web-check: the page, served by %s\n", url, demoName, servedBy)

	// 3. The pod's own API server, as its service account.
	api := "https://kubernetes.default.svc/api/v1/namespaces/demo/pods"
	body, err := run("api-check", "get", "--service-account", api)
	if err != nil {
		return err
	}
	var list corev1.PodList
	if err := json.Unmarshal([]byte(body), &list); err != nil {
		return fmt.Errorf("GET %s from pod %s/api-check: not a pod list: %v\n%s", api, demoName, err, body)
	}
	var names []string
	for _, p := range list.Items {
		names = append(names, p.Name)
		if strings.Contains(p.Name, "-x-") {
			return fmt.Errorf("GET %s from pod %s/api-check listed host pod %s", api, demoName, p.Name)
		}
	}
	if !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "web-") }) {
		return fmt.Errorf("GET %s from pod %s/api-check listed no web pod: %v", api, demoName, names)
	}
	fmt.Fprintf(out, "  GET %s from pod %s/api-check, as its service account: %d virtual pods (%s)\n",
		api, demoName, len(names), strings.Join(names, ", "))

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

// runDemoPod runs the demo image with args as pod name of virtual namespace
// demo (replacing one an earlier run left) until it ends, and returns its
// output, read through the virtual API server (virtualCS). It returns an
// error with the output when the pod fails or does not end within 90 s.
func runDemoPod(ctx context.Context, vclient client.Client, virtualCS kubernetes.Interface, name string, args ...string) (string, error) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: demoName}, Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever, TerminationGracePeriodSeconds: ptr.To[int64](0),
		Containers: []corev1.Container{{Name: "check", Image: images.Reference(images.DefaultRegistry, images.DemoRepository, "latest"), Args: args}}}}
	if err := deletePodAndWait(ctx, vclient, pod); err != nil {
		return "", err
	}
	if err := vclient.Create(ctx, pod); err != nil {
		return "", err
	}
	var phase corev1.PodPhase
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		var p corev1.Pod
		if err := vclient.Get(ctx, client.ObjectKeyFromObject(pod), &p); err != nil {
			return false, nil
		}
		phase = p.Status.Phase
		return phase == corev1.PodSucceeded || phase == corev1.PodFailed, nil
	})
	if err != nil {
		return "", fmt.Errorf("pod %s/%s (%s) did not finish within 90 s (phase %q)", demoName, name, strings.Join(args, " "), phase)
	}
	logs, err := virtualCS.CoreV1().Pods(demoName).GetLogs(name, &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		return "", fmt.Errorf("logs of pod %s/%s through the virtual cluster: %w", demoName, name, err)
	}
	if phase != corev1.PodSucceeded {
		return "", fmt.Errorf("pod %s/%s (%s) failed; its output:\n%s", demoName, name, strings.Join(args, " "), logs)
	}
	_ = vclient.Delete(ctx, pod)
	return string(logs), nil
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
