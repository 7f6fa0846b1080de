package deploy

import (
	"context"
	"fmt"
	"time"

	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/resources/services"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// UpgradeOptions describe a new configuration of an installed virtual
// cluster.
type UpgradeOptions struct {
	// Name and Namespace name the virtual cluster (release) on the host.
	Name, Namespace string
	// Values are the new chart values, checked (see Values); they replace
	// the old ones. Config is the configuration they are, as Values
	// returns both.
	Values map[string]any
	Config *config.Config
	// Wait says how to wait for the new control plane pod
	// (UpdatedRevision is set by Upgrade).
	Wait WaitOptions
}

// Upgrade changes the configuration of virtual cluster o.Name: `helm
// upgrade` of its release with o.Values, then a wait until the pod of the
// new revision is ready (WaitReady, which stops early when it cannot start)
// and the StatefulSet has rolled out (RolledOut). At its restart the syncer removes the host copies of the
// kinds the new configuration switches off, and Upgrade deletes the host
// Services of networking.replicateServices.toHost entries the new values
// dropped. It refuses a virtual cluster
// that is not installed in the namespace, and values that ask for a kind
// the host does not serve (CheckHostKinds) or name a host namespace it
// does not have (CheckHostNamespaces).
func Upgrade(ctx context.Context, host kubernetes.Interface, h *Helm, o UpgradeOptions) error {
	if _, err := h.Get(o.Name, o.Namespace); err != nil {
		return fmt.Errorf("virtual cluster %s not found in host namespace %s (`clustersync virtual list`): %w", o.Name, o.Namespace, err)
	}
	if err := CheckHostKinds(host, o.Config); err != nil {
		return err
	}
	if err := CheckHostNamespaces(ctx, host, o.Name, o.Namespace, o.Config); err != nil {
		return err
	}
	if _, err := h.Upgrade(ctx, o.Name, o.Namespace, o.Values); err != nil {
		return err
	}
	// Replicas of removed networking.replicateServices.toHost entries in
	// namespaces the new chart gives the syncer no Role in any more.
	if err := deleteReplicas(ctx, host, o.Name, services.ReplicationOptionsOf(o.Config, o.Name).ToHost); err != nil {
		return err
	}
	w := o.Wait
	w.UpdatedRevision = true
	if err := WaitReady(ctx, host, o.Name, o.Namespace, w); err != nil {
		return err
	}
	return RolledOut(ctx, host, o.Name, o.Namespace, o.Wait.Timeout)
}

// RolledOut waits (at most timeout, polling every 500 ms) until the
// control plane StatefulSet name has seen its current spec and runs only
// pods of its current revision, all ready.
func RolledOut(ctx context.Context, host kubernetes.Interface, name, namespace string, timeout time.Duration) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		sts, err := host.AppsV1().StatefulSets(namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			last = "no StatefulSet"
			return false, nil
		}
		if err != nil {
			return false, err
		}
		st := sts.Status
		replicas := int32(1)
		if sts.Spec.Replicas != nil {
			replicas = *sts.Spec.Replicas
		}
		last = fmt.Sprintf("generation %d observed %d, revision %s current %s, %d of %d updated and ready",
			sts.Generation, st.ObservedGeneration, st.UpdateRevision, st.CurrentRevision, min(st.UpdatedReplicas, st.ReadyReplicas), replicas)
		return st.ObservedGeneration >= sts.Generation && st.UpdateRevision == st.CurrentRevision &&
			st.UpdatedReplicas == replicas && st.ReadyReplicas == replicas, nil
	})
	if err != nil {
		return fmt.Errorf("virtual cluster %s: the control plane StatefulSet did not roll out within %s (%s): %w", name, timeout, last, err)
	}
	return nil
}
