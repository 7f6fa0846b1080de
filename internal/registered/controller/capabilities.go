package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
)

// ApplyCapabilityAnnotations lays the capability annotations of a Cluster
// over detected: "capabilities.clustersync.io/<name>" or Rancher's
// "capabilities.cattle.io/<name>" (ours wins when both are set), each
// value parsed by the capability's type — bool for nodePoolScalingSupported,
// pspEnabled and taintSupport, a string for nodePortRange, JSON for
// ingressCapabilities (a list) and loadBalancerCapabilities (an object).
// A value that does not parse is not applied and is returned as a problem
// naming the annotation, the value and the type wanted; an unknown
// capability name is a problem too (https://rancher.com/docs/rancher/v2.x/en/cluster-provisioning/imported-clusters/,
// "Annotating Imported Clusters").
func ApplyCapabilityAnnotations(annotations map[string]string, detected mgmtv1.Capabilities) (mgmtv1.Capabilities, []string) {
	out := *detected.DeepCopy()
	var problems []string
	keys := make([]string, 0, len(annotations))
	for k := range annotations {
		keys = append(keys, k)
	}
	// Rancher's alias first, so ours overrides it.
	slices.SortFunc(keys, func(a, b string) int {
		ra, rb := strings.HasPrefix(a, mgmtv1.RancherCapabilityAnnotationPrefix), strings.HasPrefix(b, mgmtv1.RancherCapabilityAnnotationPrefix)
		switch {
		case ra && !rb:
			return -1
		case rb && !ra:
			return 1
		}
		return strings.Compare(a, b)
	})
	for _, key := range keys {
		name, ok := strings.CutPrefix(key, mgmtv1.CapabilityAnnotationPrefix)
		if !ok {
			if name, ok = strings.CutPrefix(key, mgmtv1.RancherCapabilityAnnotationPrefix); !ok {
				continue
			}
		}
		v := annotations[key]
		bad := func(want string, err error) {
			problems = append(problems, fmt.Sprintf("annotation %s: value %q is not %s (%v)", key, v, want, err))
		}
		switch name {
		case mgmtv1.CapabilityNodePoolScaling, mgmtv1.CapabilityPSPEnabled, mgmtv1.CapabilityTaintSupport:
			b, err := strconv.ParseBool(strings.TrimSpace(v))
			if err != nil {
				bad("a bool", err)
				continue
			}
			switch name {
			case mgmtv1.CapabilityNodePoolScaling:
				out.NodePoolScalingSupported = &b
			case mgmtv1.CapabilityPSPEnabled:
				out.PSPEnabled = &b
			default:
				out.TaintSupport = &b
			}
		case mgmtv1.CapabilityNodePortRange:
			lo, hi, found := strings.Cut(v, "-")
			l, err1 := strconv.Atoi(lo)
			h, err2 := strconv.Atoi(hi)
			if !found || err1 != nil || err2 != nil || l < 1 || h > 65535 || l > h {
				bad(`a port range such as "30000-32767"`, fmt.Errorf("want LOW-HIGH within 1-65535"))
				continue
			}
			out.NodePortRange = v
		case mgmtv1.CapabilityIngress:
			var list []mgmtv1.IngressCapability
			if err := strictJSON(v, &list); err != nil {
				bad(`a JSON list such as [{"ingressProvider":"nginx"}]`, err)
				continue
			}
			out.IngressCapabilities = list
		case mgmtv1.CapabilityLoadBalancer:
			var lb mgmtv1.LoadBalancerCapabilities
			if err := strictJSON(v, &lb); err != nil {
				bad(`a JSON object such as {"enabled":true,"provider":"metallb"}`, err)
				continue
			}
			out.LoadBalancerCapabilities = &lb
		default:
			problems = append(problems, fmt.Sprintf("annotation %s: unknown capability %q (known: %s)", key, name,
				strings.Join([]string{mgmtv1.CapabilityIngress, mgmtv1.CapabilityLoadBalancer, mgmtv1.CapabilityNodePoolScaling,
					mgmtv1.CapabilityNodePortRange, mgmtv1.CapabilityPSPEnabled, mgmtv1.CapabilityTaintSupport}, ", ")))
		}
	}
	return out, problems
}

// strictJSON decodes v into out, refusing unknown fields.
func strictJSON(v string, out any) error {
	dec := json.NewDecoder(strings.NewReader(v))
	dec.DisallowUnknownFields()
	return dec.Decode(out)
}

// DetectCapabilities reads what the cluster shows of its capabilities:
// ingress controllers from its IngressClasses, load balancers from
// Services of type LoadBalancer that got an address, taint support
// (every conformant cluster), PodSecurityPolicy (served only before
// Kubernetes 1.25: enabled when the API still exists), and no node pool
// scaling (clustersync does not own the nodes of a registered cluster).
// The node port range is not visible through the API; set it with an
// annotation.
func DetectCapabilities(ctx context.Context, kube kubernetes.Interface) (mgmtv1.Capabilities, error) {
	caps := mgmtv1.Capabilities{TaintSupport: ptr.To(true), NodePoolScalingSupported: ptr.To(false), PSPEnabled: ptr.To(false)}
	classes, err := kube.NetworkingV1().IngressClasses().List(ctx, metav1.ListOptions{})
	if err != nil {
		return caps, fmt.Errorf("list IngressClasses: %w", err)
	}
	for _, c := range classes.Items {
		caps.IngressCapabilities = append(caps.IngressCapabilities, mgmtv1.IngressCapability{IngressProvider: c.Spec.Controller})
	}
	svcs, err := kube.CoreV1().Services("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return caps, fmt.Errorf("list Services: %w", err)
	}
	lb := false
	for _, s := range svcs.Items {
		if s.Spec.Type == corev1.ServiceTypeLoadBalancer && len(s.Status.LoadBalancer.Ingress) > 0 {
			lb = true
		}
	}
	caps.LoadBalancerCapabilities = &mgmtv1.LoadBalancerCapabilities{Enabled: &lb}
	if res, err := kube.Discovery().ServerResourcesForGroupVersion("policy/v1beta1"); err == nil {
		for _, r := range res.APIResources {
			if r.Name == "podsecuritypolicies" {
				caps.PSPEnabled = ptr.To(true)
			}
		}
	}
	return caps, nil
}
