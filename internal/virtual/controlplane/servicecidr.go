package controlplane

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

var validRange = regexp.MustCompile(`The range of valid IPs is ([0-9a-fA-F.:/]+)`)

// DetectServiceCIDR finds the host's service IP range the way vCluster does:
// it asks the API server to dry-run a Service with an address outside any
// range and reads the valid range from the refusal.
func DetectServiceCIDR(ctx context.Context, host kubernetes.Interface, namespace string) (string, error) {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "clustersync-cidr-probe-", Namespace: namespace},
		Spec:       corev1.ServiceSpec{ClusterIP: "4.4.4.4", Ports: []corev1.ServicePort{{Port: 80}}},
	}
	_, err := host.CoreV1().Services(namespace).Create(ctx, svc, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err == nil {
		return "", errors.New("detect host service range: the host accepted clusterIP 4.4.4.4; pass the range explicitly")
	}
	if m := validRange.FindStringSubmatch(err.Error()); m != nil {
		return m[1], nil
	}
	return "", fmt.Errorf("detect host service range: %w", err)
}
