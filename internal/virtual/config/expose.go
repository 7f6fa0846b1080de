package config

import (
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
)

// ServiceLabels are the label keys the chart gives the API server's
// Service (vc.labels and vcluster.loft.sh/managed-by, which the syncer's
// clean-up selects by), which controlPlane.service.labels cannot replace.
func ServiceLabels() []string {
	return append(StatefulSetLabels(), "vcluster.loft.sh/managed-by")
}

// IngressLabels are the label keys the chart gives the API server's
// Ingress (vc.labels), which controlPlane.ingress.labels cannot replace.
func IngressLabels() []string { return StatefulSetLabels() }

// HasNodePorts tells whether a Service of type t has node ports (NodePort,
// LoadBalancer), at which clients outside the host reach it on a node's
// address.
func HasNodePorts(t corev1.ServiceType) bool {
	return t == corev1.ServiceTypeNodePort || t == corev1.ServiceTypeLoadBalancer
}

// Exposed tells whether the API server's Service has node ports.
func (s ControlPlaneService) Exposed() bool { return s.Spec != nil && HasNodePorts(s.Spec.Type) }

// validateExposure checks controlPlane.service and controlPlane.ingress:
// the Service exists, is of a type that reaches the API server and leaves
// its ports and selector to the chart; the node port is a port and is
// given only to a type with node ports; an enabled Ingress has a host name
// and a path type Kubernetes knows.
func (cp ControlPlane) validateExposure(fail func(path, format string, args ...any)) {
	const p = "controlPlane.service"
	svc := cp.Service
	if !svc.Enabled {
		fail(p+".enabled", "must be true: the Service is how the host's pods, the syncer and virtual connect reach the API server")
	}
	if spec := svc.Spec; spec != nil {
		switch spec.Type {
		case "", corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer:
		default:
			fail(p+".spec.type", "must be ClusterIP, NodePort or LoadBalancer, got %q", spec.Type)
		}
		if len(spec.Ports) > 0 {
			fail(p+".spec.ports", "are the chart's (443 to the API server's 8443); set httpsNodePort for the node port")
		}
		if len(spec.Selector) > 0 {
			fail(p+".spec.selector", "is the chart's (the control plane pod)")
		}
		if spec.ClusterIP == corev1.ClusterIPNone {
			fail(p+".spec.clusterIP", "None is refused: the virtual cluster's default/kubernetes Service takes this Service's cluster IP")
		}
	}
	switch n := svc.HTTPSNodePort; {
	case n < 0 || n > 65535:
		fail(p+".httpsNodePort", "must be a port (1-65535) or 0 for one the host picks, got %d", n)
	case n != 0 && !svc.Exposed():
		fail(p+".httpsNodePort", "needs spec.type NodePort or LoadBalancer (a ClusterIP Service has no node port)")
	}

	const ip = "controlPlane.ingress"
	if in := cp.Ingress; in.Enabled {
		if in.Host == "" {
			fail(ip+".host", "required when the Ingress is enabled")
		} else if errs := validation.IsDNS1123Subdomain(in.Host); len(errs) > 0 {
			fail(ip+".host", "invalid host name %q: %v", in.Host, errs)
		}
		if !slices.Contains([]string{"ImplementationSpecific", "Prefix", "Exact"}, in.PathType) {
			fail(ip+".pathType", "must be ImplementationSpecific, Prefix or Exact, got %q", in.PathType)
		}
	}
}

// validate checks controlPlane.advanced: the names of the ServiceAccounts,
// and the PodDisruptionBudget's policy and bounds.
func (a ControlPlaneAdvanced) validate(fail func(path, format string, args ...any)) {
	const p = "controlPlane.advanced"
	for key, sa := range map[string]ControlPlaneServiceAccount{"serviceAccount": a.ServiceAccount, "workloadServiceAccount": a.WorkloadServiceAccount} {
		if sa.Name != "" {
			if errs := validation.IsDNS1123Subdomain(sa.Name); len(errs) > 0 {
				fail(p+"."+key+".name", "invalid name %q: %v", sa.Name, errs)
			}
		}
		if !sa.Enabled && sa.Name == "" {
			fail(p+"."+key+".name", "required with enabled: false (the ServiceAccount that exists already)")
		}
	}
	if r := a.DefaultImageRegistry; r != "" {
		if _, err := name.ParseReference(r + "/image:tag"); err != nil || strings.Contains(r, "://") {
			fail(p+".defaultImageRegistry", "must be a registry host, with a path if any (registry.example.com/mirror), got %q", r)
		}
	}
	pdb := a.PodDisruptionBudget
	switch pdb.UnhealthyPodEvictionPolicy {
	case "", "IfHealthyBudget", "AlwaysAllow":
	default:
		fail(p+".podDisruptionBudget.unhealthyPodEvictionPolicy", `must be IfHealthyBudget or AlwaysAllow, got %q`, pdb.UnhealthyPodEvictionPolicy)
	}
	for key, v := range map[string]*intstr.IntOrString{"minAvailable": pdb.MinAvailable, "maxUnavailable": pdb.MaxUnavailable} {
		if v == nil {
			continue
		}
		if _, err := intstr.GetScaledValueFromIntOrPercent(v, 100, true); err != nil || v.Type == intstr.Int && v.IntVal < 0 {
			fail(p+".podDisruptionBudget."+key, "must be a number of pods or a percentage such as 50%%, got %q", v.String())
		}
	}
}
