package instance

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// DefaultHostNamespace is the host namespace of virtual cluster name when
// none is given: vc-NAME.
func DefaultHostNamespace(name string) string { return "vc-" + name }

// EnsureNamespace creates the host namespace unless it exists, labelled
// app.kubernetes.io/managed-by=clustersync and with labels; created reports
// whether this call made it.
func EnsureNamespace(ctx context.Context, host kubernetes.Interface, name string, labels map[string]string) (created bool, err error) {
	_, err = host.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if err == nil {
		return false, nil
	}
	if !apierrors.IsNotFound(err) {
		return false, fmt.Errorf("host namespace %s: %w", name, err)
	}
	all := map[string]string{"app.kubernetes.io/managed-by": "clustersync"}
	maps.Copy(all, labels)
	_, err = host.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name: name, Labels: all,
	}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return false, fmt.Errorf("create host namespace %s: %w", name, err)
	}
	return err == nil, nil
}

// deleteNamespaceIfEmpty deletes a host namespace clustersync created,
// unless someone else has put pods, services, config maps (other than
// kube-root-ca.crt) or secrets in it meanwhile.
func deleteNamespaceIfEmpty(ctx context.Context, host kubernetes.Interface, name string) error {
	pods, err := host.CoreV1().Pods(name).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	svcs, err := host.CoreV1().Services(name).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	secrets, err := host.CoreV1().Secrets(name).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	cms, err := host.CoreV1().ConfigMaps(name).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	others := len(pods.Items) + len(svcs.Items) + len(secrets.Items)
	for _, cm := range cms.Items {
		if cm.Name != "kube-root-ca.crt" {
			others++
		}
	}
	if others > 0 {
		return nil // not ours alone any more: keep it
	}
	err = host.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
