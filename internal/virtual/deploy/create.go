package deploy

import (
	"context"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/controlplane"
	"github.com/clustersync/clustersync/internal/virtual/instance"
)

// LabelCreatedFor marks a host namespace that `virtual create` made for the
// virtual cluster named in its value; only such a namespace is removed by
// `virtual delete --delete-namespace`.
const LabelCreatedFor = "clustersync.io/created-for"

// AnnotationPersistence on the control plane StatefulSet says where etcd's
// data lives: "volumeClaim" or "emptyDir" (charts/virtual-cluster).
const AnnotationPersistence = "clustersync.io/persistence"

// CreateOptions describe a virtual cluster to install into a host.
type CreateOptions struct {
	// Name is the virtual cluster's name (a DNS-1123 label): the release,
	// StatefulSet and Service name.
	Name string
	// Namespace is the host namespace, created when missing.
	Namespace string
	// Values are the chart values, checked, and Config the configuration
	// they are, as Values returns both.
	Values map[string]any
	Config *config.Config
	// Wait says how to wait for the control plane to become ready.
	Wait WaitOptions
}

// Created describes a virtual cluster that Create installed.
type Created struct {
	// CreatedNamespace tells that Create made the host namespace.
	CreatedNamespace bool
	// Persistence is "volumeClaim" or "emptyDir" (AnnotationPersistence).
	Persistence string
}

// Create creates the host namespace when missing (labelled
// LabelCreatedFor), installs the chart with o.Values (checked by Values
// beforehand) and waits until the control plane is ready (WaitReady, which
// stops early when it cannot start). It
// refuses a name that is not a DNS-1123 label, a release of that name
// that exists already in the namespace, and values that ask for a kind the
// host does not serve (CheckHostKinds) or name a host namespace it does not
// have (CheckHostNamespaces).
func Create(ctx context.Context, host kubernetes.Interface, h *Helm, o CreateOptions) (*Created, error) {
	if errs := validation.IsDNS1123Label(o.Name); len(errs) > 0 {
		return nil, fmt.Errorf("virtual cluster name %q: %s", o.Name, errs[0])
	}
	if _, err := h.Get(o.Name, o.Namespace); err == nil {
		return nil, fmt.Errorf("virtual cluster %s exists already in host namespace %s; delete it first (`clustersync virtual delete %s -n %s`)", o.Name, o.Namespace, o.Name, o.Namespace)
	}
	if err := CheckHostKinds(host, o.Config); err != nil {
		return nil, err
	}
	if err := CheckHostNamespaces(ctx, host, o.Name, o.Namespace, o.Config); err != nil {
		return nil, err
	}
	created, err := instance.EnsureNamespace(ctx, host, o.Namespace, map[string]string{LabelCreatedFor: o.Name})
	if err != nil {
		return nil, err
	}
	if _, err := h.Install(ctx, o.Name, o.Namespace, o.Values); err != nil {
		return nil, err
	}
	if err := WaitReady(ctx, host, o.Name, o.Namespace, o.Wait); err != nil {
		return nil, err
	}
	sts, err := host.AppsV1().StatefulSets(o.Namespace).Get(ctx, o.Name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return &Created{CreatedNamespace: created, Persistence: sts.Annotations[AnnotationPersistence]}, nil
}

// Kubeconfig returns the tenant's kubeconfig of virtual cluster name (host
// Secret vc-NAME), with its server replaced by server when that is not "".
func Kubeconfig(ctx context.Context, host kubernetes.Interface, name, namespace, server string) ([]byte, error) {
	s, err := host.CoreV1().Secrets(namespace).Get(ctx, controlplane.KubeconfigSecretName(name), metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("kubeconfig of virtual cluster %s: host secret %s/%s: %w", name, namespace, controlplane.KubeconfigSecretName(name), err)
	}
	data := s.Data["config"]
	if server == "" {
		return data, nil
	}
	kc, err := clientcmd.Load(data)
	if err != nil {
		return nil, fmt.Errorf("host secret %s/%s: %w", namespace, s.Name, err)
	}
	if len(kc.Clusters) == 0 {
		return nil, errors.New("host secret " + namespace + "/" + s.Name + ": kubeconfig has no cluster")
	}
	for _, c := range kc.Clusters {
		c.Server = server
	}
	return clientcmd.Write(*kc)
}

// ServiceServer is the URL of the virtual API server through the cluster
// IP of its host Service: reachable from host pods, and from a node of the
// host (kube-proxy's rules cover the node's own traffic).
func ServiceServer(ctx context.Context, host kubernetes.Interface, name, namespace string) (string, error) {
	svc, err := host.CoreV1().Services(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("host service %s/%s: %w", namespace, name, err)
	}
	return "https://" + svc.Spec.ClusterIP + ":443", nil
}

// statefulSet returns the control plane StatefulSet of name, or nil.
func statefulSet(ctx context.Context, host kubernetes.Interface, name, namespace string) (*appsv1.StatefulSet, error) {
	sts, err := host.AppsV1().StatefulSets(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return sts, err
}
