package runner_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/testenv"
	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/resources/fromhost"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// crdClient is a client of cfg that knows CustomResourceDefinitions.
func crdClient(t *testing.T, cfg *rest.Config) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// installCRD creates a CRD of group example.com on the host with an open
// schema and waits until the host serves it.
func installCRD(t *testing.T, c client.Client, plural, kind string, scope apiextensionsv1.ResourceScope, status bool) {
	t.Helper()
	v := apiextensionsv1.CustomResourceDefinitionVersion{Name: "v1", Served: true, Storage: true,
		Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
			Type: "object", XPreserveUnknownFields: ptrTo(true)}}}
	if status {
		v.Subresources = &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}}
	}
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: plural + ".example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: "example.com", Scope: scope,
			Names:    apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Singular: kind[:1] + kind[1:], Kind: kind, ListKind: kind + "List"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{v}}}
	crd.Spec.Names.Singular = ""
	create(t, c, crd)
	testenv.Eventually(t, wait, func() error {
		var got apiextensionsv1.CustomResourceDefinition
		if err := c.Get(ctx, client.ObjectKeyFromObject(crd), &got); err != nil {
			return err
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("CRD %s not established", crd.Name)
	})
}

func ptrTo[T any](v T) *T { return &v }

func object(gvk schema.GroupVersionKind, name, ns string, fields map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: fields}
	u.SetGroupVersionKind(gvk)
	u.SetName(name)
	u.SetNamespace(ns)
	return u
}

