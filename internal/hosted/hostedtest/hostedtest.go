// Package hostedtest is what the hosted-cluster tests share: a real
// kube-apiserver with the hosted-cluster CRDs installed, started once per
// test package from TestMain, and a settable clock for the EKS emulator.
package hostedtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	aksv1 "github.com/clustersync/clustersync/api/aks/v1"
	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	gkev1 "github.com/clustersync/clustersync/api/gke/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/config/crd"
	"github.com/clustersync/clustersync/internal/binaries"
	"github.com/clustersync/clustersync/internal/virtual/controlplane"
)

// Env is a kube-apiserver (with etcd and kube-controller-manager) that has
// the hosted-cluster CRDs.
type Env struct {
	// Scheme knows the built-in kinds and both hosted-cluster API groups.
	Scheme *runtime.Scheme
	// Client and Kube talk to the API server directly (no cache).
	Client client.Client
	Kube   kubernetes.Interface
	// Config reaches the API server as its administrator.
	Config *rest.Config
	// Kubeconfig is the path of an administrator kubeconfig, for kubectl.
	Kubeconfig string
}

// Main is a TestMain body: it starts an Env into *env, runs the tests and
// stops it, returning the exit code. Under -short *env stays nil and the
// tests run without it (tests that need it skip through Require).
func Main(m *testing.M, env **Env) int {
	return MainMany(m, Cluster{Name: "hosted", CRDs: true, Env: env})
}

// Cluster is one API server MainMany starts.
type Cluster struct {
	// Name names it (and its state folder).
	Name string
	// CRDs installs clustersync's CRDs.
	CRDs bool
	// K3s runs the kube-apiserver linked with version "<version>+k3s1"
	// (binaries.Set.KubeAPIServerK3s).
	K3s bool
	// Env receives it.
	Env **Env
}

// MainMany is Main for several API servers, started in the order given and
// stopped after the tests.
func MainMany(m *testing.M, clusters ...Cluster) int {
	bins, err := binaries.ForTestMain()
	if errors.Is(err, binaries.ErrShort) {
		return m.Run()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dir, err := os.MkdirTemp("", "clustersync-hosted-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	for _, c := range clusters {
		b := bins
		if c.K3s {
			b.KubeAPIServer = bins.KubeAPIServerK3s
		}
		e, stop, err := Start(b, filepath.Join(dir, c.Name), c.Name, c.CRDs)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer stop()
		*c.Env = e
	}
	return m.Run()
}

// APIServer returns the Env's API server URL and its CA certificates
// (PEM): what a cloud reports for a managed cluster when the Env plays that
// cluster (ekstest.Options.EndpointFor and CertificateAuthorityFor).
func (e *Env) APIServer(t testing.TB) (endpoint string, caPEM []byte) {
	t.Helper()
	cfg := rest.CopyConfig(e.Config)
	if err := rest.LoadTLSFiles(cfg); err != nil {
		t.Fatal(err)
	}
	return cfg.Host, cfg.CAData
}

// AdminToken makes ServiceAccount ns/admin (ns must exist) bound to
// cluster-admin by ClusterRoleBinding "<ns>-admin", deleted when t ends,
// and returns a 10-minute token for it from the TokenRequest API: the
// credential a cloud would hand out for a managed cluster (an IAM token for
// EKS).
func (e *Env) AdminToken(t testing.TB, ns string) string {
	t.Helper()
	ctx := context.Background()
	if _, err := e.Kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "admin"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "admin", Namespace: ns}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
	}
	if _, err := e.Kube.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.Kube.RbacV1().ClusterRoleBindings().Delete(context.Background(), crb.Name, metav1.DeleteOptions{})
	})
	tr, err := e.Kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "admin",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(600))}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// Namespace creates a namespace for t, named after the test (lowercase,
