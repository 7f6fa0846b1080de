package deploy

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// StartFailure is a control plane pod that will not start without a change
// (DiagnoseStart): which container, why, what the kubelet or the container
// said, and what fixes it.
type StartFailure struct {
	// Pod is the pod as NAMESPACE/NAME.
	Pod string
	// Container and Image name the container that cannot start.
	Container, Image string
	// Init tells that Container is an init container.
	Init bool
	// Reason is what is wrong, in a few words: ReasonImageNotFound,
	// ReasonInvalidImage or ReasonFailedTwice.
	Reason string
	// Message is the kubelet's message (an image pull) or the container's
	// last log lines (its termination message, at most LogLines lines).
	Message string
	// Fix is the command or change that fixes it.
	Fix string
}

// Reasons of a StartFailure.
const (
	ReasonImageNotFound = "image not found"
	ReasonInvalidImage  = "invalid image name"
	ReasonFailedTwice   = "failed twice with the same message"
)

// LogLines is how many of a failed container's last log lines a
// StartFailure keeps.
const LogLines = 10

// Error is the failure over a few lines: the container and image, the
// reason, the message (indented) and the fix.
func (f *StartFailure) Error() string {
	kind := "container"
	if f.Init {
		kind = "init container"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s (image %s) of pod %s: %s", kind, f.Container, f.Image, f.Pod, f.Reason)
	if msg := strings.TrimSpace(f.Message); msg != "" {
		b.WriteString(":\n    " + strings.ReplaceAll(msg, "\n", "\n    "))
	}
	if f.Fix != "" {
		b.WriteString("\n  fix: " + f.Fix)
	}
	return b.String()
}

// startFailures remembers the failed runs of a pod's init containers across
// polls (DiagnoseStart sees at most the current and the last one at a time):
// container name → container ID → termination message.
type startFailures map[string]map[string]string

// DiagnoseStart returns why control plane pod p cannot start without a
// change, or nil while it may still start:
//   - a container waits for an image that its registry does not have
//     (ErrImagePull or ImagePullBackOff whose message, or one of
//     warningEvents, the messages of p's Warning events, says "not found"),
//     or whose name is invalid (InvalidImageName);
//   - an init container (not a sidecar) failed twice with the same
//     termination message (its last log lines: the chart's containers set
//     terminationMessagePolicy FallbackToLogsOnError).
//
// A slow pull, a container that is starting or a sidecar that restarts is
// not a failure: those get the whole timeout. Its Fix is left empty.
func DiagnoseStart(p *corev1.Pod, warningEvents []string) *StartFailure {
	return startFailures{}.diagnose(p, warningEvents)
}

// diagnose is DiagnoseStart, also counting the failed runs seen in earlier
// calls on the same startFailures.
func (seen startFailures) diagnose(p *corev1.Pod, warningEvents []string) *StartFailure {
	images := map[string]string{}
	sidecar := map[string]bool{}
	for _, c := range p.Spec.InitContainers {
		images[c.Name] = c.Image
		sidecar[c.Name] = c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
	}
	for _, c := range p.Spec.Containers {
		images[c.Name] = c.Image
	}
	fail := func(s corev1.ContainerStatus, init bool, reason, msg string) *StartFailure {
		img := images[s.Name]
		if img == "" {
			img = s.Image
		}
		return &StartFailure{Pod: p.Namespace + "/" + p.Name, Container: s.Name, Image: img, Init: init, Reason: reason, Message: msg}
	}
	nInit := len(p.Status.InitContainerStatuses)
	for i, s := range allStatuses(p) {
		init := i < nInit
		if w := s.State.Waiting; w != nil {
			switch w.Reason {
			case "InvalidImageName":
				return fail(s, init, ReasonInvalidImage, w.Message)
			case "ErrImagePull", "ImagePullBackOff":
				if notFound(w.Message) {
					return fail(s, init, ReasonImageNotFound, w.Message)
				}
				img := images[s.Name]
				for _, m := range warningEvents {
					if notFound(m) && img != "" && strings.Contains(m, `"`+img+`"`) {
						return fail(s, init, ReasonImageNotFound, m)
					}
				}
			}
		}
		if !init || sidecar[s.Name] {
			continue
		}
		for _, t := range []*corev1.ContainerStateTerminated{s.State.Terminated, s.LastTerminationState.Terminated} {
			if t == nil || t.ExitCode == 0 || t.ContainerID == "" {
				continue
			}
			if seen[s.Name] == nil {
				seen[s.Name] = map[string]string{}
			}
			seen[s.Name][t.ContainerID] = terminationMessage(t)
		}
		counts := map[string]int{}
		for _, msg := range seen[s.Name] {
			if counts[msg]++; counts[msg] == 2 {
				return fail(s, init, ReasonFailedTwice, msg)
			}
		}
	}
	return nil
}

// terminationMessage is t's message cut to its last LogLines lines, or its
// reason and exit code when it has none.
func terminationMessage(t *corev1.ContainerStateTerminated) string {
	msg := strings.TrimSpace(t.Message)
	if msg == "" {
		return fmt.Sprintf("%s, exit code %d, no output", t.Reason, t.ExitCode)
	}
	lines := strings.Split(msg, "\n")
	if len(lines) > LogLines {
		lines = lines[len(lines)-LogLines:]
	}
	return strings.Join(lines, "\n")
}

// notFound tells whether an image pull error says the image (its tag or
// repository) does not exist: containerd's "code = NotFound" or a
// registry's "not found" / "manifest unknown".
func notFound(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "notfound") || strings.Contains(m, "not found") || strings.Contains(m, "manifest unknown")
}

// defaultFix is the advice for f on virtual cluster name of namespace;
// imageFix replaces the generic advice for a missing image.
func defaultFix(f *StartFailure, name, namespace, imageFix string) string {
	retry := fmt.Sprintf("then `clustersync virtual upgrade %s -n %s -f FILE` (or `clustersync virtual delete %s -n %s` and create it again)", name, namespace, name, namespace)
	switch f.Reason {
	case ReasonImageNotFound, ReasonInvalidImage:
		if imageFix != "" {
			return imageFix + "; " + retry
		}
		return fmt.Sprintf("push %s to its registry (`make image IMAGE_REPO=REGISTRY/PATH` builds and pushes clustersync's images), "+
			"or give an image the host can pull in controlPlane.statefulSet.image; %s", f.Image, retry)
	default:
		return fmt.Sprintf("correct what the log says, %s; the whole log: `kubectl -n %s logs %s -c %s --previous`", retry, namespace, PodName(name), f.Container)
	}
}
