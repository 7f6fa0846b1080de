package services

import (
	"context"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/resources/endpointslices"
	"github.com/clustersync/clustersync/internal/virtual/resources/fromhost"
	"github.com/clustersync/clustersync/internal/virtual/resources/pods"
	"github.com/clustersync/clustersync/internal/virtual/syncer"
)

// The marks of the Services and EndpointSlices that networking.replicateServices
// makes (vCluster's https://www.vcluster.com/docs/vcluster/configure/vcluster-yaml/networking/replicate-services).
const (
	// LabelReplicatedBy, on a host Service of toHost, names the virtual
	// cluster that made it; `virtual delete` and `virtual upgrade` delete
	// those whose entry is gone.
	LabelReplicatedBy = "clustersync.io/replicated-by"
	// AnnotationReplicatedFrom says which Service a replicated one
	// stands for: "namespace/name", of the virtual cluster (toHost) or of
	// the host (fromHost).
	AnnotationReplicatedFrom = "clustersync.io/replicated-from"
	// ReplicationManager is the endpointslice.kubernetes.io/managed-by of
	// the EndpointSlices of replicated Services, so that no EndpointSlice
	// controller takes them.
	ReplicationManager = "replicate-services.clustersync.io"
	// ReasonReplicationConflict is the reason of the Warning event on a
	// virtual Service that is not replicated because the Service it would
	// become exists and is not the virtual cluster's.
	ReasonReplicationConflict = "ReplicationConflict"
)

// Replication is one entry of networking.replicateServices, parsed.
type Replication struct {
	// Key is the entry's configuration key, e.g.
	// "networking.replicateServices.toHost[0]".
	Key string
	// From and To are the replicated Service and the one made.
	From, To types.NamespacedName
}

// Replications parses entries (ServiceMapping "namespace/name" sides, as
// config.Validate accepts them) under key, e.g.
// "networking.replicateServices.toHost".
func Replications(key string, entries []config.ServiceMapping) []Replication {
	out := make([]Replication, 0, len(entries))
	for i, m := range entries {
		out = append(out, Replication{Key: fmt.Sprintf("%s[%d]", key, i), From: splitKey(m.From), To: splitKey(m.To)})
	}
	return out
}

func splitKey(s string) types.NamespacedName {
	ns, name, _ := strings.Cut(s, "/")
	return types.NamespacedName{Namespace: ns, Name: name}
}

// ReplicaService is the Service that stands for from in another cluster,
// named to: from's ports (node ports and the cluster IP left out), no
// selector (its EndpointSlices say where it leads), headless when from is
// or when headless is set, annotated with where it comes from.
func ReplicaService(from *corev1.Service, to types.NamespacedName, headless bool, labels map[string]string) *corev1.Service {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: to.Name, Namespace: to.Namespace, Labels: maps.Clone(labels),
		Annotations: map[string]string{AnnotationReplicatedFrom: from.Namespace + "/" + from.Name}}}
	for _, p := range from.Spec.Ports {
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: p.Name, Protocol: p.Protocol, Port: p.Port, AppProtocol: p.AppProtocol,
			TargetPort: p.TargetPort})
	}
	if headless || from.Spec.ClusterIP == corev1.ClusterIPNone {
		svc.Spec.ClusterIP = corev1.ClusterIPNone
	}
	return svc
}

// ReplicaSlices are the EndpointSlices of the replica Service to, one per
// slice of src (the EndpointSlices behind the replicated Service), with
// their endpoints' addresses, conditions and ports; names are stable per
// source slice.
func ReplicaSlices(src []discoveryv1.EndpointSlice, to types.NamespacedName, labels map[string]string) []discoveryv1.EndpointSlice {
	out := make([]discoveryv1.EndpointSlice, 0, len(src))
	for _, s := range src {
		rs := discoveryv1.EndpointSlice{ObjectMeta: replicaSliceMeta(to, s.Name, labels), AddressType: s.AddressType, Ports: slices.Clone(s.Ports)}
		for _, e := range s.Endpoints {
			rs.Endpoints = append(rs.Endpoints, discoveryv1.Endpoint{Addresses: slices.Clone(e.Addresses), Conditions: e.Conditions, Hostname: e.Hostname})
		}
		out = append(out, rs)
	}
	return out
}

