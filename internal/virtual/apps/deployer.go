package apps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"

	"github.com/clustersync/clustersync/internal/virtual/config"
)

// The reasons of the events a Deployer records.
const (
	EventApplied = "DeployApplied"
	EventFailed  = "DeployFailed"
)

// Deployer applies experimental.deploy.vcluster of Config to one virtual
// cluster (see the package comment).
type Deployer struct {
	// Name and HostNamespace are the virtual cluster's, for
	// manifestsTemplate's .Release.Name and .Release.Namespace.
	Name, HostNamespace string
	Config              *config.Config
	// Virtual reaches the virtual API server with rights to create
	// anything the manifests and charts hold (the admin's).
	Virtual *rest.Config
	// Mapper maps the manifests' kinds to resources, discovering a kind
	// missing from it (controller-runtime's dynamic mapper), so that a
	// custom resource can follow its definition.
	Mapper meta.RESTMapper
	// CacheDir holds the charts fetched and Helm's repository index
	// files.
	CacheDir string
	// Pod, when set, is the control plane's host pod, whose annotation
	// PodStatusAnnotation and events (Recorder) report the progress.
	Pod *PodReport
	// Retry is the first wait after a failure (default 1 s); it doubles up
	// to a minute.
	Retry time.Duration
	Log   logr.Logger
}

// PodReport is the host pod a Deployer reports on.
type PodReport struct {
	Host            kubernetes.Interface
	Namespace, Name string
	// Recorder records the events (regarding the pod).
	Recorder events.EventRecorder

	// pod is the pod as last read, for the events' reference (its UID,
	// which `kubectl describe pod` selects events by).
	pod *corev1.Pod
}

// Start applies until everything succeeded or ctx ends; each try reports
// its outcome. It always returns nil: a failure is reported and tried
// again, never fatal to the syncer (vCluster's syncer stops when its
// manifests fail to apply; a virtual cluster whose add-on fails still
// serves).
func (d *Deployer) Start(ctx context.Context) error {
	if !d.Config.Experimental.Deploy.VCluster.HasApps() && !d.hadApps(ctx) {
		return nil
	}
	first := d.Retry
	if first <= 0 {
		first = time.Second
	}
	// apimachinery's backoff: after reaching Cap it stays there.
	delay := wait.Backoff{Duration: first, Factor: 2, Jitter: 0.1, Steps: math.MaxInt32, Cap: time.Minute}
	for {
		err := d.Once(ctx)
		if err == nil || ctx.Err() != nil {
			return nil
		}
		next := delay.Step()
		d.Log.Error(err, "experimental.deploy.vcluster failed; trying again", "in", next.Round(time.Millisecond).String())
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(next):
		}
	}
}

// hadApps tells whether an earlier configuration applied something (the
// status ConfigMap exists), which an empty one is to remove.
func (d *Deployer) hadApps(ctx context.Context) bool {
	k, err := kubernetes.NewForConfig(d.Virtual)
	if err != nil {
		return false
	}
	_, err = k.CoreV1().ConfigMaps(StatusNamespace).Get(ctx, StatusConfigMap, metav1.GetOptions{})
	return err == nil
}

