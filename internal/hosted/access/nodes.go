package access

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// nodePage is how many nodes CountNodes asks for per list call.
const nodePage = 500

// CountNodes returns how many Node objects the cluster behind downstream
// has, ready or not, listing them in pages of 500 so a large cluster is not
// loaded at once. Rancher checks a hosted cluster has at least one node
// before it waits for its agent (Rancher's EKS driver, https://github.com/rancher/eks-operator, "Node Group
// Requirements"). Errors are the list call's, wrapped.
func CountNodes(ctx context.Context, downstream kubernetes.Interface) (int, error) {
	n := 0
	opts := metav1.ListOptions{Limit: nodePage}
	for {
		list, err := downstream.CoreV1().Nodes().List(ctx, opts)
		if err != nil {
			return 0, fmt.Errorf("list nodes: %w", err)
		}
		n += len(list.Items)
		if list.Continue == "" {
			return n, nil
		}
		opts.Continue = list.Continue
	}
}
