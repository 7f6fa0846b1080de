package runner_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/testenv"
	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/resources/pods"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// escapeAttempt is one thing a tenant may try in order to reach beyond its
// host namespace. attempt makes the tenant's objects in virtual namespace
// ns, as a tenant with every right inside the virtual cluster can; check
// asserts the secure outcome on the host and what the tenant is told.
type escapeAttempt struct {
	name    string
	attempt func(t *testing.T, ns string)
	check   func(t *testing.T, ns string)
}

// TestEscapeAttempts tries, with the default configuration, each way out of
// the tenant's host namespace that docs/security.md lists; each row
// asserts the secure outcome on the host and the event the tenant gets,
// which never names a host object.
func TestEscapeAttempts(t *testing.T) {
	for _, a := range escapeAttempts() {
		t.Run(a.name, func(t *testing.T) {
			ns := env.NewNamespace(t)
			a.attempt(t, ns)
			a.check(t, ns)
		})
	}
}

func escapeAttempts() []escapeAttempt {
	// refusedPod is an attempt with a pod that fails the baseline Pod
	// Security Standard: words is what PodSecurity admission says of it.
	refusedPod := func(name, words string, mutate func(*corev1.Pod)) escapeAttempt {
		return escapeAttempt{
			name:    name,
			attempt: func(t *testing.T, ns string) { create(t, env.VirtualClient, pod("p", ns, mutate)) },
			check:   func(t *testing.T, ns string) { podRefused(t, ns, "p", words) },
		}
	}
	privileged := &corev1.SecurityContext{Privileged: ptr.To(true)}
	return []escapeAttempt{
		refusedPod("privileged container", `privileged (container "main" must not set securityContext.privileged=true)`,
			func(p *corev1.Pod) { p.Spec.Containers[0].SecurityContext = privileged }),
		refusedPod("hostPath /", `hostPath volumes (volume "root")`, func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
			p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "root", MountPath: "/host"}}
		}),
		refusedPod("hostNetwork", "host namespaces (hostNetwork=true)", func(p *corev1.Pod) { p.Spec.HostNetwork = true }),
		refusedPod("hostPID", "host namespaces (hostPID=true)", func(p *corev1.Pod) { p.Spec.HostPID = true }),
		refusedPod("hostIPC", "host namespaces (hostIPC=true)", func(p *corev1.Pod) { p.Spec.HostIPC = true }),
		refusedPod("hostPort", `hostPort (container "main" uses hostPort 2379)`, func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 2379, HostPort: 2379}}
		}),
		refusedPod("added capability", `non-default capabilities (container "main" must not include "SYS_ADMIN" in securityContext.capabilities.add)`, func(p *corev1.Pod) {
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"SYS_ADMIN"}}}
		}),
		refusedPod("privileged init container", `privileged (container "init" must not set securityContext.privileged=true)`, func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox", SecurityContext: privileged}}
		}),
		refusedPod("capability added in an init container", `non-default capabilities (container "init" must not include "NET_ADMIN" in securityContext.capabilities.add)`, func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox",
				SecurityContext: &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_ADMIN"}}}}}
		}),
		{
			// kubectl debug --profile=sysadmin on a running pod: the
			// ephemeral container (privileged, an added capability) never
			// reaches the host pod, while a baseline one (the control) does.
			name: "privileged ephemeral container added to a running pod",
			attempt: func(t *testing.T, ns string) {
				create(t, env.VirtualClient, pod("p", ns, nil))
				hostObject(t, &corev1.Pod{}, "p", ns)
				addEphemeral(t, ns, "p", corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "plain", Image: "busybox"}})
				testenv.Eventually(t, wait, func() error {
					if names := ephemeralNames(hostObject(t, &corev1.Pod{}, "p", ns)); !slices.Contains(names, "plain") {
						return fmt.Errorf("host pod's ephemeral containers %q, want plain", names)
					}
					return nil
				})
				addEphemeral(t, ns, "p", corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
					Name: "debug", Image: "busybox", SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true),
						Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"SYS_PTRACE"}}}}})
			},
			check: func(t *testing.T, ns string) {
				msg := syncErrorEvent(t, ns, "p", `not updated on the host: pods "p" is forbidden: violates PodSecurity "baseline:latest": `,
					`privileged (container "debug" must not set securityContext.privileged=true)`,
					`non-default capabilities (container "debug" must not include "SYS_PTRACE" in securityContext.capabilities.add)`)
				noHostNames(t, msg)
				if names := ephemeralNames(hostObject(t, &corev1.Pod{}, "p", ns)); slices.Contains(names, "debug") {
					t.Errorf("the privileged ephemeral container reached the host pod: %q", names)
				}
			},
		},
		{
			name: "nodeName of a control-plane node",
			attempt: func(t *testing.T, ns string) {
				cp := controlPlaneNode(t, ns)
				create(t, env.VirtualClient, pod("p", ns, func(p *corev1.Pod) { p.Spec.NodeName = cp }))
			},
			check: func(t *testing.T, ns string) {
				cp := "cp-" + ns
				noHostNames(t, warningEvent(t, ns, "p", "PolicyEnforced", "nodeName "+cp+" (policies.isolation.nodeName"))
				testenv.Eventually(t, wait, func() error {
					h := hostObject(t, &corev1.Pod{}, "p", ns)
					if h.Spec.NodeName == "" {
						return fmt.Errorf("host pod not scheduled yet")
					}
					if h.Spec.NodeName == cp {
						t.Fatalf("host pod runs on the control-plane node %s", cp)
					}
					return nil
				})
			},
		},
		{
			name: "toleration of the control plane, and of every taint",
			attempt: func(t *testing.T, ns string) {
				create(t, env.VirtualClient, pod("p", ns, func(p *corev1.Pod) {
					p.Spec.Tolerations = []corev1.Toleration{
						{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
						{Operator: corev1.TolerationOpExists},
					}
				}))
			},
			check: func(t *testing.T, ns string) {
				noHostNames(t, warningEvent(t, ns, "p", "PolicyEnforced",
					"tolerations node-role.kubernetes.io/control-plane:NoSchedule, (every taint) (policies.isolation.tolerations)"))
				h := hostObject(t, &corev1.Pod{}, "p", ns)
				for _, tol := range h.Spec.Tolerations {
					if tol.Key == "" || tol.Key == "node-role.kubernetes.io/control-plane" {
						t.Errorf("host pod tolerates %+v", tol)
					}
				}
			},
		},
		{
			name: "system-node-critical priority class",
			attempt: func(t *testing.T, ns string) {
				create(t, env.VirtualClient, pod("p", ns, func(p *corev1.Pod) { p.Spec.PriorityClassName = "system-node-critical" }))
			},
			check: func(t *testing.T, ns string) {
				h := hostObject(t, &corev1.Pod{}, "p", ns)
				if h.Spec.PriorityClassName != "" || h.Spec.Priority != nil && *h.Spec.Priority >= 1e9 {
					t.Errorf("host pod priority class %q priority %v, want the host's default", h.Spec.PriorityClassName, ptr.Deref(h.Spec.Priority, 0))
				}
			},
		},
		{
			name: "Service externalIPs",
			attempt: func(t *testing.T, ns string) {
				create(t, env.VirtualClient, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: ns},
					Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "x"}, ExternalIPs: []string{"1.2.3.4"}, Ports: []corev1.ServicePort{{Port: 80}}}})
			},
			check: func(t *testing.T, ns string) {
				noHostNames(t, warningEvent(t, ns, "s", "PolicyEnforced", "externalIPs 1.2.3.4 (policies.isolation.externalIPs)"))
				if h := hostObject(t, &corev1.Service{}, "s", ns); len(h.Spec.ExternalIPs) > 0 {
					t.Errorf("host Service has externalIPs %v", h.Spec.ExternalIPs)
				}
			},
		},
		{
			name: "Endpoints to another tenant's pod",
			attempt: func(t *testing.T, ns string) {
				foreign, own := foreignPodIP(t, ns), runningPod(t, "own", ns).Status.PodIP
				create(t, env.VirtualClient, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: ns},
					Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}})
				create(t, env.VirtualClient, &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: ns}, //nolint:staticcheck
					Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: foreign}, {IP: own}}, Ports: []corev1.EndpointPort{{Port: 80}}}}}) //nolint:staticcheck
			},
			check: func(t *testing.T, ns string) {
				foreign, own := foreignPodIP(t, ns), runningPod(t, "own", ns).Status.PodIP
				noHostNames(t, warningEvent(t, ns, "s", "PolicyEnforced", "addresses "+foreign+", which are not this virtual cluster's pods"))
				h := hostObject(t, &corev1.Endpoints{}, "s", ns) //nolint:staticcheck
				var ips []string
				for _, sub := range h.Subsets {
					for _, a := range append(sub.Addresses, sub.NotReadyAddresses...) {
						ips = append(ips, a.IP)
					}
				}
				if !slices.Equal(ips, []string{own}) {
					t.Errorf("host Endpoints addresses %q, want only the tenant's pod %s", ips, own)
				}
			},
		},
		{
			name: "EndpointSlice to another tenant's pod",
			attempt: func(t *testing.T, ns string) {
				foreign, own := foreignPodIP(t, ns), runningPod(t, "own", ns).Status.PodIP
				create(t, env.VirtualClient, &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "s-manual", Namespace: ns,
					Labels: map[string]string{discoveryv1.LabelServiceName: "s"}}, AddressType: discoveryv1.AddressTypeIPv4,
					Endpoints: []discoveryv1.Endpoint{{Addresses: []string{foreign}}, {Addresses: []string{own}}}})
			},
			check: func(t *testing.T, ns string) {
				foreign, own := foreignPodIP(t, ns), runningPod(t, "own", ns).Status.PodIP
				noHostNames(t, warningEvent(t, ns, "s-manual", "PolicyEnforced", "addresses "+foreign+", which are not this virtual cluster's pods"))
				h := hostObject(t, &discoveryv1.EndpointSlice{}, "s-manual", ns)
				var ips []string
				for _, ep := range h.Endpoints {
					ips = append(ips, ep.Addresses...)
				}
				if !slices.Equal(ips, []string{own}) {
					t.Errorf("host EndpointSlice addresses %q, want only the tenant's pod %s", ips, own)
				}
			},
		},
		{
			// A pod naming the host name of another namespace's Secret
			// reaches only the host copy of a Secret of its own namespace.
			name: "raw host object names as references",
			attempt: func(t *testing.T, ns string) {
				raw := env.HostKey("db", "victim").Name
				create(t, env.VirtualClient, pod("p", ns, func(p *corev1.Pod) {
					p.Spec.Volumes = []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: raw}}}}
					p.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: raw}}}}
				}))
			},
			check: func(t *testing.T, ns string) {
				raw := env.HostKey("db", "victim").Name
				h := hostObject(t, &corev1.Pod{}, "p", ns)
				want := env.HostKey(raw, ns).Name
				if got := h.Spec.Volumes[0].Secret.SecretName; got != want {
					t.Errorf("host pod's secret volume names %s, want %s (the tenant's own scope)", got, want)
				}
				if got := h.Spec.Containers[0].EnvFrom[0].ConfigMapRef.Name; got != want {
					t.Errorf("host pod's envFrom names %s, want %s", got, want)
				}
			},
		},
		{
			name: "PVC volumeName and dataSource of another tenant's claim",
			attempt: func(t *testing.T, ns string) {
				raw := env.HostKey("data", "victim").Name
				create(t, env.VirtualClient, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: ns},
					Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
						VolumeName: "pvc-of-another-tenant",
						DataSource: &corev1.TypedLocalObjectReference{Kind: "PersistentVolumeClaim", Name: raw},
						Resources:  corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}})
			},
			check: func(t *testing.T, ns string) {
				raw := env.HostKey("data", "victim").Name
				h := hostObject(t, &corev1.PersistentVolumeClaim{}, "c", ns)
				if h.Spec.VolumeName != "" {
					t.Errorf("host claim binds volume %q, want the host's binder to choose", h.Spec.VolumeName)
				}
				if ds := h.Spec.DataSource; ds == nil || ds.Name != env.HostKey(raw, ns).Name {
					t.Errorf("host claim's data source %+v, want the tenant's own scope %s", ds, env.HostKey(raw, ns).Name)
				}
			},
		},
		{
			name: "marker spoofing",
			attempt: func(t *testing.T, ns string) {
				create(t, env.VirtualClient, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: ns,
					Labels: map[string]string{translate.LabelManagedBy: "other-vcluster", "release": "other-vcluster",
						"vcluster.loft.sh/controlled-by": "other-vcluster", translate.LabelNamespace: "victim"},
					Annotations: map[string]string{translate.AnnotationForceSync: "true", translate.AnnotationObjectName: "victim",
						translate.AnnotationObjectNamespace: "victim", translate.AnnotationObjectUID: "spoofed"}}})
			},
			check: func(t *testing.T, ns string) {
				h := hostObject(t, &corev1.ConfigMap{}, "m", ns)
				var v corev1.ConfigMap
				if err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "m"}, &v); err != nil {
					t.Fatal(err)
				}
				for k, want := range map[string]string{translate.LabelManagedBy: env.Name, translate.LabelNamespace: ns} {
					if h.Labels[k] != want {
						t.Errorf("host label %s=%q, want %q", k, h.Labels[k], want)
					}
				}
				for _, k := range []string{"release", "vcluster.loft.sh/controlled-by"} {
					if h.Labels[k] == "other-vcluster" {
						t.Errorf("host label %s=other-vcluster, a marker the tenant forged", k)
					}
				}
				for k, want := range map[string]string{translate.AnnotationObjectName: "m", translate.AnnotationObjectNamespace: ns,
					translate.AnnotationObjectUID: string(v.UID)} {
					if h.Annotations[k] != want {
						t.Errorf("host annotation %s=%q, want %q", k, h.Annotations[k], want)
					}
				}
			},
		},
		{
			name:    "another pod's token in host pod annotations",
			attempt: func(t *testing.T, ns string) { create(t, env.VirtualClient, pod("p", ns, nil)) },
			check: func(t *testing.T, ns string) {
				h := hostObject(t, &corev1.Pod{}, "p", ns)
				if key, ok := pods.TokenAnnotation(h.Annotations); ok {
					t.Errorf("host pod annotation %s holds a service-account token, readable by whoever reads host pods", key)
				}
			},
		},
		{
			// The host scheduler's "Successfully assigned HOSTNS/HOSTNAME
			// to NODE" reaches the tenant with virtual names only.
			name:    "events and status show only virtual names",
			attempt: func(t *testing.T, ns string) { runningPodOf(t, pod("p", ns, nil)) },
			check: func(t *testing.T, ns string) {
				hostName := env.HostKey("p", ns).Name
				testenv.Eventually(t, wait, func() error {
					var list corev1.EventList
					if err := env.VirtualClient.List(ctx, &list, client.InNamespace(ns)); err != nil {
						return err
					}
					scheduled := false
					for _, e := range list.Items {
						if strings.Contains(e.Message, env.HostNamespace) || strings.Contains(e.Message, hostName) {
							t.Fatalf("virtual event %s: %q names a host object", e.Reason, e.Message)
						}
						scheduled = scheduled || e.Reason == "Scheduled"
					}
					if !scheduled {
						return fmt.Errorf("no Scheduled event among %d", len(list.Items))
					}
					return nil
				})
				var v corev1.Pod
				if err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "p"}, &v); err != nil {
					t.Fatal(err)
				}
				if st := fmt.Sprintf("%+v", v.Status); strings.Contains(st, env.HostNamespace) || strings.Contains(st, hostName) {
					t.Errorf("virtual pod status names a host object: %s", st)
				}
			},
		},
		{
			// "a-x-p" in namespace NS and "a" in namespace "p-x-NS" have
			// the same host name, a-x-p-x-NS-x-VCLUSTER. The second must
			// not take over (or delete) the host copy of the first.
			name: "crafted name with the host name of another object",
			attempt: func(t *testing.T, ns string) {
				other := "p-x-" + ns
				create(t, env.VirtualClient, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: other}})
				t.Cleanup(func() {
					_ = env.VirtualClient.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: other}})
				})
				create(t, env.VirtualClient, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: other,
					Annotations: map[string]string{translate.AnnotationForceSync: "true"}}, Data: map[string]string{"owner": "first"}})
				hostObject(t, &corev1.ConfigMap{}, "a", other)
				create(t, env.VirtualClient, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a-x-p", Namespace: ns,
					Annotations: map[string]string{translate.AnnotationForceSync: "true"}}, Data: map[string]string{"owner": "second"}})
			},
			check: func(t *testing.T, ns string) {
				other := "p-x-" + ns
				if env.HostKey("a", other) != env.HostKey("a-x-p", ns) {
					t.Fatalf("the names do not collide: %s, %s", env.HostKey("a", other), env.HostKey("a-x-p", ns))
				}
				before := hostObject(t, &corev1.ConfigMap{}, "a", other)
				msg := syncErrorEvent(t, ns, "a-x-p", "host copy of ConfigMap "+other+"/a")
				noHostNames(t, msg)
				var after corev1.ConfigMap
				if err := env.HostClient.Get(ctx, client.ObjectKeyFromObject(before), &after); err != nil {
					t.Fatalf("the first object's host copy: %v", err)
				}
				if after.UID != before.UID || after.Data["owner"] != "first" || after.Annotations[translate.AnnotationObjectNamespace] != other {
					t.Errorf("the first object's host copy was taken over: uid %s→%s data %v object-namespace %q",
						before.UID, after.UID, after.Data, after.Annotations[translate.AnnotationObjectNamespace])
				}
			},
		},
	}
}

