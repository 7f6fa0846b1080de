package config

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// ControlPlaneContainers are the names of the containers the chart runs in
// the control plane pod (charts/virtual-cluster/templates/statefulset.yaml),
// init containers first; controlPlane.statefulSet.initContainers and
// .sidecarContainers cannot take them.
func ControlPlaneContainers() []string {
	return []string{"init", "etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "syncer", "coredns"}
}

// ControlPlaneVolumes maps the volumes the chart gives the control plane
// pod to where each of its containers mounts them;
// controlPlane.statefulSet.persistence.addVolumes and
// .volumeClaimTemplates cannot take their names, nor addVolumeMounts
// their paths.
func ControlPlaneVolumes() map[string]string {
	return map[string]string{"data": "/data", "config": "/etc/clustersync", "tmp": "/tmp"}
}

// ControlPlaneEnv are the environment variables the chart gives every
// control plane container, which controlPlane.statefulSet.env cannot
// replace.
func ControlPlaneEnv() []string { return []string{"POD_NAMESPACE", "POD_IP"} }

// validatePod checks what controlPlane.statefulSet adds to the control
// plane pod against what the chart puts there itself, so that a clash is
// refused naming its key instead of failing at `helm install` or in the
// pod: container, volume and variable names, mount paths, the data
// volume, the claim retention policy, the probes, and a root user under
// the pod's runAsNonRoot.
func (sts ControlPlaneStatefulSet) validatePod(fail func(path, format string, args ...any)) {
	const p = "controlPlane.statefulSet"
	ours := ControlPlaneVolumes()
	pers := sts.Persistence

	switch pers.VolumeClaim.RetentionPolicy {
	case "Retain", "Delete":
	default:
		fail(p+".persistence.volumeClaim.retentionPolicy", "must be Retain or Delete, got %q", pers.VolumeClaim.RetentionPolicy)
	}

	for i, v := range pers.DataVolume {
		if v.Name != "data" {
			fail(fmt.Sprintf("%s.persistence.dataVolume[%d].name", p, i), `must be "data" (the volume mounted at /data), got %q`, v.Name)
		}
	}
	switch {
	case len(pers.DataVolume) > 1:
		fail(p+".persistence.dataVolume", "holds %d volumes; give one, named data", len(pers.DataVolume))
	case len(pers.DataVolume) == 1 && pers.VolumeClaim.Enabled == AutoSwitchOn:
		fail(p+".persistence.dataVolume", "replaces the data volume when no claim is made; set persistence.volumeClaim.enabled to false or auto, or remove dataVolume")
	}

	volumes := map[string]string{} // name → the key that gives it
	for name := range ours {
		volumes[name] = "the chart's own volume"
	}
	for i, v := range pers.AddVolumes {
		key := fmt.Sprintf("%s.persistence.addVolumes[%d].name", p, i)
		checkName(fail, key, v.Name, volumes)
	}
	for i, c := range pers.VolumeClaimTemplates {
		key := fmt.Sprintf("%s.persistence.volumeClaimTemplates[%d].metadata.name", p, i)
		checkName(fail, key, c.Name, volumes)
	}
	paths := map[string]bool{}
	for _, path := range ours {
		paths[path] = true
	}
	for i, m := range pers.AddVolumeMounts {
		key := fmt.Sprintf("%s.persistence.addVolumeMounts[%d]", p, i)
		if _, ok := volumes[m.Name]; !ok {
			fail(key+".name", "no volume %q: name one of persistence.addVolumes or .volumeClaimTemplates, or data, config or tmp", m.Name)
		}
		switch {
		case m.MountPath == "":
			fail(key+".mountPath", "required")
		case paths[m.MountPath]:
			fail(key+".mountPath", "%s is mounted already (the chart's /data, /etc/clustersync and /tmp, or an earlier entry)", m.MountPath)
		}
		paths[m.MountPath] = true
	}

	containers := map[string]string{}
	for _, name := range ControlPlaneContainers() {
		containers[name] = "a container of the chart's"
	}
	for _, list := range []struct {
		key string
		cs  []corev1.Container
	}{{p + ".initContainers", sts.InitContainers}, {p + ".sidecarContainers", sts.SidecarContainers}} {
		for i, c := range list.cs {
			key := fmt.Sprintf("%s[%d]", list.key, i)
			checkName(fail, key+".name", c.Name, containers)
			if c.Image == "" {
				fail(key+".image", "required")
			}
		}
	}

	for i, e := range sts.Env {
		key := fmt.Sprintf("%s.env[%d].name", p, i)
		switch {
		case e.Name == "":
			fail(key, "required")
		case slices.Contains(ControlPlaneEnv(), e.Name):
			fail(key, "%s is set by the chart itself (%v)", e.Name, ControlPlaneEnv())
		}
	}

	for _, probe := range []struct {
		name string
		t    ProbeTiming
	}{{"livenessProbe", sts.Probes.LivenessProbe}, {"readinessProbe", sts.Probes.ReadinessProbe}, {"startupProbe", sts.Probes.StartupProbe}} {
		for field, n := range map[string]int{"failureThreshold": probe.t.FailureThreshold, "initialDelaySeconds": probe.t.InitialDelaySeconds,
			"timeoutSeconds": probe.t.TimeoutSeconds, "periodSeconds": probe.t.PeriodSeconds} {
			if n < 0 {
				fail(fmt.Sprintf("%s.probes.%s.%s", p, probe.name, field), "must not be negative, got %d", n)
			}
		}
	}

	// The chart's pod runs as 65532 with runAsNonRoot; a container told to
	// run as root would be refused by the kubelet at its start.
	nonRoot := true
	if psc := sts.Security.PodSecurityContext; psc != nil && psc.RunAsNonRoot != nil {
		nonRoot = *psc.RunAsNonRoot
	}
	csc := sts.Security.ContainerSecurityContext
	if csc != nil && csc.RunAsNonRoot != nil {
		nonRoot = *csc.RunAsNonRoot
	}
	if csc != nil && csc.RunAsUser != nil && *csc.RunAsUser == 0 && nonRoot {
		fail(p+".security.containerSecurityContext.runAsUser", "0 (root) under runAsNonRoot: true, the chart's pod default, which the kubelet refuses; "+
			"set security.podSecurityContext.runAsNonRoot: false to run the control plane as root")
	}
}

// checkName fails key when name is empty, not a DNS label, or in seen
// (which says who has it); else it adds name to seen.
func checkName(fail func(path, format string, args ...any), key, name string, seen map[string]string) {
	switch {
	case name == "":
		fail(key, "required")
		return
	case len(validation.IsDNS1123Label(name)) > 0:
		fail(key, "invalid name %q: %v", name, validation.IsDNS1123Label(name))
	case seen[name] != "":
		fail(key, "%q is taken: %s", name, seen[name])
		return
	}
	seen[name] = key
}