// sync.toHost.customResources and sync.fromHost.customResources on real API
// servers: the CRDs are copied from the host into the virtual cluster at
// start; a Widget goes to the host under its translated name with its
// spec, the entry's patches applied (a reference patch renames the Secret
// it names and makes it used, so the Secret is synced; a labels patch
// translates its selector); the host's status comes back through the
// status subresource; an edit follows; deleting it removes the host copy.
// A cluster-scoped host Gadget appears read-only in the virtual cluster.
func TestCustomResources(t *testing.T) {
	ns := env.NewNamespace(t)
	hostCRDs, virtualCRDs := crdClient(t, env.Host.Config), crdClient(t, env.Virtual.Config)
	installCRD(t, hostCRDs, "widgets", "Widget", apiextensionsv1.NamespaceScoped, true)
	installCRD(t, hostCRDs, "gadgets", "Gadget", apiextensionsv1.ClusterScoped, false)
	widget := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	gadget := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Gadget"}
	create(t, env.HostClient, object(gadget, "g1", "", map[string]any{"spec": map[string]any{"color": "red"}}))

	cfg := config.Default()
	cfg.Sync.ToHost.CustomResources = map[string]config.ToHostCustomResource{"widgets.example.com": {Enabled: true,
		Translate: []config.Patch{
			{Path: "spec.secretName", Reference: &config.PatchReference{APIVersion: "v1", Kind: "Secret"}},
			{Path: "spec.selector", Labels: &config.PatchLabels{}},
		}}}
	cfg.Sync.FromHost.CustomResources = map[string]config.FromHostCustomResource{"gadgets.example.com": {Enabled: true}}
	withConfig(t, cfg)

	// The definitions are in the virtual cluster, marked as copies.
	for _, name := range []string{"widgets.example.com", "gadgets.example.com"} {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := virtualCRDs.Get(ctx, client.ObjectKey{Name: name}, &crd); err != nil {
			t.Fatalf("virtual CRD %s: %v", name, err)
		}
		if crd.Labels[fromhost.Label] != "true" {
			t.Errorf("virtual CRD %s labels %v", name, crd.Labels)
		}
	}

	// fromHost: the host's Gadget, read-only.
	testenv.Eventually(t, wait, func() error {
		g := object(gadget, "", "", map[string]any{})
		if err := env.VirtualClient.Get(ctx, client.ObjectKey{Name: "g1"}, g); err != nil {
			return err
		}
		if c, _, _ := unstructured.NestedString(g.Object, "spec", "color"); c != "red" || g.GetLabels()[fromhost.Label] != "true" {
			return fmt.Errorf("virtual gadget %v", g.Object)
		}
		return nil
	})

	// toHost: a Widget and the Secret it names.
	create(t, env.VirtualClient, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: ns},
		Data: map[string][]byte{"password": []byte("p")}})
	neverOnHost(t, &corev1.Secret{}, "creds", ns, time.Second)
	create(t, env.VirtualClient, object(widget, "w1", ns, map[string]any{"spec": map[string]any{
		"size": int64(3), "secretName": "creds", "selector": map[string]any{"app": "web"}}}))
	host := hostObject(t, object(widget, "", "", map[string]any{}), "w1", ns)
	spec, _, _ := unstructured.NestedMap(host.Object, "spec")
	if spec["size"] != int64(3) || spec["secretName"] != env.HostKey("creds", ns).Name {
		t.Errorf("host widget spec %v: want size 3 and secretName %s", spec, env.HostKey("creds", ns).Name)
	}
	sel, _, _ := unstructured.NestedStringMap(host.Object, "spec", "selector")
	if sel["app"] != "web" || sel[translate.LabelManagedBy] != env.Name || sel[translate.LabelNamespace] != ns {
		t.Errorf("host widget selector %v: want it translated (app=web of this virtual cluster's namespace %s)", sel, ns)
	}
	hostObject(t, &corev1.Secret{}, "creds", ns)

	// Status from the host, through the status subresource.
	if err := unstructured.SetNestedField(host.Object, "Ready", "status", "phase"); err != nil {
		t.Fatal(err)
	}
	if err := env.HostClient.Status().Update(ctx, host); err != nil {
		t.Fatal(err)
	}
	virtualWidget := func(check func(*unstructured.Unstructured) error) {
		t.Helper()
		testenv.Eventually(t, wait, func() error {
			v := object(widget, "", "", map[string]any{})
			if err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "w1"}, v); err != nil {
				return err
			}
			return check(v)
		})
	}
	virtualWidget(func(v *unstructured.Unstructured) error {
		if p, _, _ := unstructured.NestedString(v.Object, "status", "phase"); p != "Ready" {
			return fmt.Errorf("virtual widget status %v", v.Object["status"])
		}
		if s, _, _ := unstructured.NestedString(v.Object, "spec", "secretName"); s != "creds" {
			return fmt.Errorf("virtual widget secretName changed to %q", s)
		}
		return nil
	})

	// An edit of the virtual spec reaches the host.
	v := object(widget, "", "", map[string]any{})
	if err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "w1"}, v); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(v.Object, int64(5), "spec", "size"); err != nil {
		t.Fatal(err)
	}
	if err := env.VirtualClient.Update(ctx, v); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, wait, func() error {
		h := object(widget, "", "", map[string]any{})
		if err := env.HostClient.Get(ctx, env.HostKey("w1", ns), h); err != nil {
			return err
		}
		if n, _, _ := unstructured.NestedInt64(h.Object, "spec", "size"); n != 5 {
			return fmt.Errorf("host widget size %d, want 5", n)
		}
		return nil
	})

	// Deleted in the virtual cluster: gone from the host.
	if err := env.VirtualClient.Delete(ctx, v); err != nil {
		t.Fatal(err)
	}
	hostGone(t, object(widget, "", "", map[string]any{}), "w1", ns)
}