// ClusterIPSlice is the EndpointSlice of the replica Service to of a host
// Service with a cluster IP: that address, on each of svc's ports.
func ClusterIPSlice(svc *corev1.Service, to types.NamespacedName, labels map[string]string) discoveryv1.EndpointSlice {
	family := discoveryv1.AddressTypeIPv4
	if strings.Contains(svc.Spec.ClusterIP, ":") {
		family = discoveryv1.AddressTypeIPv6
	}
	s := discoveryv1.EndpointSlice{ObjectMeta: replicaSliceMeta(to, "cluster-ip", labels), AddressType: family, Endpoints: []discoveryv1.Endpoint{{Addresses: []string{svc.Spec.ClusterIP}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}}}
	for _, p := range svc.Spec.Ports {
		s.Ports = append(s.Ports, discoveryv1.EndpointPort{Name: ptr.To(p.Name), Protocol: ptr.To(p.Protocol), Port: ptr.To(p.Port), AppProtocol: p.AppProtocol})
	}
	return s
}

// replicaSliceMeta is the metadata of the replica slice of Service to
// that stands for source src: its name (sliceName), labels with the
// Service's name and ReplicationManager.
func replicaSliceMeta(to types.NamespacedName, src string, labels map[string]string) metav1.ObjectMeta {
	l := maps.Clone(labels)
	l[discoveryv1.LabelServiceName] = to.Name
	l[discoveryv1.LabelManagedBy] = ReplicationManager
	return metav1.ObjectMeta{Name: sliceName(to.Name, src), Namespace: to.Namespace, Labels: l}
}

// sliceName is the name of the replica slice of source slice src of the
// Service named service: service-<hash of src>, at most 63 characters.
func sliceName(service, src string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(src))
	suffix := fmt.Sprintf("-%08x", h.Sum32())
	if len(service) > 63-len(suffix) {
		service = service[:63-len(suffix)]
	}
	return service + suffix
}

// side is one cluster of a replication: the cache its Services and
// EndpointSlices are watched and read through, and the client they are
// written with.
type side struct {
	cache cache.Cache
	write client.Client
}

// replicator keeps the replicas of one direction's entries.
type replicator struct {
	s        *syncer.Context
	from, to side
	byFrom   map[types.NamespacedName]Replication
	// labels mark the replicas this virtual cluster makes.
	labels map[string]string
	// toHost is the direction: the replicas are host Services of tenant
	// Services (else tenant Services of host Services).
	toHost bool
	// restrict keeps out of toHost replicas the addresses that are not
	// the tenant's pods' (policies.isolation.endpoints).
	restrict bool
}

// ReplicationOptions are what RegisterReplication needs besides the
// clusters.
type ReplicationOptions struct {
	// VCluster names the virtual cluster (its replicas' label).
	VCluster string
	// ToHost and FromHost are the entries.
	ToHost, FromHost []Replication
	// RestrictAddresses has a toHost replica lead only to the tenant's own
	// pods (policies.isolation.endpoints, pods.OwnPodIPs), as the
	// EndpointSlices syncer does; a Warning PolicyEnforced event on the
	// tenant's Service names the addresses left out.
	RestrictAddresses bool
}

// ReplicationOptionsOf are the ReplicationOptions of configuration cfg of
// virtual cluster vcluster: its networking.replicateServices entries and
// policies.isolation.endpoints.
func ReplicationOptionsOf(cfg *config.Config, vcluster string) ReplicationOptions {
	rs := cfg.Networking.ReplicateServices
	return ReplicationOptions{VCluster: vcluster, RestrictAddresses: cfg.Policies.Isolation.Endpoints,
		ToHost:   Replications("networking.replicateServices.toHost", rs.ToHost),
		FromHost: Replications("networking.replicateServices.fromHost", rs.FromHost)}
}

