package controlplane

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/clustersync/clustersync/internal/binaries"
	"github.com/clustersync/clustersync/internal/ports"
	"github.com/clustersync/clustersync/internal/proc"
)

func bins(t *testing.T) binaries.Set { return binaries.Require(t) }

func start(t *testing.T, o Options) *ControlPlane {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cp, err := Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	return cp
}

func createConfigMap(t *testing.T, cp *ControlPlane, name string) {
	t.Helper()
	k := kubernetes.NewForConfigOrDie(cp.Config)
	_, err := k.CoreV1().ConfigMaps("default").Create(context.Background(),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

func getConfigMap(cp *ControlPlane, name string) error {
	k := kubernetes.NewForConfigOrDie(cp.Config)
	_, err := k.CoreV1().ConfigMaps("default").Get(context.Background(), name, metav1.GetOptions{})
	return err
}

// A stopped control plane starts again with its objects, its certificates
// and its address unchanged, so the tenant's kubeconfig keeps working.
func TestRestartKeepsStateAndAddress(t *testing.T) {
	o := Options{Dir: t.TempDir(), Name: "restart", ServiceCIDR: "10.96.0.0/16", Binaries: bins(t)}
	cp := start(t, o)
	createConfigMap(t, cp, "kept")
	port := cp.Ports.APIServer
	kubeconfig, _ := os.ReadFile(cp.Layout.AdminKubeconfig())
	cp.Stop()

	cp = start(t, o)
	defer cp.Stop()
	if cp.Ports.APIServer != port {
		t.Errorf("API server port %d after restart, was %d", cp.Ports.APIServer, port)
	}
	if after, _ := os.ReadFile(cp.Layout.AdminKubeconfig()); string(after) != string(kubeconfig) {
		t.Error("the admin kubeconfig changed across a restart")
	}
	if err := getConfigMap(cp, "kept"); err != nil {
		t.Errorf("object lost across a restart: %v", err)
	}
}

// With an external etcd the control plane runs no etcd of its own; a
// control plane of the same name on the same etcd sees the first one's
// objects, and one of another name does not (each has its own key prefix).
func TestExternalEtcd(t *testing.T) {
	b := bins(t)
	dir := t.TempDir()
	leased, err := ports.Default().Reserve(t.Context(), dir, 2)
	if err != nil {
		t.Fatal(err)
	}
	client, peer := leased[0], leased[1]
	url := fmt.Sprintf("http://127.0.0.1:%d", client)
	etcd, err := proc.Start("etcd", b.Etcd, []string{
		"--data-dir", filepath.Join(dir, "etcd"), "--listen-client-urls", url, "--advertise-client-urls", url,
		"--listen-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", peer), "--initial-advertise-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", peer),
		"--initial-cluster", fmt.Sprintf("default=http://127.0.0.1:%d", peer),
	}, filepath.Join(dir, "etcd.log"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer etcd.Stop(5 * time.Second)

	ext := &ExternalEtcd{Endpoints: []string{url}}
	first := start(t, Options{Dir: filepath.Join(dir, "first"), Name: "first", ServiceCIDR: "10.96.0.0/16", Binaries: b, Etcd: ext})
	createConfigMap(t, first, "shared")
	if _, err := os.Stat(first.Layout.EtcdData()); !os.IsNotExist(err) {
		t.Errorf("an embedded etcd data folder exists with an external etcd (%v)", err)
	}
	first.Stop()

	again := start(t, Options{Dir: filepath.Join(dir, "again"), Name: "first", ServiceCIDR: "10.96.0.0/16", Binaries: b, Etcd: ext})
	if err := getConfigMap(again, "shared"); err != nil {
		t.Errorf("object not in the external etcd: %v", err)
	}
	again.Stop()
	other := start(t, Options{Dir: filepath.Join(dir, "other"), Name: "other", ServiceCIDR: "10.96.0.0/16", Binaries: b, Etcd: ext})
	defer other.Stop()
	if err := getConfigMap(other, "shared"); err == nil {
		t.Error("a virtual cluster of another name sees the first one's object in the shared etcd")
	}
}

// A component that cannot start fails Start with the end of its log.
func TestStartFailureShowsLog(t *testing.T) {
	b := bins(t)
	_, err := Start(context.Background(), Options{Dir: t.TempDir(), Name: "bad", ServiceCIDR: "not-a-cidr", Binaries: b})
	if err == nil {
		t.Fatal("Start with an invalid service range succeeded")
	}
	if msg := err.Error(); !strings.Contains(msg, "kube-apiserver") || !strings.Contains(msg, "last lines of") {
		t.Errorf("error does not name the component and its log:\n%s", msg)
	}
}
