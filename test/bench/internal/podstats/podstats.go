// Package podstats reads the memory and CPU of pods as the kubelet counts
// them, from its stats summary (GET
// /api/v1/nodes/NODE/proxy/stats/summary?only_cpu_and_memory=true,
// https://kubernetes.io/docs/reference/instrumentation/node-metrics/): the
// working set of each pod's cgroup and of each container (cgroup memory
// usage less inactive file pages, what `kubectl top` shows) and the CPU
// each pod's cgroup has used since it started. Unlike the RSS of each
// process summed, the working set counts pages that processes share (one
// binary run as several processes) once. The benches of test/bench use
// it; it asserts nothing.
package podstats

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// Sample is what the kubelet reports of one pod.
type Sample struct {
	// WorkingSet is the pod cgroup's working set in bytes.
	WorkingSet uint64
	// Containers is each container's working set in bytes, by name.
	Containers map[string]uint64
	// CPU is the CPU time the pod's cgroup has used since it started
	// (usageCoreNanoSeconds), read at CPUTime.
	CPU     time.Duration
	CPUTime time.Time
	// Time is when the kubelet took the oldest of the memory figures.
	Time time.Time
}

// String is "321 MiB (kube-apiserver 198, etcd 38, … MiB)", containers
// largest first.
func (s Sample) String() string {
	names := make([]string, 0, len(s.Containers))
	for n := range s.Containers {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return s.Containers[names[i]] > s.Containers[names[j]] })
	parts := make([]string, 0, len(names))
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s %.0f", n, MiB(s.Containers[n])))
	}
	return fmt.Sprintf("%.0f MiB (%s MiB)", MiB(s.WorkingSet), strings.Join(parts, ", "))
}

// MiB is b bytes in mebibytes.
func MiB(b uint64) float64 { return float64(b) / (1 << 20) }

// Read returns the kubelet's figures of pods (in their order; all on one
// node) once every figure was taken after since: the kubelet refreshes
// each cgroup's on its own, every 10 to 15 seconds, so this waits up to a
// minute. Errors: the API's, or a pod or container the summary has no
// fresh figure of within the minute (the error names it).
func Read(ctx context.Context, host kubernetes.Interface, pods []*corev1.Pod, since time.Time) ([]Sample, error) {
	var out []Sample
	var last error
	err := wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		out, last = read(ctx, host, pods, since)
		return last == nil, nil
	})
	if err != nil && last != nil {
		return nil, last
	}
	return out, err
}

// read is one read of Read; an error when a figure is older than since.
func read(ctx context.Context, host kubernetes.Interface, pods []*corev1.Pod, since time.Time) ([]Sample, error) {
	if len(pods) == 0 {
		return nil, nil
	}
	node := pods[0].Spec.NodeName
	// only_cpu_and_memory, as metrics-server asks: the file-system stats
	// are not needed, and the kubelet fails the whole summary when it
	// cannot read them (this machine's virtio disk).
	raw, err := host.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", node, "proxy", "stats", "summary").
		Param("only_cpu_and_memory", "true").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("the stats summary of node %s: %w", node, err)
	}
	var summary statsv1alpha1.Summary
	if err := json.Unmarshal(raw, &summary); err != nil {
		return nil, fmt.Errorf("the stats summary of node %s: %w", node, err)
	}
	byUID := map[string]statsv1alpha1.PodStats{}
	for _, p := range summary.Pods {
		byUID[p.PodRef.UID] = p
	}
	out := make([]Sample, 0, len(pods))
	for _, pod := range pods {
		if pod.Spec.NodeName != node {
			return nil, fmt.Errorf("pod %s/%s runs on node %s, not %s", pod.Namespace, pod.Name, pod.Spec.NodeName, node)
		}
		p, ok := byUID[string(pod.UID)]
		if !ok {
			return nil, fmt.Errorf("the kubelet of node %s reports no figures of pod %s/%s yet", node, pod.Namespace, pod.Name)
		}
		s, err := sample(p, since)
		if err != nil {
			return nil, fmt.Errorf("the kubelet of node %s: pod %s/%s: %w", node, pod.Namespace, pod.Name, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// sample is the Sample of p; an error when a figure is missing or older
// than since.
func sample(p statsv1alpha1.PodStats, since time.Time) (Sample, error) {
	if p.Memory == nil || p.Memory.WorkingSetBytes == nil || p.Memory.Time.Time.Before(since) {
		return Sample{}, fmt.Errorf("no memory figure taken after %s", since.Format(time.RFC3339))
	}
	if p.CPU == nil || p.CPU.UsageCoreNanoSeconds == nil || p.CPU.Time.Time.Before(since) {
		return Sample{}, fmt.Errorf("no CPU figure taken after %s", since.Format(time.RFC3339))
	}
	s := Sample{WorkingSet: *p.Memory.WorkingSetBytes, CPU: time.Duration(*p.CPU.UsageCoreNanoSeconds),
		CPUTime: p.CPU.Time.Time, Containers: map[string]uint64{}, Time: p.Memory.Time.Time}
	for _, c := range p.Containers {
		if c.Memory == nil || c.Memory.WorkingSetBytes == nil || c.Memory.Time.Time.Before(since) {
			return Sample{}, fmt.Errorf("no memory figure of container %s taken after %s", c.Name, since.Format(time.RFC3339))
		}
		s.Containers[c.Name] = *c.Memory.WorkingSetBytes
		if c.Memory.Time.Time.Before(s.Time) {
			s.Time = c.Memory.Time.Time
		}
	}
	return s, nil
}
