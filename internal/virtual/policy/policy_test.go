package policy

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestPodSecurity(t *testing.T) {
	plain := func(mutate func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
		if mutate != nil {
			mutate(p)
		}
		return p
	}
	restrictedOK := func(p *corev1.Pod) {
		p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
		p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false),
			Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
	}
	tests := []struct {
		name  string
		level string
		pod   *corev1.Pod
		want  string // "" passes; else a part of the error
	}{
		{"plain pod, baseline", "baseline", plain(nil), ""},
		{"privileged container", "baseline", plain(func(p *corev1.Pod) {
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
		}), `pods "web" is forbidden: violates PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)`},
		{"hostPath /", "baseline", plain(func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
		}), `hostPath volumes (volume "root")`},
		{"host namespaces", "baseline", plain(func(p *corev1.Pod) { p.Spec.HostNetwork, p.Spec.HostPID, p.Spec.HostIPC = true, true, true }),
			"host namespaces (hostNetwork=true, hostPID=true, hostIPC=true)"},
		{"host port", "baseline", plain(func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}
		}), "hostPort (container \"c\" uses hostPort 8080)"},
		{"added capability in an init container", "baseline", plain(func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox",
				SecurityContext: &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"SYS_ADMIN"}}}}}
		}), `non-default capabilities (container "init" must not include "SYS_ADMIN"`},
		{"privileged ephemeral container", "baseline", plain(func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
				Name: "debug", Image: "busybox", SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)}}}}
		}), `container "debug" must not set securityContext.privileged=true`},
		{"privileged level lets it through", "privileged", plain(func(p *corev1.Pod) {
			p.Spec.HostPID = true
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
		}), ""},
		{"plain pod, restricted", "restricted", plain(nil), `violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false`},
		{"hardened pod, restricted", "restricted", plain(restrictedOK), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps, err := NewPodSecurity(tt.level)
			if err != nil {
				t.Fatal(err)
			}
			err = ps.Check(tt.pod)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Check: %v, want it to pass", err)
			case tt.want != "" && err == nil:
				t.Fatalf("Check passed, want %q", tt.want)
			case tt.want != "" && !strings.Contains(err.Error(), tt.want):
				t.Fatalf("Check:\n%v\nwant it to contain\n%s", err, tt.want)
			}
		})
	}
	if _, err := NewPodSecurity("strict"); err == nil || !strings.Contains(err.Error(), `"strict"`) {
		t.Errorf("NewPodSecurity(strict) = %v, want an error naming the level", err)
	}
}

func TestHostTolerations(t *testing.T) {
	tol := func(key, op, value string, effect corev1.TaintEffect) corev1.Toleration {
		return corev1.Toleration{Key: key, Operator: corev1.TolerationOperator(op), Value: value, Effect: effect}
	}
	notReady := corev1.Toleration{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists,
		Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)}
	controlPlane := tol("node-role.kubernetes.io/control-plane", "Exists", "", corev1.TaintEffectNoSchedule)
	everything := tol("", "Exists", "", "")
	gpu := tol("gpu", "Equal", "a100", corev1.TaintEffectNoSchedule)
	tests := []struct {
		name              string
		tenant, enforced  []corev1.Toleration
		wantKept, wantOut []corev1.Toleration
	}{
		{"node-condition taints kept", []corev1.Toleration{notReady}, nil, []corev1.Toleration{notReady}, nil},
		{"control plane dropped", []corev1.Toleration{notReady, controlPlane}, nil, []corev1.Toleration{notReady}, []corev1.Toleration{controlPlane}},
		{"tolerate everything dropped", []corev1.Toleration{everything}, []corev1.Toleration{gpu}, nil, []corev1.Toleration{everything}},
		{"covered by the same enforced", []corev1.Toleration{gpu}, []corev1.Toleration{gpu}, []corev1.Toleration{gpu}, nil},
		{"covered by an enforced Exists of the key", []corev1.Toleration{gpu}, []corev1.Toleration{tol("gpu", "Exists", "", "")}, []corev1.Toleration{gpu}, nil},
		{"other value not covered", []corev1.Toleration{tol("gpu", "Equal", "h100", corev1.TaintEffectNoSchedule)}, []corev1.Toleration{gpu},
			nil, []corev1.Toleration{tol("gpu", "Equal", "h100", corev1.TaintEffectNoSchedule)}},
		{"Exists wider than an enforced Equal", []corev1.Toleration{tol("gpu", "Exists", "", corev1.TaintEffectNoSchedule)}, []corev1.Toleration{gpu},
			nil, []corev1.Toleration{tol("gpu", "Exists", "", corev1.TaintEffectNoSchedule)}},
		{"every effect wider than one effect", []corev1.Toleration{tol("gpu", "Equal", "a100", "")}, []corev1.Toleration{gpu},
			nil, []corev1.Toleration{tol("gpu", "Equal", "a100", "")}},
		{"an enforced empty key with Exists covers its effect", []corev1.Toleration{controlPlane}, []corev1.Toleration{tol("", "Exists", "", corev1.TaintEffectNoSchedule)},
			[]corev1.Toleration{controlPlane}, nil},
		{"empty key with Equal is not node-condition", []corev1.Toleration{tol("", "Equal", "", corev1.TaintEffectNoSchedule)}, nil,
			nil, []corev1.Toleration{tol("", "Equal", "", corev1.TaintEffectNoSchedule)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kept, out := HostTolerations(tt.tenant, tt.enforced)
			eq := func(a, b []corev1.Toleration) bool {
				return slices.EqualFunc(a, b, func(x, y corev1.Toleration) bool { return x.MatchToleration(&y) })
			}
			if !eq(kept, tt.wantKept) || !eq(out, tt.wantOut) {
				t.Fatalf("kept %v dropped %v, want %v and %v", kept, out, tt.wantKept, tt.wantOut)
			}
		})
	}
}