// Once applies the manifests, then each chart in order, then uninstalls
// the releases no longer listed, recording the status after each step; it
// stops at the first failure and returns it.
func (d *Deployer) Once(ctx context.Context) error {
	vk, err := kubernetes.NewForConfig(d.Virtual)
	if err != nil {
		return err
	}
	cm, err := statusConfigMap(ctx, vk)
	if err != nil {
		return err
	}
	if d.Pod != nil && d.Pod.pod == nil {
		pod, err := d.Pod.Host.CoreV1().Pods(d.Pod.Namespace).Get(ctx, d.Pod.Name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("host pod %s/%s: %w", d.Pod.Namespace, d.Pod.Name, err)
		}
		pod.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Pod"))
		d.Pod.pod = pod
	}
	st, err := ParseStatus(cm.Annotations[StatusAnnotation])
	if err != nil {
		d.Log.Error(err, "ignoring the recorded status")
	}
	want := d.Config.Experimental.Deploy.VCluster
	save := func() error {
		st.summarize(len(want.Helm))
		return d.save(ctx, vk, cm, st)
	}
	fail := func(reason string, err error) error {
		d.event(corev1.EventTypeWarning, EventFailed, "%s: %v", reason, err)
		if serr := save(); serr != nil {
			err = errors.Join(err, fmt.Errorf("recording the status: %w", serr))
		}
		return err
	}

	text, err := d.Config.DeployManifests(d.Name, d.HostNamespace)
	if err != nil {
		st.Manifests.Phase, st.Manifests.Reason, st.Manifests.Message = PhaseFailed, ReasonInstall, err.Error()
		return fail(ReasonInstall, err)
	}
	last := ""
	if st.Manifests.LastAppliedManifests != "" {
		if last, err = uncompress(st.Manifests.LastAppliedManifests); err != nil {
			d.Log.Error(err, "ignoring the last applied manifests")
			last = ""
		}
	}
	if text != last || st.Manifests.Phase != PhaseSuccess {
		dyn, err := dynamic.NewForConfig(d.Virtual)
		if err != nil {
			return err
		}
		n, err := applier{dyn: dyn, mapper: d.Mapper}.apply(ctx, text, last)
		if err != nil {
			st.Manifests.Phase, st.Manifests.Reason, st.Manifests.Message = PhaseFailed, ReasonInstall, err.Error()
			return fail(ReasonInstall, fmt.Errorf("manifests: %w", err))
		}
		if st.Manifests.LastAppliedManifests, err = compress(text); err != nil {
			return err
		}
		st.Manifests.Phase, st.Manifests.Reason, st.Manifests.Message = PhaseSuccess, "", ""
		if n > 0 {
			d.event(corev1.EventTypeNormal, EventApplied, "manifests: %d objects applied", n)
		}
		if err := save(); err != nil {
			return err
		}
	}

	h := &helmClient{cfg: d.Virtual, cacheDir: d.CacheDir, log: func(format string, v ...any) { d.Log.V(1).Info(fmt.Sprintf(format, v...)) }}
	listed := map[string]bool{}
	for i, e := range want.Helm {
		name, ns := e.ReleaseName(), e.ReleaseNamespace()
		listed[ns+"/"+name] = true
		cs := st.chart(ns, name)
		hash := entryHash(e)
		changed := cs.LastAppliedChartConfigHash != hash
		if !changed && cs.Phase == PhaseSuccess {
			// Still there? A release the tenant uninstalled comes back.
			if _, err := h.status(ns, name); err == nil {
				continue
			}
		}
		started := time.Now()
		id, reason, err := h.deploy(ctx, e, changed)
		if err != nil {
			cs = st.chart(ns, name)
			cs.Phase, cs.Reason, cs.Message = PhaseFailed, reason, err.Error()
			return fail(reason, fmt.Errorf("experimental.deploy.vcluster.helm[%d], release %s/%s: %w", i, ns, name, err))
		}
		cs = st.chart(ns, name)
		cs.Phase, cs.Reason, cs.Message, cs.LastAppliedChartConfigHash = PhaseSuccess, "", "", hash
		d.event(corev1.EventTypeNormal, EventApplied, "chart %s: release %s/%s deployed in %.1f s", id, ns, name, time.Since(started).Seconds())
		if err := save(); err != nil {
			return err
		}
	}
	dropped, err := st.dropUnlisted(listed, h.uninstall)
	for _, r := range dropped {
		d.event(corev1.EventTypeNormal, EventApplied, "release %s uninstalled: dropped from experimental.deploy.vcluster.helm", r)
	}
	if err != nil {
		return fail(ReasonUninstall, err)
	}
	return save()
}

// statusConfigMap returns the status ConfigMap, created when missing.
func statusConfigMap(ctx context.Context, vk kubernetes.Interface) (*corev1.ConfigMap, error) {
	cms := vk.CoreV1().ConfigMaps(StatusNamespace)
	cm, err := cms.Get(ctx, StatusConfigMap, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		cm, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: StatusConfigMap, Namespace: StatusNamespace}}, metav1.CreateOptions{})
	}
	if err != nil {
		return nil, fmt.Errorf("status ConfigMap %s/%s: %w", StatusNamespace, StatusConfigMap, err)
	}
	return cm, nil
}

// save records st in the status ConfigMap and on the host pod.
func (d *Deployer) save(ctx context.Context, vk kubernetes.Interface, cm *corev1.ConfigMap, st Status) error {
	raw, err := json.Marshal(st)
	if err != nil {
		return err
	}
	if cm.Annotations[StatusAnnotation] != string(raw) {
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{StatusAnnotation: string(raw)}}})
		updated, err := vk.CoreV1().ConfigMaps(StatusNamespace).Patch(ctx, StatusConfigMap, types.MergePatchType, patch, metav1.PatchOptions{})
		if err != nil {
			return fmt.Errorf("status ConfigMap %s/%s: %w", StatusNamespace, StatusConfigMap, err)
		}
		*cm = *updated
	}
	if d.Pod == nil {
		return nil
	}
	st.Manifests.LastAppliedManifests = ""
	short, _ := json.Marshal(st)
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{PodStatusAnnotation: string(short)}}})
	pod, err := d.Pod.Host.CoreV1().Pods(d.Pod.Namespace).Patch(ctx, d.Pod.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("host pod %s/%s: %w", d.Pod.Namespace, d.Pod.Name, err)
	}
	pod.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Pod"))
	d.Pod.pod = pod
	return nil
}

// event records an event on the host pod, when there is one.
func (d *Deployer) event(eventType, reason, format string, args ...any) {
	if d.Pod == nil || d.Pod.Recorder == nil {
		return
	}
	if d.Pod.pod == nil {
		return
	}
	d.Pod.Recorder.Eventf(d.Pod.pod, nil, eventType, reason, "Deploy", format, args...)
}