// podRefused waits until virtual pod name/ns is reported as failing the
// baseline Pod Security Standard with words, and checks that it has no
// host pod and shows Pending with a PodScheduled condition saying why.
func podRefused(t *testing.T, ns, name, words string) {
	t.Helper()
	want := `not synced to the host: pods "` + name + `" is forbidden: violates PodSecurity "baseline:latest": `
	msg := syncErrorEvent(t, ns, name, want, words)
	noHostNames(t, msg)
	var host corev1.Pod
	if err := env.HostClient.Get(ctx, env.HostKey(name, ns), &host); !apierrors.IsNotFound(err) {
		t.Errorf("host pod: %v, want it not created", err)
	}
	testenv.Eventually(t, wait, func() error {
		var v corev1.Pod
		if err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &v); err != nil {
			return err
		}
		for _, c := range v.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == pods.ReasonPodSecurity && strings.Contains(c.Message, words) {
				if v.Status.Phase != corev1.PodPending {
					return fmt.Errorf("phase %q, want Pending", v.Status.Phase)
				}
				return nil
			}
		}
		return fmt.Errorf("virtual pod conditions %+v, want PodScheduled False PodSecurity", v.Status.Conditions)
	})
}

// addEphemeral adds container c to virtual pod name/ns as kubectl debug
// does, through the ephemeralcontainers subresource.
func addEphemeral(t *testing.T, ns, name string, c corev1.EphemeralContainer) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var p corev1.Pod
		if err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &p); err != nil {
			return err
		}
		p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, c)
		return env.VirtualClient.SubResource("ephemeralcontainers").Update(ctx, &p)
	})
	if err != nil {
		t.Fatalf("add ephemeral container %s to %s/%s: %v", c.Name, ns, name, err)
	}
}

