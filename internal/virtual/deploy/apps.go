package deploy

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/clustersync/clustersync/internal/virtual/apps"
)

// AppsStatus reads the progress of experimental.deploy.vcluster of virtual
// cluster name from its control plane pod (annotation
// apps.PodStatusAnnotation, which the syncer keeps); false when the pod
// has none yet (or there is no pod).
func AppsStatus(ctx context.Context, host kubernetes.Interface, name, namespace string) (apps.Status, bool, error) {
	p, err := host.CoreV1().Pods(namespace).Get(ctx, PodName(name), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return apps.Status{}, false, nil
	} else if err != nil {
		return apps.Status{}, false, err
	}
	raw, ok := p.Annotations[apps.PodStatusAnnotation]
	if !ok {
		return apps.Status{}, false, nil
	}
	st, err := apps.ParseStatus(raw)
	if err != nil {
		return apps.Status{}, false, fmt.Errorf("host pod %s/%s: %w", namespace, p.Name, err)
	}
	return st, true, nil
}

// WaitApps waits, polling every 500 ms for at most timeout, until the
// apps of experimental.deploy.vcluster of virtual cluster name have
// succeeded or failed (a failure is retried by the syncer; the wait ends
// at the first one), and returns the last status read; one still Pending
// at the timeout is returned without error.
func WaitApps(ctx context.Context, host kubernetes.Interface, name, namespace string, timeout time.Duration) (apps.Status, error) {
	var st apps.Status
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		got, ok, err := AppsStatus(ctx, host, name, namespace)
		if err != nil || !ok {
			return false, err
		}
		st = got
		return st.Phase == apps.PhaseSuccess || st.Phase == apps.PhaseFailed, nil
	})
	if err != nil && !wait.Interrupted(err) {
		return st, err
	}
	return st, nil
}