// RegisterReplication adds the controllers of networking.replicateServices
// to mgr: toHost reads the tenant's Services and EndpointSlices and writes
// host ones through hostCache (which must watch the toHost target
// namespaces) and hostClient; fromHost reads host Services and
// EndpointSlices through hostCache (the fromHost source namespaces too)
// and writes tenant ones.
func RegisterReplication(mgr ctrl.Manager, hostCache cache.Cache, hostClient client.Client, s *syncer.Context, o ReplicationOptions) error {
	virtual := side{cache: mgr.GetCache(), write: mgr.GetClient()}
	host := side{cache: hostCache, write: hostClient}
	for _, dir := range []struct {
		name     string
		entries  []Replication
		from, to side
		labels   map[string]string
		toHost   bool
	}{
		{"toHost", o.ToHost, virtual, host, map[string]string{LabelReplicatedBy: o.VCluster}, true},
		{"fromHost", o.FromHost, host, virtual, map[string]string{fromhost.Label: "true"}, false},
	} {
		if len(dir.entries) == 0 {
			continue
		}
		r := &replicator{s: s, from: dir.from, to: dir.to, byFrom: map[types.NamespacedName]Replication{}, labels: dir.labels, toHost: dir.toHost,
			restrict: dir.toHost && o.RestrictAddresses}
		// The entry (its From) of a Service or EndpointSlice of either side.
		fromOf, toOf := map[types.NamespacedName]types.NamespacedName{}, map[types.NamespacedName]types.NamespacedName{}
		for _, e := range dir.entries {
			r.byFrom[e.From] = e
			fromOf[e.From], toOf[e.To] = e.From, e.From
		}
		entryOf := func(index map[types.NamespacedName]types.NamespacedName) handler.EventHandler {
			return handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
				key := client.ObjectKeyFromObject(o)
				if sl, ok := o.(*discoveryv1.EndpointSlice); ok {
					key.Name = sl.Labels[discoveryv1.LabelServiceName]
				}
				if from, ok := index[key]; ok {
					return []reconcile.Request{{NamespacedName: from}}
				}
				return nil
			})
		}
		b := ctrl.NewControllerManagedBy(mgr).Named("replicate-services-" + dir.name).
			WatchesRawSource(source.Kind(dir.from.cache, client.Object(&corev1.Service{}), entryOf(fromOf))).
			WatchesRawSource(source.Kind(dir.from.cache, client.Object(&discoveryv1.EndpointSlice{}), entryOf(fromOf))).
			WatchesRawSource(source.Kind(dir.to.cache, client.Object(&corev1.Service{}), entryOf(toOf))).
			WatchesRawSource(source.Kind(dir.to.cache, client.Object(&discoveryv1.EndpointSlice{}), entryOf(toOf)))
		if err := b.Complete(r); err != nil {
			return fmt.Errorf("networking.replicateServices.%s: %w", dir.name, err)
		}
	}
	return nil
}