func ephemeralNames(p *corev1.Pod) []string {
	var out []string
	for _, c := range p.Spec.EphemeralContainers {
		out = append(out, c.Name)
	}
	return out
}

// controlPlaneNode makes a host node like a control plane's — tainted
// node-role.kubernetes.io/control-plane:NoSchedule, no kubelet — named
// cp-NS, removed when the test ends, and returns its name.
func controlPlaneNode(t *testing.T, ns string) string {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "cp-" + ns,
		Labels: map[string]string{"node-role.kubernetes.io/control-plane": "", "kubernetes.io/hostname": "cp-" + ns}},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}}}}
	create(t, env.HostClient, n)
	t.Cleanup(func() { _ = env.HostClient.Delete(ctx, n) })
	return n.Name
}

// foreignPodIP starts (once per namespace ns) a pod of another tenant: a
// host pod in host namespace other-NS, and returns its IP; the tenant's
// own pod "own" is started beside it.
func foreignPodIP(t *testing.T, ns string) string {
	t.Helper()
	other := "other-" + ns
	if err := env.HostClient.Get(ctx, client.ObjectKey{Name: other}, &corev1.Namespace{}); apierrors.IsNotFound(err) {
		create(t, env.HostClient, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: other}})
		t.Cleanup(func() { _ = env.HostClient.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: other}}) })
		create(t, env.HostClient, pod("victim", other, nil))
		runningPodOf(t, pod("own", ns, nil))
	}
	var p corev1.Pod
	testenv.Eventually(t, wait, func() error {
		if err := env.HostClient.Get(ctx, client.ObjectKey{Namespace: other, Name: "victim"}, &p); err != nil {
			return err
		}
		if p.Status.PodIP == "" {
			return fmt.Errorf("the other tenant's pod has no IP yet")
		}
		return nil
	})
	return p.Status.PodIP
}

