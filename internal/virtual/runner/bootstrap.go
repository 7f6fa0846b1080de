package runner

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// bootstrap creates what every virtual cluster needs, on both sides, before
// the controllers start:
//   - host: the namespace (when createNamespace), the ServiceAccount host pods run as (no token
//     automount; ensureWorkloadServiceAccount), and the Service named after the virtual cluster that
//     backs the virtual default/kubernetes Service;
//   - virtual: default/kubernetes with that Service's clusterIP, and
//     kube-system/kube-dns, whose host copy is the pods' nameserver.
func bootstrap(ctx context.Context, tr translate.Translator, cfg *config.Config, vc, hc client.Client, createNamespace bool) error {
	owned := map[string]string{translate.LabelManagedBy: tr.VCluster}
	if createNamespace {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tr.HostNamespace}}
		if err := createIfMissing(ctx, hc, ns); err != nil {
			return err
		}
	}
	if err := ensureWorkloadServiceAccount(ctx, tr, cfg, hc); err != nil {
		return err
	}
	apiSvc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: tr.KubernetesServiceName(), Namespace: tr.HostNamespace, Labels: owned},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{
			Name: "https", Port: 443, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(443),
		}}},
	}
	if err := createIfMissing(ctx, hc, apiSvc); err != nil {
		return err
	}
	if err := hc.Get(ctx, client.ObjectKeyFromObject(apiSvc), apiSvc); err != nil {
		return err
	}
	if apiSvc.Labels[translate.LabelManagedBy] != tr.VCluster {
		return fmt.Errorf("host service %s/%s exists and is not managed by virtual cluster %s", apiSvc.Namespace, apiSvc.Name, tr.VCluster)
	}
	if err := ensureKubernetesService(ctx, vc, apiSvc.Spec.ClusterIP); err != nil {
		return err
	}
	dns := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-dns", Namespace: metav1.NamespaceSystem, Labels: map[string]string{
			"k8s-app": "kube-dns", "kubernetes.io/name": "CoreDNS",
		}},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"k8s-app": "kube-dns"},
			Ports: []corev1.ServicePort{
				{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromInt32(53)},
				{Name: "dns-tcp", Port: 53, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(53)},
				{Name: "metrics", Port: 9153, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(9153)},
			},
		},
	}
	return createIfMissing(ctx, vc, dns)
}

// ensureKubernetesService gives the virtual default/kubernetes Service the
// host clusterIP ip, recreating it when it has another (the field is
// immutable), as vCluster does.
func ensureKubernetesService(ctx context.Context, vc client.Client, ip string) error {
	var svc corev1.Service
	key := types.NamespacedName{Namespace: metav1.NamespaceDefault, Name: "kubernetes"}
	// The API server's bootstrap controller makes default/kubernetes just
	// after /readyz: let it, for up to 30 s, before replacing it, rather
	// than race it with a Service of our own (a syncer started beside
	// kube-apiserver once left tenants' DNS and the Service at different
	// IPs in TestRealNodeWorkload).
	var err error
	_ = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		err = vc.Get(ctx, key, &svc)
		return !apierrors.IsNotFound(err), nil
	})
	if err == nil && svc.Spec.ClusterIP == ip {
		return nil
	}
	if err == nil {
		if err := vc.Delete(ctx, &svc); client.IgnoreNotFound(err) != nil {
			return err
		}
	} else if !apierrors.IsNotFound(err) {
		return err
	}
	next := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace, Labels: map[string]string{
			"component": "apiserver", "provider": "kubernetes",
		}},
		Spec: corev1.ServiceSpec{
			ClusterIP: ip, ClusterIPs: []string{ip},
			Ports: []corev1.ServicePort{{Name: "https", Port: 443, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(443)}},
		},
	}
	return createIfMissing(ctx, vc, next)
}

// ensureWorkloadServiceAccount makes the host ServiceAccount the host pods
// run as (controlPlane.advanced.workloadServiceAccount): no token
// automount, its labels and annotations (with globalMetadata's), the
// image pull secrets of both ServiceAccounts of controlPlane.advanced (as
// vCluster's chart gives it), updated when they differ. With enabled
// false it only checks that the named one exists. One that exists and is
// not this virtual cluster's is used as it is, never changed.
func ensureWorkloadServiceAccount(ctx context.Context, tr translate.Translator, cfg *config.Config, hc client.Client) error {
	adv := cfg.ControlPlane.Advanced
	w := adv.WorkloadServiceAccount
	key := client.ObjectKey{Namespace: tr.HostNamespace, Name: cfg.WorkloadServiceAccountName(tr.VCluster)}
	var got corev1.ServiceAccount
	err := hc.Get(ctx, key, &got)
	if !w.Enabled {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("host service account %s (controlPlane.advanced.workloadServiceAccount, enabled: false) does not exist; create it, or set enabled: true", key)
		}
		return err
	}
	labels := maps.Clone(w.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[translate.LabelManagedBy] = tr.VCluster
	annotations := maps.Clone(adv.GlobalMetadata.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	maps.Copy(annotations, w.Annotations)
	pull := slices.Concat(adv.ServiceAccount.ImagePullSecrets, w.ImagePullSecrets)
	want := corev1.ServiceAccount{
		ObjectMeta:                   metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace, Labels: labels, Annotations: annotations},
		AutomountServiceAccountToken: ptr.To(false),
		ImagePullSecrets:             pull,
	}
	switch {
	case apierrors.IsNotFound(err):
		return createIfMissing(ctx, hc, &want)
	case err != nil:
		return err
	case got.Labels[translate.LabelManagedBy] != tr.VCluster:
		return nil
	}
	changed := !equality.Semantic.DeepEqual(got.ImagePullSecrets, pull) && !(len(got.ImagePullSecrets) == 0 && len(pull) == 0)
	for k, v := range labels {
		changed = changed || got.Labels[k] != v
	}
	for k, v := range annotations {
		changed = changed || got.Annotations[k] != v
	}
	if !changed {
		return nil
	}
	if got.Annotations == nil {
		got.Annotations = map[string]string{}
	}
	maps.Copy(got.Labels, labels)
	maps.Copy(got.Annotations, annotations)
	got.ImagePullSecrets = pull
	if err := hc.Update(ctx, &got); err != nil {
		return fmt.Errorf("update host service account %s: %w", key, err)
	}
	return nil
}

func createIfMissing(ctx context.Context, c client.Client, obj client.Object) error {
	err := c.Create(ctx, obj)
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create %T %s: %w", obj, client.ObjectKeyFromObject(obj), err)
	}
	return nil
}