func TestTolerationString(t *testing.T) {
	for _, tt := range []struct {
		t    corev1.Toleration
		want string
	}{
		{corev1.Toleration{Key: "a", Operator: corev1.TolerationOpEqual, Value: "b", Effect: corev1.TaintEffectNoSchedule}, "a=b:NoSchedule"},
		{corev1.Toleration{Key: "a", Operator: corev1.TolerationOpExists}, "a"},
		{corev1.Toleration{Operator: corev1.TolerationOpExists}, "(every taint)"},
		{corev1.Toleration{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}, ":NoExecute"},
	} {
		if got := TolerationString(tt.t); got != tt.want {
			t.Errorf("TolerationString(%+v) = %q, want %q", tt.t, got, tt.want)
		}
	}
}

func TestHostNodeName(t *testing.T) {
	visible := func(n string) bool { return n == "worker-1" }
	tests := []struct {
		name               string
		node               string
		enforce, realNodes bool
		want               string
	}{
		{"unset", "", true, true, ""},
		{"fake nodes: cleared", "worker-1", true, false, ""},
		{"real nodes, visible: kept", "worker-1", true, true, "worker-1"},
		{"real nodes, not visible: cleared", "control-plane", true, true, ""},
		{"rule off: kept", "control-plane", false, false, "control-plane"},
	}
	for _, tt := range tests {
		if got := HostNodeName(tt.node, tt.enforce, tt.realNodes, visible); got != tt.want {
			t.Errorf("%s: HostNodeName = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestAllowedAddresses(t *testing.T) {
	own := PodIPSet([]string{"10.244.0.5", "fd00::5", "not-an-ip"})
	allowed, refused := AllowedAddresses([]string{"10.244.0.5", "10.244.0.6", "10.244.0.05", "fd00:0::5", "::ffff:10.244.0.5", "host.example"}, own)
	if want := []string{"10.244.0.5", "fd00:0::5", "::ffff:10.244.0.5"}; !slices.Equal(allowed, want) {
		t.Errorf("allowed %q, want %q", allowed, want)
	}
	if want := []string{"10.244.0.6", "10.244.0.05", "host.example"}; !slices.Equal(refused, want) {
		t.Errorf("refused %q, want %q", refused, want)
	}
	if len(own) != 2 {
		t.Errorf("PodIPSet kept %d entries, want 2", len(own))
	}
}

func TestNodeFilesVolume(t *testing.T) {
	for _, tt := range []struct {
		src  corev1.PersistentVolumeSource
		want string
	}{
		{corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}, "hostPath"},
		{corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: "/mnt/disks/a"}}, "local"},
		{corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{Server: "nfs", Path: "/"}}, ""},
		{corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "d", VolumeHandle: "h"}}, ""},
	} {
		if got := NodeFilesVolume(&corev1.PersistentVolumeSpec{PersistentVolumeSource: tt.src}); got != tt.want {
			t.Errorf("NodeFilesVolume(%+v) = %q, want %q", tt.src, got, tt.want)
		}
	}
}

// BenchmarkPodSecurityCheck is the cost of the baseline check of a plain
// two-container pod, which every pod pays before it reaches the host and
// at each of its syncs (make bench prints it).
func BenchmarkPodSecurityCheck(b *testing.B) {
	ps, err := NewPodSecurity("baseline")
	if err != nil {
		b.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}, Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "init", Image: "busybox"}},
		Containers:     []corev1.Container{{Name: "app", Image: "nginx", Ports: []corev1.ContainerPort{{ContainerPort: 80}}}, {Name: "sidecar", Image: "envoy"}},
		Volumes:        []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}}}
	b.ReportAllocs()
	for b.Loop() {
		if err := ps.Check(pod); err != nil {
			b.Fatal(err)
		}
	}
}
