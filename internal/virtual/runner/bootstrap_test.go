package runner_test

import (
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/testenv"
	"github.com/clustersync/clustersync/internal/virtual/resources/pods"
)

// The virtual cluster has what workloads expect of a cluster: the
// default/kubernetes Service with the clusterIP of the host Service named
// after the virtual cluster, and kube-system/kube-dns synced to the host.
func TestBootstrapServices(t *testing.T) {
	var hostAPI, virtualAPI corev1.Service
	if err := env.HostClient.Get(ctx, client.ObjectKey{Namespace: env.HostNamespace, Name: env.Name}, &hostAPI); err != nil {
		t.Fatalf("host API service: %v", err)
	}
	if err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: "default", Name: "kubernetes"}, &virtualAPI); err != nil {
		t.Fatal(err)
	}
	if virtualAPI.Spec.ClusterIP != hostAPI.Spec.ClusterIP {
		t.Errorf("virtual kubernetes clusterIP %s, host %s/%s %s", virtualAPI.Spec.ClusterIP, env.HostNamespace, env.Name, hostAPI.Spec.ClusterIP)
	}
	hostDNS := hostObject(t, &corev1.Service{}, "kube-dns", "kube-system")
	var dns corev1.Service
	if err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: "kube-dns"}, &dns); err != nil {
		t.Fatal(err)
	}
	if dns.Spec.ClusterIP != hostDNS.Spec.ClusterIP {
		t.Errorf("virtual kube-dns clusterIP %s, host %s", dns.Spec.ClusterIP, hostDNS.Spec.ClusterIP)
	}
}

