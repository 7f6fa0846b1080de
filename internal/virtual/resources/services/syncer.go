// Package services syncs virtual Services to the host. The host copy selects
// this virtual cluster's pods of the same namespace; the clusterIP is
// host-authoritative: the virtual Service carries the host's address (it is
// recreated with it when they differ), so pods reach the same address under
// both names. Node ports and load-balancer status flow back to the virtual
// Service; type and port changes flow to the host (vCluster issues #2248,
// #2728: type changes that were not propagated).
package services

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/virtual/resources/fromhost"
	"github.com/clustersync/clustersync/internal/virtual/syncer"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// Syncer is the Service resource syncer.
type Syncer struct {
	syncer.Kind[*corev1.Service]
	dns *DNSBackend
	// StripExternalIPs keeps spec.externalIPs off the host copies
	// (policies.isolation.externalIPs): an external IP makes every host
	// node's kube-proxy send traffic for that address, whoever's it is, to
	// the tenant's pods.
	StripExternalIPs bool
}

// hostSpec is HostSpec with the isolation rule on external IPs applied; a
// Warning PolicyEnforced event on the virtual Service names the addresses
// left out.
func (r *Syncer) hostSpec(s *syncer.Context, v *corev1.Service, current *corev1.ServiceSpec) corev1.ServiceSpec {
	spec := HostSpec(v, r.Translator, current, r.dns)
	if r.StripExternalIPs && len(spec.ExternalIPs) > 0 {
		s.ReportPolicy(v, "not applied on the host: externalIPs %s (policies.isolation.externalIPs)", strings.Join(spec.ExternalIPs, ", "))
		spec.ExternalIPs = nil
		if spec.Type == "" || spec.Type == corev1.ServiceTypeClusterIP {
			// Only for externally reachable Services: the API server
			// defaulted it for the external IPs.
			spec.ExternalTrafficPolicy = ""
		}
	}
	return spec
}

// New returns the Service syncer. dns, when not nil, is where the host copy
// of the virtual kube-system/kube-dns Service leads (see HostSpec).
func New(tr translate.Translator, dns *DNSBackend) *Syncer {
	return &Syncer{Kind: syncer.Kind[*corev1.Service]{Plural: "services", Kind: corev1.SchemeGroupVersion.WithKind("Service"),
		NewObject: func() *corev1.Service { return &corev1.Service{} }, Translator: tr}, dns: dns}
}

// New implements syncer.Resource.
func (r *Syncer) New() *corev1.Service { return &corev1.Service{} }

// KeepOnUIDMismatch implements syncer.UIDPolicy: a virtual Service recreated
// to take the host clusterIP keeps its host copy.
func (r *Syncer) KeepOnUIDMismatch() bool { return true }

// ShouldSync implements syncer.Selector. The virtual default/kubernetes
// Service is not synced: the host Service named after the virtual cluster
// backs it (see the runner's bootstrap); nor are the tenant's replicas of
// host Services (networking.replicateServices.fromHost), which lead to the
// host Service itself.
func (r *Syncer) ShouldSync(_ context.Context, _ *syncer.Context, v *corev1.Service) bool {
	return !(v.Namespace == metav1.NamespaceDefault && v.Name == "kubernetes") && v.Labels[fromhost.Label] != "true"
}

// SyncToHost implements syncer.Resource. The host Service is asked for the
// virtual clusterIP and node ports; when the host has given one of them to
// another Service, it is asked again without the node ports, then without
// the clusterIP as well, and Sync moves the virtual Service to what the
// host allocated.
func (r *Syncer) SyncToHost(ctx context.Context, s *syncer.Context, c *syncer.Create[*corev1.Service]) (ctrl.Result, error) {
	build := func(ip bool) *corev1.Service {
		spec := r.hostSpec(s, c.Virtual, nil)
		return &corev1.Service{ObjectMeta: syncer.HostMeta(s, c), Spec: WithoutRequests(spec, nil, ip)}
	}
	host := &corev1.Service{ObjectMeta: syncer.HostMeta(s, c), Spec: r.hostSpec(s, c.Virtual, nil)}
	res, err := c.CreateHost(ctx, s, host)
	if err == nil || !apierrors.IsInvalid(err) {
		return res, err
	}
	for _, ip := range []bool{true, false} {
		// Built again: CreateHost applied the patches to the first one.
		if res, err = c.CreateHost(ctx, s, build(ip)); err == nil || !apierrors.IsInvalid(err) {
			break
		}
	}
	if err != nil || res.RequeueAfter > 0 {
		return res, err
	}
	// The host chose other node ports or another address: Sync copies them
	// to the virtual Service. Our own create does not wake us, so come back
	// at once.
	return ctrl.Result{RequeueAfter: time.Millisecond}, nil
}

