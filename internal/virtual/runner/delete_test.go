package runner_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/virtual/instance"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// `virtual delete`'s host cleanup (instance.DeleteHostObjects) removes
// the virtual cluster's objects of any namespaced kind the host serves —
// also custom resources, which only the configuration names — and its
// cluster-scoped copies, and nothing else: not an unlabelled object, not
// a cluster-scoped copy of a virtual cluster of the same name in another
// host namespace. It runs on a host namespace of its own, for a virtual
// cluster "other" that no syncer runs.
func TestDeleteHostObjects(t *testing.T) {
	hostNS := env.NewNamespace(t) // on the virtual side; made again on the host
	create(t, env.HostClient, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: hostNS}})
	t.Cleanup(func() { _ = env.HostClient.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: hostNS}}) })
	installCRD(t, crdClient(t, env.Host.Config), "sprockets", "Sprocket", apiextensionsv1.NamespaceScoped, false)
	const vc = "other"
	ours := map[string]string{translate.LabelManagedBy: vc}
	create(t, env.HostClient, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "copy", Namespace: hostNS, Labels: ours}})
	create(t, env.HostClient, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "users", Namespace: hostNS}})
	sprocket := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Sprocket"}
	sp := object(sprocket, "copy", hostNS, map[string]any{"spec": map[string]any{}})
	sp.SetLabels(ours)
	create(t, env.HostClient, sp)
	pc := func(name, hostNamespace string) *schedulingv1.PriorityClass {
		return &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: ours,
			Annotations: map[string]string{translate.AnnotationObjectName: "x", translate.AnnotationObjectHostNamespace: hostNamespace}}, Value: 1}
	}
	mine, theirs := "vcluster-x-x-"+hostNS+"-x-other", "vcluster-x-x-elsewhere-"+hostNS+"-x-other"
	create(t, env.HostClient, pc(mine, hostNS))
	create(t, env.HostClient, pc(theirs, "elsewhere-"+hostNS))
	t.Cleanup(func() {
		_ = env.HostClient.Delete(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: theirs}})
	})

	dyn, err := dynamic.NewForConfig(env.Host.Config)
	if err != nil {
		t.Fatal(err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(env.Host.Config)
	if err != nil {
		t.Fatal(err)
	}
	if err := instance.DeleteHostObjects(ctx, disc, dyn, hostNS, vc, time.Minute); err != nil {
		t.Fatal(err)
	}
	gone := map[string]client.Object{
		"labelled ConfigMap":               &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "copy", Namespace: hostNS}},
		"labelled Sprocket":                object(sprocket, "copy", hostNS, map[string]any{}),
		"this host namespace's copy class": &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: mine}},
	}
	for what, o := range gone {
		if err := env.HostClient.Get(ctx, client.ObjectKeyFromObject(o), o); !apierrors.IsNotFound(err) {
			t.Errorf("%s not deleted (err %v)", what, err)
		}
	}
	kept := map[string]client.Object{
		"unlabelled ConfigMap":              &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "users", Namespace: hostNS}},
		"other host namespace's copy class": &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: theirs}},
	}
	for what, o := range kept {
		if err := env.HostClient.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
			t.Errorf("%s deleted: %v", what, err)
		}
	}
}
