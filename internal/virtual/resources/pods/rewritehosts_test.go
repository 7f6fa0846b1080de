package pods

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// The init container's script, run for real with sh and sed on a hosts file
// as the host kubelet writes it, names the virtual FQDN.
func TestRewriteHostsScript(t *testing.T) {
	if _, err := exec.LookPath("sed"); err != nil {
		t.Skip("no sed")
	}
	dir := t.TempDir()
	hosts := "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost\n" +
		"10.0.1.7\tweb-0.web-x-shop-x-vc.vc-host.svc.cluster.local\tweb-0\n" +
		"10.0.1.9\tweb-01.other.vc-host.svc.cluster.local\tweb-01\n"
	if err := os.WriteFile(filepath.Join(dir, "hosts.in"), []byte(hosts), 0o600); err != nil {
		t.Fatal(err)
	}
	script := RewriteHostsScript("web-0", "web-0.web.shop.svc.cluster.local")
	script = strings.ReplaceAll(script, "/hosts/hosts", filepath.Join(dir, "hosts.out"))
	script = strings.ReplaceAll(script, "/etc/hosts", filepath.Join(dir, "hosts.in"))
	if out, err := exec.Command("sh", "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("script failed: %v\n%s", err, out)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "hosts.out"))
	want := strings.Replace(hosts, "web-0.web-x-shop-x-vc.vc-host.svc.cluster.local", "web-0.web.shop.svc.cluster.local", 1)
	if string(got) != want {
		t.Fatalf("rewritten hosts:\n%s\nwant:\n%s", got, want)
	}
}

func TestHostSpecRewriteHosts(t *testing.T) {
	tr := translate.Translator{VCluster: "vc", HostNamespace: "vc-host"}
	rh := &RewriteHosts{Image: "library/alpine:3.20"}
	env := Environment{Translator: tr, HostServiceAccount: "vc-workload-vc", ClusterDomain: "cluster.local", RewriteHosts: rh}
	sts := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "shop"}, Spec: corev1.PodSpec{
		Hostname: "web-0", Subdomain: "web",
		InitContainers: []corev1.Container{{Name: "setup", Image: "busybox"}},
		Containers:     []corev1.Container{{Name: "main", Image: "nginx"}},
	}}
	spec := HostSpec(sts, env, nil)
	if len(spec.InitContainers) != 2 || spec.InitContainers[0].Name != RewriteHostsContainer || spec.InitContainers[0].Image != rh.Image {
		t.Fatalf("init containers = %+v", spec.InitContainers)
	}
	if !strings.Contains(spec.InitContainers[0].Command[2], "web-0.web.shop.svc.cluster.local") {
		t.Errorf("script does not name the virtual FQDN: %s", spec.InitContainers[0].Command[2])
	}
	for _, c := range append(spec.InitContainers[1:], spec.Containers...) {
		if !mountsEtcHosts(&corev1.PodSpec{Containers: []corev1.Container{c}}) {
			t.Errorf("container %s does not mount the rewritten /etc/hosts", c.Name)
		}
	}
	// Spec changes later match containers by name, not position.
	v := sts.DeepCopy()
	v.Spec.InitContainers[0].Image = "busybox:2"
	syncSpec(&spec, &v.Spec, env)
	if spec.InitContainers[0].Image != rh.Image || spec.InitContainers[1].Image != "busybox:2" {
		t.Errorf("images after sync: %s, %s", spec.InitContainers[0].Image, spec.InitContainers[1].Image)
	}

	plain := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "shop"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main"}}}}
	if spec := HostSpec(plain, env, nil); len(spec.InitContainers) != 0 {
		t.Errorf("a pod without subdomain got %+v", spec.InitContainers)
	}
	env.RewriteHosts = nil
	if spec := HostSpec(sts, env, nil); len(spec.InitContainers) != 1 {
		t.Errorf("rewriteHosts off still added %+v", spec.InitContainers)
	}
}
