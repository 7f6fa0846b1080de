package pods

import (
	"fmt"
	"regexp"

	corev1 "k8s.io/api/core/v1"
)

// RewriteHosts configures vCluster's rewriteHosts for StatefulSet pods
// (https://www.vcluster.com/docs/vcluster/configure/vcluster-yaml/sync, sync.toHost.pods.rewriteHosts).
// A pod with a hostname and a subdomain expects /etc/hosts to hold its
// virtual FQDN, HOSTNAME.SUBDOMAIN.NAMESPACE.svc.DOMAIN; on the host the
// kubelet writes the translated subdomain and the host namespace instead.
// An init container writes a corrected copy to a shared volume, which every
// container mounts at /etc/hosts (the kubelet then leaves it alone).
type RewriteHosts struct {
	// Image is the init container's image (it needs sh and sed).
	Image string
	// Resources are the init container's requests and limits.
	Resources corev1.ResourceRequirements
}

// RewriteHostsContainer and RewriteHostsVolume are the names vCluster uses.
const (
	RewriteHostsContainer = "vcluster-rewrite-hosts"
	RewriteHostsVolume    = "vcluster-rewrite-hosts"
)

// addRewriteHosts adds the init container, the volume and the /etc/hosts
// mounts to the host spec of virtual pod v, if v has a hostname and a
// subdomain (a StatefulSet pod) and none of its containers mounts /etc/hosts.
func addRewriteHosts(spec *corev1.PodSpec, v *corev1.Pod, rh *RewriteHosts, domain string) {
	if rh == nil || v.Spec.Hostname == "" || v.Spec.Subdomain == "" || mountsEtcHosts(&v.Spec) {
		return
	}
	fqdn := fmt.Sprintf("%s.%s.%s.svc.%s", v.Spec.Hostname, v.Spec.Subdomain, v.Namespace, domain)
	spec.Volumes = append(spec.Volumes, corev1.Volume{Name: RewriteHostsVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	init := corev1.Container{
		Name:      RewriteHostsContainer,
		Image:     rh.Image,
		Command:   []string{"sh", "-c", RewriteHostsScript(v.Spec.Hostname, fqdn)},
		Resources: rh.Resources,
		VolumeMounts: []corev1.VolumeMount{{
			Name: RewriteHostsVolume, MountPath: "/hosts",
		}},
	}
	spec.InitContainers = append([]corev1.Container{init}, spec.InitContainers...)
	mount := corev1.VolumeMount{Name: RewriteHostsVolume, MountPath: "/etc/hosts", SubPath: "hosts"}
	for i := range spec.InitContainers[1:] {
		c := &spec.InitContainers[i+1]
		c.VolumeMounts = append(c.VolumeMounts, mount)
	}
	for i := range spec.Containers {
		spec.Containers[i].VolumeMounts = append(spec.Containers[i].VolumeMounts, mount)
	}
}

// RewriteHostsScript is the shell script of the init container: it copies
// /etc/hosts to /hosts/hosts with the pod's own line (IP, FQDN, hostname)
// naming fqdn instead of the host's FQDN.
func RewriteHostsScript(hostname, fqdn string) string {
	h := regexp.QuoteMeta(hostname)
	return fmt.Sprintf(`sed -E 's/^([^#[:space:]]+[[:space:]]+)%s\.[^[:space:]]+([[:space:]]+%s)$/\1%s\2/' /etc/hosts > /hosts/hosts`, h, h, fqdn)
}

func mountsEtcHosts(spec *corev1.PodSpec) bool {
	for _, cs := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for _, c := range cs {
			for _, m := range c.VolumeMounts {
				if m.MountPath == "/etc/hosts" {
					return true
				}
			}
		}
	}
	return false
}
