package deploy

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestStatus(t *testing.T) {
	sts := func(replicas int32) *appsv1.StatefulSet {
		s := &appsv1.StatefulSet{}
		s.Spec.Replicas = ptr.To(replicas)
		s.Spec.Template.Spec.Containers = []corev1.Container{{Name: "syncer", Image: "127.0.0.1:5000/clustersync/clustersync:v0.3.0"}}
		return s
	}
	pod := func(ready bool, statuses ...corev1.ContainerStatus) *corev1.Pod {
		p := &corev1.Pod{}
		p.Status.Phase = corev1.PodRunning
		cond := corev1.ConditionFalse
		if ready {
			cond = corev1.ConditionTrue
		}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: cond}}
		p.Status.ContainerStatuses = statuses
		return p
	}
	waiting := func(name, reason string) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}}
	}
	tests := []struct {
		name      string
		sts       *appsv1.StatefulSet
		pod       *corev1.Pod
		want, why string
	}{
		{"no statefulset", nil, nil, StatusUnknown, "no control plane StatefulSet"},
		{"paused", sts(0), nil, StatusPaused, ""},
		{"no pod", sts(1), nil, StatusPending, "no control plane pod yet"},
		{"ready", sts(1), pod(true), StatusRunning, ""},
		{"crashing", sts(1), pod(false, waiting("syncer", "CrashLoopBackOff")), StatusFailed, "syncer: CrashLoopBackOff"},
		{"no image", sts(1), pod(false, waiting("kube-apiserver", "ImagePullBackOff")), StatusFailed, "kube-apiserver: ImagePullBackOff"},
		{"starting", sts(1), pod(false, waiting("syncer", "ContainerCreating")), StatusPending, "pod / Running; syncer: ContainerCreating, restarts 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := Status(tt.sts, tt.pod)
			if got != tt.want || why != tt.why {
				t.Errorf("Status = %q, %q; want %q, %q", got, why, tt.want, tt.why)
			}
		})
	}
	if tag := ImageTag(sts(1)); tag != "v0.3.0" {
		t.Errorf("imageTag = %q", tag)
	}
}
