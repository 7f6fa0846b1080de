package deploy

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// controlPlanePodWith is a control plane pod as the chart makes it (init,
// the etcd and kube-apiserver sidecars, then the syncer) with the given
// init and container statuses.
func controlPlanePodWith(init, containers []corev1.ContainerStatus) *corev1.Pod {
	always := ptr.To(corev1.ContainerRestartPolicyAlways)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "v-0", Namespace: "v-host"},
		Spec: corev1.PodSpec{NodeName: "node1",
			InitContainers: []corev1.Container{{Name: "init", Image: "ghcr.io/clustersync/clustersync:latest"},
				{Name: "etcd", Image: "ghcr.io/clustersync/clustersync:latest", RestartPolicy: always},
				{Name: "kube-apiserver", Image: "ghcr.io/clustersync/clustersync:latest", RestartPolicy: always}},
			Containers: []corev1.Container{{Name: "syncer", Image: "ghcr.io/clustersync/clustersync:latest"}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending, InitContainerStatuses: init, ContainerStatuses: containers},
	}
}

func waiting(name, reason, msg string) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}}
}

// failed is container name in CrashLoopBackOff after the run id that
// exited 1 with msg.
func failed(name, id, msg string, restarts int32) corev1.ContainerStatus {
	s := waiting(name, "CrashLoopBackOff", "back-off 10s restarting failed container")
	s.RestartCount = restarts
	s.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", Message: msg, ContainerID: "containerd://" + id}
	return s
}

const notFoundMsg = `rpc error: code = NotFound desc = failed to pull and unpack image "ghcr.io/clustersync/clustersync:latest": ` +
	`failed to resolve reference "ghcr.io/clustersync/clustersync:latest": ghcr.io/clustersync/clustersync:latest: not found`

func TestDiagnoseStart(t *testing.T) {
	for _, tt := range []struct {
		name           string
		init, main     []corev1.ContainerStatus
		events         []string
		reason, inMsgs string
	}{
		{name: "pulling", init: []corev1.ContainerStatus{waiting("init", "ContainerCreating", "")}},
		{name: "image not found", init: []corev1.ContainerStatus{waiting("init", "ErrImagePull", notFoundMsg)},
			reason: ReasonImageNotFound, inMsgs: "not found"},
		{name: "back-off, the event says not found", init: []corev1.ContainerStatus{waiting("init", "ImagePullBackOff", `Back-off pulling image "ghcr.io/clustersync/clustersync:latest"`)},
			events: []string{`Failed to pull image "ghcr.io/clustersync/clustersync:latest": ` + notFoundMsg},
			reason: ReasonImageNotFound, inMsgs: "code = NotFound"},
		{name: "back-off, an event of another image", init: []corev1.ContainerStatus{waiting("init", "ImagePullBackOff", `Back-off pulling image "ghcr.io/clustersync/clustersync:latest"`)},
			events: []string{`Failed to pull image "other:1": not found`}},
		{name: "back-off, the registry does not answer", init: []corev1.ContainerStatus{waiting("init", "ErrImagePull", "dial tcp 127.0.0.1:5000: connect: connection refused")}},
		{name: "invalid image name", main: []corev1.ContainerStatus{waiting("syncer", "InvalidImageName", `couldn't parse image name "UPPER:x"`)},
			reason: ReasonInvalidImage},
		{name: "init failed once", init: []corev1.ContainerStatus{failed("init", "a", "host secret v-host/v-certs: bad CA", 1)}},
		{name: "init failed twice, the same message", init: []corev1.ContainerStatus{failed("init", "b", "line1\nhost secret v-host/v-certs: bad CA", 2)},
			reason: ReasonFailedTwice, inMsgs: "host secret v-host/v-certs: bad CA"},
		{name: "init failed twice, other messages", init: []corev1.ContainerStatus{failed("init", "c", "timeout 2", 2)}},
		{name: "a sidecar restarts", init: []corev1.ContainerStatus{{Name: "init", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}},
			failed("etcd", "d", "same", 1), failed("etcd", "e", "same", 2)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			seen := startFailures{}
			// The earlier run that the first poll saw: the same message for
			// "twice, the same message", another for "other messages".
			switch tt.name {
			case "init failed twice, the same message":
				seen.diagnose(controlPlanePodWith([]corev1.ContainerStatus{failed("init", "a", "line1\nhost secret v-host/v-certs: bad CA", 1)}, nil), nil)
			case "init failed twice, other messages":
				seen.diagnose(controlPlanePodWith([]corev1.ContainerStatus{failed("init", "a", "timeout 1", 1)}, nil), nil)
			case "a sidecar restarts":
				seen.diagnose(controlPlanePodWith(tt.init[:2], nil), nil)
			}
			f := seen.diagnose(controlPlanePodWith(tt.init, tt.main), tt.events)
			if tt.reason == "" {
				if f != nil {
					t.Fatalf("a failure: %v", f)
				}
				return
			}
			if f == nil || f.Reason != tt.reason {
				t.Fatalf("got %v, want reason %q", f, tt.reason)
			}
			if !strings.Contains(f.Message, tt.inMsgs) || f.Image != "ghcr.io/clustersync/clustersync:latest" || f.Pod != "v-host/v-0" {
				t.Errorf("failure %+v", f)
			}
		})
	}
}

