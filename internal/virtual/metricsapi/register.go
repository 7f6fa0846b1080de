package metricsapi

import (
	"context"
	"encoding/base64"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/clustersync/clustersync/internal/virtual/controlplane"
)

// The objects that register the metrics API in the virtual cluster, named
// as metrics-server's own manifests name them.
const (
	// ServiceNamespace and ServiceName name the Service the APIService
	// leads to (controlplane.MetricsAPIServerName is its DNS name).
	ServiceNamespace = controlplane.MetricsAPIServiceNamespace
	ServiceName      = controlplane.MetricsAPIServiceName
	// APIServiceName is the APIService of Group and Version.
	APIServiceName = Version + "." + Group
	// ReaderClusterRole lets the view, edit and admin ClusterRoles read
	// the metrics API (aggregated into them), as metrics-server's own
	// manifests do.
	ReaderClusterRole = "system:aggregated-metrics-reader"
)

// Register points the virtual cluster's aggregation layer at the syncer's
// metrics API at ip:port: Service ServiceNamespace/ServiceName (no
// selector, port 443 "https" → port), its Endpoints (ip, updated at each
// start: the control plane pod's IP changes) and APIService APIServiceName
// with caPEM, the CA of the API's serving certificate; and ClusterRole
// ReaderClusterRole. It returns the first API error, naming the object.
func Register(ctx context.Context, vc client.Client, ip string, port int32, caPEM []byte) error {
	labels := map[string]string{"app.kubernetes.io/managed-by": "clustersync"}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ServiceNamespace, Name: ServiceName}}
	if _, err := controllerutil.CreateOrUpdate(ctx, vc, svc, func() error {
		svc.Labels = labels
		svc.Spec.Selector = nil
		svc.Spec.Ports = []corev1.ServicePort{{Name: "https", Port: 443, TargetPort: intstr.FromInt32(port), Protocol: corev1.ProtocolTCP}}
		return nil
	}); err != nil {
		return fmt.Errorf("metrics API: Service %s/%s: %w", ServiceNamespace, ServiceName, err)
	}
	eps := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Namespace: ServiceNamespace, Name: ServiceName}}
	if _, err := controllerutil.CreateOrUpdate(ctx, vc, eps, func() error {
		eps.Labels = labels
		eps.Subsets = []corev1.EndpointSubset{{
			Addresses: []corev1.EndpointAddress{{IP: ip}},
			Ports:     []corev1.EndpointPort{{Name: "https", Port: port, Protocol: corev1.ProtocolTCP}},
		}}
		return nil
	}); err != nil {
		return fmt.Errorf("metrics API: Endpoints %s/%s: %w", ServiceNamespace, ServiceName, err)
	}
	reader := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ReaderClusterRole}}
	if _, err := controllerutil.CreateOrUpdate(ctx, vc, reader, func() error {
		reader.Labels = map[string]string{"app.kubernetes.io/managed-by": "clustersync",
			"rbac.authorization.k8s.io/aggregate-to-view": "true", "rbac.authorization.k8s.io/aggregate-to-edit": "true",
			"rbac.authorization.k8s.io/aggregate-to-admin": "true"}
		reader.Rules = []rbacv1.PolicyRule{{APIGroups: []string{Group}, Resources: []string{"pods", "nodes"}, Verbs: []string{"get", "list"}}}
		return nil
	}); err != nil {
		return fmt.Errorf("metrics API: ClusterRole %s: %w", ReaderClusterRole, err)
	}
	api := &unstructured.Unstructured{}
	api.SetAPIVersion("apiregistration.k8s.io/v1")
	api.SetKind("APIService")
	api.SetName(APIServiceName)
	if _, err := controllerutil.CreateOrUpdate(ctx, vc, api, func() error {
		api.SetLabels(labels)
		return unstructured.SetNestedField(api.Object, map[string]any{
			"group": Group, "version": Version,
			"service":              map[string]any{"namespace": ServiceNamespace, "name": ServiceName, "port": int64(443)},
			"caBundle":             base64.StdEncoding.EncodeToString(caPEM),
			"groupPriorityMinimum": int64(100), "versionPriority": int64(100),
		}, "spec")
	}); err != nil {
		return fmt.Errorf("metrics API: APIService %s: %w", APIServiceName, err)
	}
	return nil
}
