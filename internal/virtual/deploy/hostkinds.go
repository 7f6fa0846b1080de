package deploy

import (
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
)

// hostKind is a kind of the chart's objects that Kubernetes itself does not
// serve, installed on the host by another project.
type hostKind struct {
	// Key is the values key (a dotted path to a boolean) that asks for it.
	Key string
	// GroupVersion and Resource name the kind, e.g. monitoring.coreos.com/v1
	// servicemonitors.
	GroupVersion, Resource string
	// Fix says how to give the host the kind.
	Fix string
}

// hostKinds lists the kinds the chart creates only when the values ask.
func hostKinds() []hostKind {
	return []hostKind{{
		Key: "controlPlane.serviceMonitor.enabled", GroupVersion: "monitoring.coreos.com/v1", Resource: "servicemonitors",
		Fix: "install the Prometheus Operator's CRDs (https://prometheus-operator.dev/docs/getting-started/installation/), or set controlPlane.serviceMonitor.enabled=false",
	}}
}

// CheckHostKinds returns an error naming the values key and the fix when
// values ask the chart for a kind (hostKinds) that host does not serve, so
// that `virtual create` and `upgrade` stop before Helm installs anything;
// discovery errors other than not found are returned as they are.
func CheckHostKinds(host kubernetes.Interface, values map[string]any) error {
	for _, k := range hostKinds() {
		on, _, _ := unstructured.NestedBool(values, strings.Split(k.Key, ".")...)
		if !on {
			continue
		}
		list, err := host.Discovery().ServerResourcesForGroupVersion(k.GroupVersion)
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("%s: ask the host for %s: %w", k.Key, k.GroupVersion, err)
		}
		if err != nil || !slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == k.Resource }) {
			return fmt.Errorf("%s: the host does not serve %s %s; %s", k.Key, k.GroupVersion, k.Resource, k.Fix)
		}
	}
	return nil
}