// A namespaced host kind in sync.fromHost.customResources is copied as its
// mappings.byName say: every object of a host namespace into a virtual
// namespace, one object renamed, one object of the virtual cluster's own
// host namespace into a virtual namespace the syncer creates; a host edit
// follows, a virtual edit is put back, a host deletion removes the copy.
func TestFromHostNamespacedCustomResources(t *testing.T) {
	ns := env.NewNamespace(t)
	src, copies := "src-"+ns, ns+"-copies"
	create(t, env.HostClient, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: src}})
	t.Cleanup(func() { _ = env.HostClient.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: src}}) })
	t.Cleanup(func() {
		_ = env.VirtualClient.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: copies}})
	})
	installCRD(t, crdClient(t, env.Host.Config), "doohickeys", "Doohickey", apiextensionsv1.NamespaceScoped, false)
	gvk := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Doohickey"}
	for _, o := range []*unstructured.Unstructured{
		object(gvk, "d1", src, map[string]any{"spec": map[string]any{"size": int64(1)}}),
		object(gvk, "d2", src, map[string]any{"spec": map[string]any{"size": int64(2)}}),
		object(gvk, "own-"+ns, env.HostNamespace, map[string]any{"spec": map[string]any{"size": int64(3)}}),
	} {
		create(t, env.HostClient, o)
	}
	t.Cleanup(func() { _ = env.HostClient.Delete(ctx, object(gvk, "own-"+ns, env.HostNamespace, map[string]any{})) })

	cfg := config.Default()
	cfg.Sync.FromHost.CustomResources = map[string]config.FromHostCustomResource{"doohickeys.example.com": {Enabled: true, Scope: "Namespaced",
		Mappings: config.FromHostMappings{ByName: map[string]string{src + "/*": ns + "/*", src + "/d2": ns + "/renamed", "/own-" + ns: copies + "/own"}}}}
	withConfig(t, cfg)

	size := func(key client.ObjectKey) func() (int64, error) {
		return func() (int64, error) {
			v := object(gvk, "", "", map[string]any{})
			if err := env.VirtualClient.Get(ctx, key, v); err != nil {
				return 0, err
			}
			if v.GetLabels()[fromhost.Label] != "true" {
				return 0, fmt.Errorf("%s is not labelled as a copy: %v", key, v.GetLabels())
			}
			n, _, _ := unstructured.NestedInt64(v.Object, "spec", "size")
			return n, nil
		}
	}
	wantSize := func(key client.ObjectKey, want int64) {
		t.Helper()
		testenv.Eventually(t, wait, func() error {
			n, err := size(key)()
			if err != nil {
				return err
			}
			if n != want {
				return fmt.Errorf("virtual %s size %d, want %d", key, n, want)
			}
			return nil
		})
	}
	wantSize(client.ObjectKey{Namespace: ns, Name: "d1"}, 1)
	wantSize(client.ObjectKey{Namespace: ns, Name: "renamed"}, 2)
	wantSize(client.ObjectKey{Namespace: copies, Name: "own"}, 3)
	if err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "d2"}, object(gvk, "", "", map[string]any{})); !apierrors.IsNotFound(err) {
		t.Errorf("d2 copied under its own name too (err %v)", err)
	}

	// A host edit follows; a virtual edit is put back.
	setSize := func(c client.Client, key client.ObjectKey, n int64) {
		t.Helper()
		o := object(gvk, "", "", map[string]any{})
		if err := c.Get(ctx, key, o); err != nil {
			t.Fatal(err)
		}
		if err := unstructured.SetNestedField(o.Object, n, "spec", "size"); err != nil {
			t.Fatal(err)
		}
		if err := c.Update(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	setSize(env.HostClient, client.ObjectKey{Namespace: src, Name: "d1"}, 10)
	wantSize(client.ObjectKey{Namespace: ns, Name: "d1"}, 10)
	setSize(env.VirtualClient, client.ObjectKey{Namespace: ns, Name: "d1"}, 99)
	wantSize(client.ObjectKey{Namespace: ns, Name: "d1"}, 10)

	// Deleted on the host: the copy goes.
	if err := env.HostClient.Delete(ctx, object(gvk, "d1", src, map[string]any{})); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, wait, func() error {
		err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "d1"}, object(gvk, "", "", map[string]any{}))
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("virtual d1 still there (err %v)", err)
	})
}
