package runner

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// apiEndpoints keeps the Endpoints and the EndpointSlice of the virtual
// default/kubernetes Service: the addresses of the host Service that
// backs it (tr.KubernetesServiceName(), the control plane pod), as a
// cluster's API servers write theirs. The virtual API server runs with
// --endpoint-reconciler-type=none, since its own address (127.0.0.1 in the
// pod) is not where tenant pods reach it. vCluster copies the same
// addresses.
type apiEndpoints struct {
	tr      translate.Translator
	virtual client.Client
	host    client.Reader
}

// registerAPIEndpoints adds the controller to mgr (the virtual cluster's
// manager): it runs on every change of the host Service's EndpointSlices
// and of the virtual default/kubernetes Endpoints and EndpointSlice.
func registerAPIEndpoints(mgr ctrl.Manager, host cluster.Cluster, tr translate.Translator) error {
	a := &apiEndpoints{tr: tr, virtual: mgr.GetClient(), host: host.GetClient()}
	key := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: metav1.NamespaceDefault, Name: "kubernetes"}}
	one := func(context.Context, client.Object) []reconcile.Request { return []reconcile.Request{key} }
	isVirtual := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetNamespace() == metav1.NamespaceDefault && (o.GetName() == "kubernetes" ||
			o.GetLabels()[discoveryv1.LabelServiceName] == "kubernetes")
	})
	isHost := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetLabels()[discoveryv1.LabelServiceName] == tr.KubernetesServiceName()
	})
	return ctrl.NewControllerManagedBy(mgr).Named("kubernetes-endpoints").
		For(&corev1.Endpoints{}, builder.WithPredicates(isVirtual)).
		Watches(&discoveryv1.EndpointSlice{}, handler.EnqueueRequestsFromMapFunc(one), builder.WithPredicates(isVirtual)).
		WatchesRawSource(source.Kind(host.GetCache(), client.Object(&discoveryv1.EndpointSlice{}),
			handler.EnqueueRequestsFromMapFunc(one), isHost)).
		Complete(a)
}

// Reconcile implements reconcile.Reconciler.
func (a *apiEndpoints) Reconcile(ctx context.Context, _ reconcile.Request) (ctrl.Result, error) {
	var list discoveryv1.EndpointSliceList
	if err := a.host.List(ctx, &list, client.InNamespace(a.tr.HostNamespace),
		client.MatchingLabels{discoveryv1.LabelServiceName: a.tr.KubernetesServiceName()}); err != nil {
		return ctrl.Result{}, err
	}
	ep, slice := KubernetesEndpoints(list.Items)
	if err := a.write(ctx, ep, &corev1.Endpoints{}, func(cur, want client.Object) bool {
		return equality.Semantic.DeepEqual(cur.(*corev1.Endpoints).Subsets, want.(*corev1.Endpoints).Subsets)
	}); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, a.write(ctx, slice, &discoveryv1.EndpointSlice{}, func(cur, want client.Object) bool {
		c, w := cur.(*discoveryv1.EndpointSlice), want.(*discoveryv1.EndpointSlice)
		return c.AddressType == w.AddressType && equality.Semantic.DeepEqual(c.Endpoints, w.Endpoints) &&
			equality.Semantic.DeepEqual(c.Ports, w.Ports)
	})
}

// write creates want, or updates the virtual object of its name (read into
// cur) to want's labels and content unless same says they are equal.
func (a *apiEndpoints) write(ctx context.Context, want, cur client.Object, same func(cur, want client.Object) bool) error {
	err := a.virtual.Get(ctx, client.ObjectKeyFromObject(want), cur)
	if apierrors.IsNotFound(err) {
		return client.IgnoreAlreadyExists(a.virtual.Create(ctx, want))
	}
	if err != nil {
		return err
	}
	labelsSame := true
	for k, v := range want.GetLabels() {
		labelsSame = labelsSame && cur.GetLabels()[k] == v
	}
	if labelsSame && same(cur, want) {
		return nil
	}
	want.SetResourceVersion(cur.GetResourceVersion())
	return a.virtual.Update(ctx, want)
}

// KubernetesEndpoints are the virtual default/kubernetes Endpoints and
// EndpointSlice (named kubernetes, IPv4) for the host EndpointSlices of
// the Service that backs it: each address the host lists, ready or not as
// the host says, at the host's port under the name https. Without host
// addresses they hold none. The Endpoints carry
// endpointslice.kubernetes.io/skip-mirror, as kube-apiserver's own do, so
// that kube-controller-manager does not mirror them into a second slice.
func KubernetesEndpoints(host []discoveryv1.EndpointSlice) (*corev1.Endpoints, *discoveryv1.EndpointSlice) {
	var ready, notReady []string
	port := int32(443)
	for _, s := range host {
		if s.AddressType != discoveryv1.AddressTypeIPv4 {
			continue
		}
		for _, p := range s.Ports {
			if p.Port != nil {
				port = *p.Port
			}
		}
		for _, e := range s.Endpoints {
			for _, addr := range e.Addresses {
				if e.Conditions.Ready == nil || *e.Conditions.Ready {
					ready = append(ready, addr)
				} else {
					notReady = append(notReady, addr)
				}
			}
		}
	}
	slices.Sort(ready)
	ready = slices.Compact(ready)
	slices.Sort(notReady)
	notReady = slices.DeleteFunc(slices.Compact(notReady), func(a string) bool { return slices.Contains(ready, a) })

	meta := metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: "kubernetes"}
	ep := &corev1.Endpoints{ObjectMeta: *meta.DeepCopy()}
	ep.Labels = map[string]string{discoveryv1.LabelSkipMirror: "true"}
	slice := &discoveryv1.EndpointSlice{ObjectMeta: *meta.DeepCopy(), AddressType: discoveryv1.AddressTypeIPv4,
		Ports: []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(port), Protocol: ptr.To(corev1.ProtocolTCP)}}}
	slice.Labels = map[string]string{discoveryv1.LabelServiceName: "kubernetes"}
	if len(ready)+len(notReady) == 0 {
		return ep, slice
	}
	subset := corev1.EndpointSubset{Ports: []corev1.EndpointPort{{Name: "https", Port: port, Protocol: corev1.ProtocolTCP}}}
	for _, a := range ready {
		subset.Addresses = append(subset.Addresses, corev1.EndpointAddress{IP: a})
		slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{Addresses: []string{a}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}})
	}
	for _, a := range notReady {
		subset.NotReadyAddresses = append(subset.NotReadyAddresses, corev1.EndpointAddress{IP: a})
		slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{Addresses: []string{a}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(false)}})
	}
	ep.Subsets = []corev1.EndpointSubset{subset}
	return ep, slice
}
