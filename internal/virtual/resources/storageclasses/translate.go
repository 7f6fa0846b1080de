// Package storageclasses syncs the tenant's StorageClasses to the host
// (sync.toHost.storageClasses), as vCluster does: each becomes the
// cluster-scoped host class vcluster-NAME-x-HOSTNAMESPACE-x-VCLUSTER, and
// the tenant's claims and volumes name that class on the host
// (internal/virtual/resources/pvcs, persistentvolumes).
package storageclasses

import (
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/resources/fromhost"
)

// DefaultClassAnnotation marks the default StorageClass of a cluster
// (https://kubernetes.io/docs/concepts/storage/storage-classes/#default-storageclass).
const DefaultClassAnnotation = "storageclass.kubernetes.io/is-default-class"

// BuiltinPatches are applied to every host copy: the default-class
// annotation is removed, since on the host it would make the tenant's
// class the default of every claim of the host cluster. The virtual class
// keeps it (patches undo a removal when comparing, see
// internal/virtual/patches).
func BuiltinPatches() []config.Patch {
	return []config.Patch{{Path: `metadata.annotations["` + DefaultClassAnnotation + `"]`, Expression: "undefined"}}
}

// Synced reports whether virtual class sc goes to the host: not a
// read-only copy of a host class (sync.fromHost.storageClasses).
func Synced(sc *storagev1.StorageClass) bool { return sc.Labels[fromhost.Label] != "true" }

// HostName is the host class a claim or volume naming virtual class sc
// uses: sc's own name when sc is a copy of a host class; hostName (its
// host copy's name) when the tenant's classes are synced; else sc's name
// as written (a host class of that name, if the host has one).
func HostName(sc *storagev1.StorageClass, syncOn bool, hostName string) string {
	if syncOn && Synced(sc) {
		return hostName
	}
	return sc.Name
}

// Apply writes virtual class v's content into host class h: provisioner,
// parameters, reclaim policy, mount options, expansion, binding mode and
// topologies.
func Apply(h, v *storagev1.StorageClass) {
	h.Provisioner = v.Provisioner
	h.Parameters = v.Parameters
	h.ReclaimPolicy = v.ReclaimPolicy
	h.MountOptions = v.MountOptions
	h.AllowVolumeExpansion = v.AllowVolumeExpansion
	h.VolumeBindingMode = v.VolumeBindingMode
	h.AllowedTopologies = v.AllowedTopologies
}

// Immutable reports whether host class h differs from v in a field the API
// server does not let change (provisioner, parameters, reclaim policy,
// binding mode): the host copy must then be replaced.
func Immutable(h, v *storagev1.StorageClass) bool {
	return h.Provisioner != v.Provisioner ||
		!equality.Semantic.DeepEqual(emptyNil(h.Parameters), emptyNil(v.Parameters)) ||
		!equality.Semantic.DeepEqual(h.ReclaimPolicy, v.ReclaimPolicy) ||
		!equality.Semantic.DeepEqual(h.VolumeBindingMode, v.VolumeBindingMode)
}

func emptyNil(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}