// Reconcile implements reconcile.Reconciler for the entry whose From is
// req.
func (r *replicator) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	e, ok := r.byFrom[req.NamespacedName]
	if !ok {
		return ctrl.Result{}, nil
	}
	var from corev1.Service
	ferr := r.from.cache.Get(ctx, e.From, &from)
	if ferr != nil && !apierrors.IsNotFound(ferr) {
		return ctrl.Result{}, ferr
	}
	var cur corev1.Service
	cerr := r.to.cache.Get(ctx, e.To, &cur)
	if cerr != nil && !apierrors.IsNotFound(cerr) {
		return ctrl.Result{}, cerr
	}
	ours := cerr == nil && r.isOurs(&cur)
	if apierrors.IsNotFound(ferr) {
		if ours {
			return ctrl.Result{}, client.IgnoreNotFound(r.to.write.Delete(ctx, &cur, client.Preconditions{UID: &cur.UID}))
		}
		return ctrl.Result{}, nil
	}
	if cerr == nil && !ours {
		if r.toHost {
			r.s.Events.Eventf(&from, nil, corev1.EventTypeWarning, ReasonReplicationConflict, "Replicate",
				"not published as host Service %s (%s): it exists and is not this virtual cluster's", e.To, e.Key)
		} else {
			r.s.Events.Eventf(&cur, nil, corev1.EventTypeWarning, fromhost.ReasonFromHostConflict, "Replicate",
				"not replaced by host Service %s (%s): this Service is the tenant's own", e.From, e.Key)
		}
		return ctrl.Result{}, nil
	}
	want := ReplicaService(&from, e.To, !r.toHost, r.labels)
	if cerr != nil {
		if !r.toHost {
			if err := r.ensureNamespace(ctx, e.To.Namespace); err != nil {
				return ctrl.Result{}, err
			}
		}
		if err := r.to.write.Create(ctx, want); apierrors.IsAlreadyExists(err) {
			return ctrl.Result{Requeue: true}, nil // the cache has not seen it yet
		} else if err != nil {
			return ctrl.Result{}, fmt.Errorf("%s: create Service %s: %w", e.Key, e.To, err)
		}
		cur = *want // as created: with its UID
	} else if !equality.Semantic.DeepEqual(cur.Spec.Ports, want.Spec.Ports) || cur.Annotations[AnnotationReplicatedFrom] != want.Annotations[AnnotationReplicatedFrom] {
		update := cur.DeepCopy()
		update.Spec.Ports = want.Spec.Ports
		if update.Annotations == nil {
			update.Annotations = map[string]string{}
		}
		update.Annotations[AnnotationReplicatedFrom] = want.Annotations[AnnotationReplicatedFrom]
		if err := r.to.write.Update(ctx, update); err != nil {
			return ctrl.Result{}, fmt.Errorf("%s: update Service %s: %w", e.Key, e.To, err)
		}
	}
	slicesWanted, err := r.wantedSlices(ctx, &from, e)
	if err != nil {
		return ctrl.Result{}, err
	}
	if r.restrict {
		own, err := pods.OwnPodIPs(ctx, r.s)
		if err != nil {
			return ctrl.Result{}, err
		}
		var refused []string
		for i := range slicesWanted {
			var no []string
			slicesWanted[i].Endpoints, no = endpointslices.RestrictEndpoints(slicesWanted[i].AddressType, slicesWanted[i].Endpoints, own)
			refused = append(refused, no...)
		}
		if len(refused) > 0 {
			r.s.ReportPolicy(&from, "not published as host Service %s: addresses %s, which are not this virtual cluster's pods (policies.isolation.endpoints)",
				e.To, strings.Join(refused, ", "))
		}
	}
	return ctrl.Result{}, r.keepSlices(ctx, &cur, e, slicesWanted)
}

// isOurs reports whether Service svc of the target side is a replica this
// virtual cluster made.
func (r *replicator) isOurs(svc *corev1.Service) bool {
	for k, v := range r.labels {
		if svc.Labels[k] != v {
			return false
		}
	}
	return svc.Annotations[AnnotationReplicatedFrom] != ""
}

// wantedSlices are the EndpointSlices the replica of from should have: the
// source side's slices of from, or, for a host Service with a cluster IP
// shown to the tenant, that address.
func (r *replicator) wantedSlices(ctx context.Context, from *corev1.Service, e Replication) ([]discoveryv1.EndpointSlice, error) {
	if !r.toHost && from.Spec.ClusterIP != corev1.ClusterIPNone && from.Spec.ClusterIP != "" {
		return []discoveryv1.EndpointSlice{ClusterIPSlice(from, e.To, r.labels)}, nil
	}
	var src discoveryv1.EndpointSliceList
	if err := r.from.cache.List(ctx, &src, client.InNamespace(from.Namespace), client.MatchingLabels{discoveryv1.LabelServiceName: from.Name}); err != nil {
		return nil, err
	}
	return ReplicaSlices(src.Items, e.To, r.labels), nil
}