// Sync implements syncer.Resource.
func (r *Syncer) Sync(ctx context.Context, s *syncer.Context, p *syncer.Pair[*corev1.Service]) (ctrl.Result, error) {
	if hip, vip := p.Host.Spec.ClusterIP, p.Virtual.Spec.ClusterIP; NeedsHostIP(vip, hip) {
		p.KeepBase()
		return ctrl.Result{}, recreateVirtual(ctx, s, p.Virtual, p.Host)
	}
	v, h := syncer.ApplyMeta(p)
	h.Spec = r.hostSpec(s, p.Virtual, &p.Host.Spec)
	if err := p.PatchHost(ctx, s, h); apierrors.IsInvalid(err) {
		// A node port the virtual Service asks for is another host
		// Service's: the host allocates one, copied back below.
		v, h = syncer.ApplyMeta(p)
		h.Spec = WithoutRequests(r.hostSpec(s, p.Virtual, &p.Host.Spec), &p.Host.Spec, true)
		err = p.PatchHost(ctx, s, h)
		if err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{RequeueAfter: time.Millisecond}, nil
	} else if err != nil {
		return ctrl.Result{}, err
	}
	VirtualNodePorts(&v.Spec, &p.Host.Spec)
	if err := s.PatchVirtual(ctx, p.Virtual, v); err != nil {
		return ctrl.Result{}, err
	}
	vs := syncer.DeepCopy(p.Virtual)
	vs.Status = *p.Host.Status.DeepCopy()
	return ctrl.Result{}, s.PatchVirtualStatus(ctx, p.Virtual, vs)
}

// NeedsHostIP reports whether a virtual Service with clusterIP virtualIP
// must be made again with hostIP, its host copy's (the field is
// immutable): when both are addresses and differ. "None" (headless) and
// "" (ExternalName, or a host copy that has not been given its address
// yet) are not addresses: a Service that turns ExternalName loses its
// address on both sides, and one that leaves ExternalName asks the host
// for the virtual one (HostSpec).
func NeedsHostIP(virtualIP, hostIP string) bool {
	isIP := func(ip string) bool { return ip != "" && ip != corev1.ClusterIPNone }
	return isIP(virtualIP) && isIP(hostIP) && virtualIP != hostIP
}

// recreateVirtual replaces the virtual Service by one with the host's
// clusterIP (the field is immutable). The new Service keeps name, labels,
// annotations and spec.
func recreateVirtual(ctx context.Context, s *syncer.Context, v, host *corev1.Service) error {
	uid := v.UID
	if err := s.Virtual.Delete(ctx, v, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("recreate virtual service with host clusterIP %s: %w", host.Spec.ClusterIP, err)
	}
	next := &corev1.Service{ObjectMeta: metav1.ObjectMeta{
		Name: v.Name, Namespace: v.Namespace, Labels: v.Labels, Annotations: v.Annotations, OwnerReferences: v.OwnerReferences,
	}, Spec: *v.Spec.DeepCopy()}
	next.Spec.ClusterIP, next.Spec.ClusterIPs = host.Spec.ClusterIP, host.Spec.ClusterIPs
	next.Spec.IPFamilies, next.Spec.IPFamilyPolicy = host.Spec.IPFamilies, host.Spec.IPFamilyPolicy
	for i := range next.Spec.Ports {
		next.Spec.Ports[i].NodePort = 0
	}
	VirtualNodePorts(&next.Spec, &host.Spec)
	if err := s.Virtual.Create(ctx, next); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("recreate virtual service with host clusterIP %s: %w", host.Spec.ClusterIP, err)
	}
	return nil
}