// The same message is the last LogLines lines: a run that logged more
// before failing the same way counts as the same.
func TestDiagnoseStartLastLines(t *testing.T) {
	var long []string
	for i := range 30 {
		long = append(long, "progress "+strings.Repeat("x", i))
	}
	last := strings.Join(long[len(long)-LogLines:], "\n")
	seen := startFailures{}
	seen.diagnose(controlPlanePodWith([]corev1.ContainerStatus{failed("init", "a", strings.Join(long, "\n"), 1)}, nil), nil)
	f := seen.diagnose(controlPlanePodWith([]corev1.ContainerStatus{failed("init", "b", last, 2)}, nil), nil)
	if f == nil || f.Message != last {
		t.Fatalf("got %v, want the last %d lines", f, LogLines)
	}
}

func TestStartFailureError(t *testing.T) {
	f := &StartFailure{Pod: "v-host/v-0", Container: "init", Init: true, Image: "img:1", Reason: ReasonFailedTwice,
		Message: "a\nb", Fix: "do this"}
	want := "init container init (image img:1) of pod v-host/v-0: failed twice with the same message:\n    a\n    b\n  fix: do this"
	if got := f.Error(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if fix := defaultFix(&StartFailure{Reason: ReasonImageNotFound, Image: "img:1"}, "v", "v-host", ""); !strings.Contains(fix, "push img:1") ||
		!strings.Contains(fix, "clustersync virtual upgrade v -n v-host") {
		t.Errorf("image fix %q", fix)
	}
	if fix := defaultFix(&StartFailure{Reason: ReasonFailedTwice, Container: "init"}, "v", "v-host", ""); !strings.Contains(fix, "kubectl -n v-host logs v-0 -c init --previous") {
		t.Errorf("log fix %q", fix)
	}
}

func TestProgress(t *testing.T) {
	unscheduled := controlPlanePodWith(nil, nil)
	unscheduled.Spec.NodeName = ""
	unscheduled.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Message: "0/1 nodes are available"}}
	started := true
	p := controlPlanePodWith([]corev1.ContainerStatus{
		{Name: "init", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}},
		{Name: "etcd", Ready: true, Started: &started, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
		{Name: "kube-apiserver", Started: new(bool), State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}, RestartCount: 1},
	}, []corev1.ContainerStatus{waiting("syncer", "PodInitializing", "")})
	for _, tt := range []struct {
		pod  *corev1.Pod
		want string
	}{
		{unscheduled, "pod v-host/v-0 Pending: not scheduled: 0/1 nodes are available"},
		{controlPlanePodWith(nil, nil), "pod v-host/v-0 Pending on node1: creating the containers"},
		{p, "pod v-host/v-0 Pending on node1: init done, etcd ready, kube-apiserver starting, restarts 1, syncer waiting (PodInitializing)"},
	} {
		if got := Progress(tt.pod); got != tt.want {
			t.Errorf("got  %q\nwant %q", got, tt.want)
		}
	}
}

func TestDescribePodUnscheduled(t *testing.T) {
	p := controlPlanePodWith(nil, nil)
	p.Spec.NodeName = ""
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Message: "0/1 nodes are available: 1 Insufficient cpu."}}
	if got, want := DescribePod(p), "pod v-host/v-0 Pending: not scheduled: 0/1 nodes are available: 1 Insufficient cpu."; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if got, want := DescribePod(controlPlanePodWith(nil, nil)), "pod v-host/v-0 Pending"; got != want {
		t.Errorf("scheduled: got %q, want %q", got, want)
	}
}