// keepSlices makes the EndpointSlices of replica svc want: creates, updates
// and deletes (only slices it made: ReplicationManager).
func (r *replicator) keepSlices(ctx context.Context, svc *corev1.Service, e Replication, want []discoveryv1.EndpointSlice) error {
	var cur discoveryv1.EndpointSliceList
	if err := r.to.cache.List(ctx, &cur, client.InNamespace(e.To.Namespace),
		client.MatchingLabels{discoveryv1.LabelServiceName: e.To.Name, discoveryv1.LabelManagedBy: ReplicationManager}); err != nil {
		return err
	}
	wanted := map[string]discoveryv1.AddressType{}
	for _, w := range want {
		wanted[w.Name] = w.AddressType
	}
	// Gone first: slices no longer wanted, and those whose address type
	// changed (it cannot change in place; they are made anew below).
	have := map[string]*discoveryv1.EndpointSlice{}
	for i := range cur.Items {
		c := &cur.Items[i]
		if t, ok := wanted[c.Name]; ok && t == c.AddressType {
			have[c.Name] = c
			continue
		}
		if err := r.to.write.Delete(ctx, c); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("%s: delete EndpointSlice %s/%s: %w", e.Key, c.Namespace, c.Name, err)
		}
	}
	owner := metav1.OwnerReference{APIVersion: "v1", Kind: "Service", Name: svc.Name, UID: svc.UID}
	for _, w := range want {
		w.OwnerReferences = []metav1.OwnerReference{owner}
		c, ok := have[w.Name]
		switch {
		case !ok:
			if err := r.to.write.Create(ctx, &w); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("%s: create EndpointSlice %s/%s: %w", e.Key, w.Namespace, w.Name, err)
			}
		case !equality.Semantic.DeepEqual(c.Endpoints, w.Endpoints) || !equality.Semantic.DeepEqual(c.Ports, w.Ports):
			w.ResourceVersion = c.ResourceVersion
			if err := r.to.write.Update(ctx, &w); err != nil {
				return fmt.Errorf("%s: update EndpointSlice %s/%s: %w", e.Key, w.Namespace, w.Name, err)
			}
		}
	}
	return nil
}

// ensureNamespace creates virtual namespace ns when it does not exist.
func (r *replicator) ensureNamespace(ctx context.Context, ns string) error {
	err := r.to.write.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create virtual namespace %s for a replicated Service: %w", ns, err)
	}
	return nil
}

// StaleReplicas are the replicas among list (Services labelled as
// replicas, of either side) that no entry of entries stands for any more:
// whose name or source is not an entry's To and From.
func StaleReplicas(list []corev1.Service, entries []Replication) []corev1.Service {
	want := map[types.NamespacedName]string{}
	for _, e := range entries {
		want[e.To] = e.From.String()
	}
	var out []corev1.Service
	for _, s := range list {
		from, ok := want[client.ObjectKeyFromObject(&s)]
		if !ok || s.Annotations[AnnotationReplicatedFrom] != from {
			out = append(out, s)
		}
	}
	return out
}

// DeleteStaleReplicas deletes the replicas of virtual cluster o.VCluster
// that o's entries no longer stand for: toHost replicas (host Services
// labelled LabelReplicatedBy) in each of namespaces, through host, and
// fromHost replicas (tenant Services labelled fromhost.Label and annotated
// AnnotationReplicatedFrom) through virtual. It returns the deleted
// Services as "namespace/name", host ones first.
func DeleteStaleReplicas(ctx context.Context, host, virtual client.Client, namespaces []string, o ReplicationOptions) ([]string, error) {
	var deleted []string
	remove := func(w client.Writer, stale []corev1.Service) error {
		for i := range stale {
			s := &stale[i]
			if err := w.Delete(ctx, s, client.Preconditions{UID: &s.UID}); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("delete replicated Service %s/%s: %w", s.Namespace, s.Name, err)
			}
			deleted = append(deleted, s.Namespace+"/"+s.Name)
		}
		return nil
	}
	for _, ns := range namespaces {
		var list corev1.ServiceList
		if err := host.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{LabelReplicatedBy: o.VCluster}); err != nil {
			return deleted, fmt.Errorf("list the replicated Services of %s in host namespace %s: %w", o.VCluster, ns, err)
		}
		if err := remove(host, StaleReplicas(list.Items, o.ToHost)); err != nil {
			return deleted, err
		}
	}
	var list corev1.ServiceList
	if err := virtual.List(ctx, &list, client.MatchingLabels{fromhost.Label: "true"}); err != nil {
		return deleted, fmt.Errorf("list the tenant's replicas of host Services: %w", err)
	}
	replicas := slices.DeleteFunc(list.Items, func(s corev1.Service) bool { return s.Annotations[AnnotationReplicatedFrom] == "" })
	return deleted, remove(virtual, StaleReplicas(replicas, o.FromHost))
}

// WrittenNamespaces are the host namespaces toHost replicas may be in: own
// (the virtual cluster's host namespace) and each entry's, sorted.
func (o ReplicationOptions) WrittenNamespaces(own string) []string {
	out := []string{own}
	for _, e := range o.ToHost {
		out = append(out, e.To.Namespace)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
