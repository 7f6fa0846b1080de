package deploy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/resources"
)

// hostKind is a kind of the chart's objects that Kubernetes itself does not
// serve, installed on the host by another project.
type hostKind struct {
	// Key is the configuration key that asks for it; On tells whether a
	// configuration does.
	Key string
	On  func(*config.Config) bool
	// GroupVersion and Resource name the kind, e.g. monitoring.coreos.com/v1
	// servicemonitors.
	GroupVersion, Resource string
	// Fix says how to give the host the kind.
	Fix string
}

// hostKinds lists the kinds the chart creates only when the values ask.
func hostKinds() []hostKind {
	return []hostKind{{
		Key: "controlPlane.serviceMonitor.enabled", On: func(c *config.Config) bool { return c.ControlPlane.ServiceMonitor.Enabled },
		GroupVersion: "monitoring.coreos.com/v1", Resource: "servicemonitors",
		Fix: "install the Prometheus Operator's CRDs (https://prometheus-operator.dev/docs/getting-started/installation/), or set controlPlane.serviceMonitor.enabled=false",
	}}
}

// CheckHostKinds returns an error naming the key and the fix when cfg
// asks the chart for a kind (hostKinds), or turns on a synced kind whose
// CRDs the syncer copies (resources.Kind.HostCRDs, served as v1), that host
// does not serve, so that
// `virtual create` and `upgrade` stop before Helm installs anything;
// discovery errors other than not found are returned as they are.
func CheckHostKinds(host kubernetes.Interface, cfg *config.Config) error {
	kinds := hostKinds()
	for _, k := range resources.Kinds() {
		for _, crd := range k.HostCRDs() {
			plural, group, _ := strings.Cut(crd, ".")
			kinds = append(kinds, hostKind{Key: k.SwitchKeys(), On: k.Enabled, GroupVersion: group + "/v1", Resource: plural, Fix: k.CRDFix})
		}
	}
	for _, k := range kinds {
		if !k.On(cfg) {
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

// CheckHostNamespaces returns an error naming each host namespace that
// cfg, the configuration of virtual cluster name installed in host
// namespace namespace, names beyond its own (config.Config.OtherHostNamespaces)
// and host does not have, with the key that names it and the command that
// makes it: the chart gives the syncer a Role there, which Helm cannot
// create in a missing namespace.
func CheckHostNamespaces(ctx context.Context, host kubernetes.Interface, name, namespace string, cfg *config.Config) error {
	var errs []error
	for _, u := range cfg.OtherHostNamespaces(name, namespace) {
		_, err := host.CoreV1().Namespaces().Get(ctx, u.Namespace, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			errs = append(errs, fmt.Errorf("%s: host namespace %s does not exist; create it first (kubectl create namespace %s)", u.Key, u.Namespace, u.Namespace))
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: read host namespace %s: %w", u.Key, u.Namespace, err))
		}
	}
	return errors.Join(errs...)
}