// runningPodOf creates virtual pod p and waits until it runs.
func runningPodOf(t *testing.T, p *corev1.Pod) *corev1.Pod {
	t.Helper()
	create(t, env.VirtualClient, p)
	return runningPod(t, p.Name, p.Namespace)
}

// noHostNames fails t when msg, told to the tenant, names the host
// namespace.
func noHostNames(t *testing.T, msg string) {
	t.Helper()
	if strings.Contains(msg, env.HostNamespace) {
		t.Errorf("the tenant is told a host name: %s", msg)
	}
}

// A tenant's PersistentVolume of the node's files (hostPath /) is not
// synced at the baseline level, even with sync.toHost.persistentVolumes:
// a pod would get the node's / through a claim, which the pod's own check
// does not see.
func TestNodeFilesVolumeRefused(t *testing.T) {
	cfg := config.Default()
	cfg.Sync.ToHost.PersistentVolumes.Enabled = true
	withConfig(t, cfg)
	name := "root-" + rand.String(5)
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PersistentVolumeSpec{
		Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
		AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
	create(t, env.VirtualClient, pv)
	t.Cleanup(func() { _ = env.VirtualClient.Delete(ctx, pv) })
	noHostNames(t, syncErrorEvent(t, "", name, "not synced to the host: a hostPath volume gives its pods the node's files"))
	tr := translate.Translator{VCluster: env.Name, HostNamespace: env.HostNamespace}
	if err := env.HostClient.Get(ctx, client.ObjectKey{Name: tr.HostClusterScopedName(name)}, &corev1.PersistentVolume{}); !apierrors.IsNotFound(err) {
		t.Errorf("host copy of the hostPath volume: %v, want none", err)
	}
}

// With policies.podSecurityStandard privileged and every isolation rule
// off, the same attempts (and a tenant's hostPath volume) reach the host
// as the tenant wrote them: the
// switches work both ways (and the suite above fails for the right
// reason).
func TestPoliciesSwitchedOff(t *testing.T) {
	ns := env.NewNamespace(t)
	cfg := config.Default()
	cfg.Policies.PodSecurityStandard = config.PodSecurityPrivileged
	cfg.Policies.Isolation = config.Isolation{}
	cfg.Sync.ToHost.PersistentVolumes.Enabled = true
	withConfig(t, cfg)
	cp := controlPlaneNode(t, ns)
	controlPlane := corev1.Toleration{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	create(t, env.VirtualClient, pod("p", ns, func(p *corev1.Pod) {
		p.Spec.HostPID = true
		p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
		p.Spec.Tolerations = []corev1.Toleration{controlPlane}
		p.Spec.NodeName = cp
	}))
	create(t, env.VirtualClient, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: ns},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "x"}, ExternalIPs: []string{"1.2.3.4"}, Ports: []corev1.ServicePort{{Port: 80}}}})

	h := hostObject(t, &corev1.Pod{}, "p", ns)
	if !h.Spec.HostPID || h.Spec.Containers[0].SecurityContext == nil || !ptr.Deref(h.Spec.Containers[0].SecurityContext.Privileged, false) {
		t.Errorf("host pod hostPID %v security context %+v, want them as the tenant wrote them", h.Spec.HostPID, h.Spec.Containers[0].SecurityContext)
	}
	if h.Spec.NodeName != cp || !slices.ContainsFunc(h.Spec.Tolerations, func(x corev1.Toleration) bool { return x.MatchToleration(&controlPlane) }) {
		t.Errorf("host pod node %q tolerations %+v, want %s and the control-plane toleration", h.Spec.NodeName, h.Spec.Tolerations, cp)
	}
	if s := hostObject(t, &corev1.Service{}, "s", ns); !slices.Equal(s.Spec.ExternalIPs, []string{"1.2.3.4"}) {
		t.Errorf("host Service externalIPs %v, want 1.2.3.4", s.Spec.ExternalIPs)
	}
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "root-" + ns}, Spec: corev1.PersistentVolumeSpec{
		Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
		AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
	create(t, env.VirtualClient, pv)
	t.Cleanup(func() { _ = env.VirtualClient.Delete(ctx, pv) })
	tr := translate.Translator{VCluster: env.Name, HostNamespace: env.HostNamespace}
	testenv.Eventually(t, wait, func() error {
		return env.HostClient.Get(ctx, client.ObjectKey{Name: tr.HostClusterScopedName(pv.Name)}, &corev1.PersistentVolume{})
	})
}