// "/", "_" and spaces as "-", at most 63 characters; "-2", "-3", … when
// that name is taken, as by the same test's previous run under go test
// -count=N, whose namespace may still be terminating), and deletes it when
// t ends.
func (e *Env) Namespace(t testing.TB) string {
	t.Helper()
	base := strings.ToLower(strings.NewReplacer("/", "-", "_", "-", " ", "-").Replace(t.Name()))
	for i := 1; ; i++ {
		suffix := ""
		if i > 1 {
			suffix = fmt.Sprintf("-%d", i)
		}
		ns := strings.Trim(base[:min(len(base), 63-len(suffix))], "-") + suffix
		_, err := e.Kube.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) && i < 100 {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = e.Kube.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
		})
		return ns
	}
}

// Start starts a kube-apiserver (with etcd and kube-controller-manager)
// named name with its state under dir, installs the CRDs when crds is
// true, and returns its Env and the function that stops it. For a
// TestMain that needs more than one API server (Main starts one).
func Start(bins binaries.Set, dir, name string, crds bool) (*Env, func(), error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cp, err := controlplane.Start(ctx, controlplane.Options{Dir: dir, Name: name, ServiceCIDR: "10.96.0.0/16", Binaries: bins})
	if err != nil {
		return nil, nil, err
	}
	fail := func(err error) (*Env, func(), error) { cp.Stop(); return nil, nil, err }
	if crds {
		if err := crd.Install(ctx, cp.Config); err != nil {
			return fail(err)
		}
	}
	// Tests drive controllers by hand, many requests a second: client-go's
	// default limit (5 requests/s) would make every request after the
	// first ten wait 200 ms.
	cfg := rest.CopyConfig(cp.Config)
	cfg.QPS, cfg.Burst = -1, 0
	e := &Env{Scheme: runtime.NewScheme(), Kube: kubernetes.NewForConfigOrDie(cfg), Config: cfg, Kubeconfig: cp.Layout.AdminKubeconfig()}
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, eksv1.AddToScheme, aksv1.AddToScheme, gkev1.AddToScheme, mgmtv1.AddToScheme} {
		if err := add(e.Scheme); err != nil {
			return fail(err)
		}
	}
	if e.Client, err = client.New(cfg, client.Options{Scheme: e.Scheme}); err != nil {
		return fail(err)
	}
	return e, cp.Stop, nil
}

// Require skips t when env is nil (-short).
func Require(t testing.TB, env *Env) {
	t.Helper()
	if env == nil {
		t.Skip(binaries.ErrShort)
	}
}

// Clock is a clock tests set and advance; its Now goes to
// ekstest.Options.Now. Safe for concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a Clock showing t.
func NewClock(t time.Time) *Clock { return &Clock{now: t} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// EventNotes returns the notes of the events of reason (e.g.
// "OutsideChange") about obj, once every event rec recorded before the
// call has reached the API server: a marker event recorded last is waited
// for, 10 seconds at most.
func EventNotes(t testing.TB, kube kubernetes.Interface, rec events.EventRecorder, obj client.Object, reason string) []string {
	t.Helper()
	marker := "marker " + time.Now().Format(time.RFC3339Nano)
	rec.Eventf(obj, nil, corev1.EventTypeNormal, "TestMarker", "Test", "%s", marker)
	deadline := time.Now().Add(10 * time.Second)
	for {
		list, err := kube.EventsV1().Events("").List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var notes []string
		seen := false
		for _, e := range list.Items {
			if e.Regarding.Name != obj.GetName() {
				continue
			}
			switch e.Reason {
			case reason:
				notes = append(notes, e.Note)
			case "TestMarker":
				seen = seen || e.Note == marker
			}
		}
		if seen {
			return notes
		}
		if time.Now().After(deadline) {
			t.Fatal("the marker event never arrived")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Example returns the Cluster of examples/hosted/<name>.yaml, as a user
// applies it (strict: a field the API does not know fails t).
func Example(t testing.TB, name string) mgmtv1.Cluster {
	t.Helper()
	_, self, _, _ := goruntime.Caller(0)
	path := filepath.Join(filepath.Dir(self), "..", "..", "..", "examples", "hosted", name+".yaml")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var c mgmtv1.Cluster
	if err := yaml.UnmarshalStrict(raw, &c); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return c
}