// A host pod gets a token minted in the virtual cluster (through a Secret
// its token volume reads, never host credentials), the virtual DNS Service
// as nameserver and the virtual API Service in KUBERNETES_*.
func TestPodTokenAndDNS(t *testing.T) {
	ns := env.NewNamespace(t)
	create(t, env.VirtualClient, pod("tok", ns, nil))
	runningPod(t, "tok", ns)
	hp := hostObject(t, &corev1.Pod{}, "tok", ns)

	secret := pods.TokenSecretName(hp.Name)
	found := false
	for _, vol := range hp.Spec.Volumes {
		if vol.Projected == nil {
			continue
		}
		for _, src := range vol.Projected.Sources {
			if src.ServiceAccountToken != nil {
				t.Errorf("host pod still projects a host service-account token: %+v", src)
			}
			if src.Secret != nil && src.Secret.Name == secret && len(src.Secret.Items) == 1 && src.Secret.Items[0].Path == "token" {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("no token file reading Secret %s in %+v", secret, hp.Spec.Volumes)
	}
	var s corev1.Secret
	if err := env.HostClient.Get(ctx, client.ObjectKey{Namespace: env.HostNamespace, Name: secret}, &s); err != nil || strings.Count(string(s.Data[pods.TokenKey]), ".") != 2 {
		t.Errorf("token Secret %s: %v, want a JWT under %s", secret, err, pods.TokenKey)
	}
	hostDNS := hostObject(t, &corev1.Service{}, "kube-dns", "kube-system")
	if hp.Spec.DNSConfig == nil || hp.Spec.DNSConfig.Nameservers[0] != hostDNS.Spec.ClusterIP {
		t.Errorf("host pod nameservers %+v, want %s", hp.Spec.DNSConfig, hostDNS.Spec.ClusterIP)
	}
	var hostAPI corev1.Service
	if err := env.HostClient.Get(ctx, client.ObjectKey{Namespace: env.HostNamespace, Name: env.Name}, &hostAPI); err != nil {
		t.Fatal(err)
	}
	envs := map[string]string{}
	for _, e := range hp.Spec.Containers[0].Env {
		envs[e.Name] = e.Value
	}
	if envs["KUBERNETES_SERVICE_HOST"] != hostAPI.Spec.ClusterIP {
		t.Errorf("KUBERNETES_SERVICE_HOST = %q, want %s", envs["KUBERNETES_SERVICE_HOST"], hostAPI.Spec.ClusterIP)
	}
}

// Host events about a synced pod (the host scheduler's "Scheduled") appear
// in the virtual namespace about the virtual pod, with virtual names.
func TestHostEventsCopied(t *testing.T) {
	ns := env.NewNamespace(t)
	create(t, env.VirtualClient, pod("ev", ns, nil))
	v := runningPod(t, "ev", ns)
	hostName := env.HostKey("ev", ns).Name
	testenv.Eventually(t, wait, func() error {
		var list corev1.EventList
		if err := env.VirtualClient.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, e := range list.Items {
			if e.Reason == "Scheduled" && e.InvolvedObject.Name == "ev" && e.InvolvedObject.UID == v.UID {
				if strings.Contains(e.Message, hostName) {
					return fmt.Errorf("event message leaks the host name: %q", e.Message)
				}
				return nil
			}
		}
		// Say whether the host has the event at all, so that a failure
		// tells a missing host event from one the syncer did not copy.
		var host corev1.EventList
		if err := env.HostClient.List(ctx, &host, client.InNamespace(env.HostNamespace)); err != nil {
			return err
		}
		var about []string
		for _, e := range host.Items {
			if e.InvolvedObject.Name == hostName {
				about = append(about, e.Reason)
			}
		}
		return fmt.Errorf("no Scheduled event for pod ev among %d events; the host has %d about %s: %v", len(list.Items), len(about), hostName, about)
	})
}

// A fake node exists while a virtual pod is bound to it and goes when none is.
func TestFakeNodeRemovedWhenUnused(t *testing.T) {
	ns := env.NewNamespace(t)
	// Pin the pod to a host node no other test uses for long: the last one.
	var nodes corev1.NodeList
	if err := env.HostClient.List(ctx, &nodes); err != nil || len(nodes.Items) == 0 {
		t.Fatalf("host nodes: %v", err)
	}
	node := nodes.Items[len(nodes.Items)-1].Name
	create(t, env.VirtualClient, pod("pinned", ns, func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": node} }))
	runningPod(t, "pinned", ns)
	if err := env.VirtualClient.Get(ctx, client.ObjectKey{Name: node}, &corev1.Node{}); err != nil {
		t.Fatalf("fake node %s: %v", node, err)
	}
	// Delete every virtual pod on that node, in all namespaces.
	testenv.Eventually(t, wait, func() error {
		var pods corev1.PodList
		if err := env.VirtualClient.List(ctx, &pods); err != nil {
			return err
		}
		for i := range pods.Items {
			if pods.Items[i].Spec.NodeName == node {
				_ = env.VirtualClient.Delete(ctx, &pods.Items[i])
			}
		}
		err := env.VirtualClient.Get(ctx, client.ObjectKey{Name: node}, &corev1.Node{})
		if err == nil {
			return fmt.Errorf("fake node %s still exists", node)
		}
		return client.IgnoreNotFound(err)
	})
}

// A StatefulSet pod runs on the host with the rewriteHosts init container
// (on by default, as in vCluster) and its containers read the rewritten
// /etc/hosts.
func TestStatefulSetPodRewriteHosts(t *testing.T) {
	ns := env.NewNamespace(t)
	labels := map[string]string{"app": "db"}
	create(t, env.VirtualClient, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns},
		Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: labels, Ports: []corev1.ServicePort{{Port: 5432}}}})
	create(t, env.VirtualClient, &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns},
		Spec: appsv1.StatefulSetSpec{
			ServiceName: "db", Replicas: ptr.To(int32(1)), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "postgres:17"}}}},
		},
	})
	runningPod(t, "db-0", ns)
	hp := hostObject(t, &corev1.Pod{}, "db-0", ns)
	if len(hp.Spec.InitContainers) == 0 || hp.Spec.InitContainers[0].Name != pods.RewriteHostsContainer {
		t.Fatalf("host pod init containers = %+v", hp.Spec.InitContainers)
	}
	if script := strings.Join(hp.Spec.InitContainers[0].Command, " "); !strings.Contains(script, "db-0.db."+ns+".svc.cluster.local") {
		t.Errorf("rewrite script does not name the virtual FQDN: %s", script)
	}
	mounted := false
	for _, m := range hp.Spec.Containers[0].VolumeMounts {
		mounted = mounted || m.MountPath == "/etc/hosts"
	}
	if !mounted {
		t.Errorf("container does not mount the rewritten /etc/hosts: %+v", hp.Spec.Containers[0].VolumeMounts)
	}
	if hp.Spec.Subdomain != env.HostKey("db", ns).Name {
		t.Errorf("host subdomain %q, want the host name of the headless Service", hp.Spec.Subdomain)
	}
}
