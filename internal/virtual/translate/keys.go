package translate

// Keys vCluster writes on host objects. clustersync writes the same keys so
// that vCluster tooling reads its objects
// (https://github.com/loft-sh/vcluster/blob/main/pkg/util/translate/types.go).
const (
	// AnnotationObjectName holds the virtual object's name.
	AnnotationObjectName = "vcluster.loft.sh/object-name"
	// AnnotationObjectNamespace holds the virtual object's namespace ("" for
	// cluster-scoped objects).
	AnnotationObjectNamespace = "vcluster.loft.sh/object-namespace"
	// AnnotationObjectUID holds the virtual object's UID; a host object whose
	// value differs from the virtual UID is stale and is replaced.
	AnnotationObjectUID = "vcluster.loft.sh/object-uid"
	// AnnotationObjectKind holds the virtual object's kind in
	// schema.GroupVersionKind.String() form, e.g. "/v1, Kind=Pod".
	AnnotationObjectKind = "vcluster.loft.sh/object-kind"
	// AnnotationObjectHostName holds the host object's own name.
	AnnotationObjectHostName = "vcluster.loft.sh/object-host-name"
	// AnnotationObjectHostNamespace holds the host object's own namespace.
	AnnotationObjectHostNamespace = "vcluster.loft.sh/object-host-namespace"
	// AnnotationManagedAnnotations lists, sorted and newline-joined, the
	// annotation keys the syncer copied from the virtual object; keys not in it
	// belong to the host and are never removed by the syncer.
	AnnotationManagedAnnotations = "vcluster.loft.sh/managed-annotations"
	// AnnotationSkipBacksync on a host object stops SyncToVirtual for it.
	AnnotationSkipBacksync = "vcluster.loft.sh/skip-backsync"
	// AnnotationForceSync set to "true" on a virtual Secret or ConfigMap syncs
	// it to the host even when no pod references it.
	AnnotationForceSync = "vcluster.loft.sh/force-sync"

	// LabelManagedBy holds the name of the virtual cluster owning a host object.
	LabelManagedBy = "vcluster.loft.sh/managed-by"
	// LabelNamespace holds the virtual namespace of a host object.
	LabelNamespace = "vcluster.loft.sh/namespace"
	// LabelControlledBy is reserved by vCluster; a virtual label with this key is
	// rewritten like the other reserved keys.
	LabelControlledBy = "vcluster.loft.sh/controlled-by"
	// LabelFakeNode marks a virtual Node created by the syncer.
	LabelFakeNode = "vcluster.loft.sh/fake-node"

	// LabelPrefixRewritten prefixes the rewritten form of a reserved virtual
	// label key: vcluster.loft.sh/label-<vcluster>-x-<sha256(key)[0:10]>.
	LabelPrefixRewritten = "vcluster.loft.sh/label-"
	// LabelPrefixNamespace prefixes a host pod label carrying one label of the
	// pod's virtual namespace: vcluster.loft.sh/ns-label-<vcluster>-x-<sha10(key)>.
	LabelPrefixNamespace = "vcluster.loft.sh/ns-label-"
)

// Pod annotations vCluster writes so the downward API of a host pod reads
// the virtual values
// (https://github.com/loft-sh/vcluster/blob/main/pkg/controllers/resources/pods/translate/translator.go).
const (
	// AnnotationPodName holds the virtual pod's name.
	AnnotationPodName = "vcluster.loft.sh/name"
	// AnnotationPodNamespace holds the virtual pod's namespace.
	AnnotationPodNamespace = "vcluster.loft.sh/namespace"
	// AnnotationPodUID holds the virtual pod's UID.
	AnnotationPodUID = "vcluster.loft.sh/uid"
	// AnnotationPodLabels holds the virtual pod's labels as sorted k="v" lines.
	AnnotationPodLabels = "vcluster.loft.sh/labels"
	// AnnotationPodOwnerReferences holds the virtual pod's owner references as JSON.
	AnnotationPodOwnerReferences = "vcluster.loft.sh/owner-references"
	// AnnotationPodOwnerSetKind holds the kind of the set owning the virtual pod.
	AnnotationPodOwnerSetKind = "vcluster.loft.sh/owner-set-kind"
	// AnnotationPodServiceAccountName holds the virtual pod's service account.
	AnnotationPodServiceAccountName = "vcluster.loft.sh/service-account-name"
	// AnnotationPodTokenPrefix prefixes the annotation holding a service
	// account token minted in the virtual cluster for a host pod.
	AnnotationPodTokenPrefix = "vcluster.loft.sh/token-"
)

// reservedLabels are virtual label keys that would let a tenant forge the
// syncer's bookkeeping; they are stored on the host under a hashed key.
var reservedLabels = [...]string{"release", LabelNamespace, LabelManagedBy, LabelControlledBy}

// bookkeepingAnnotations are written by the syncer and never copied between
// the two sides as user annotations.
var bookkeepingAnnotations = [...]string{
	AnnotationObjectName, AnnotationObjectNamespace, AnnotationObjectUID,
	AnnotationObjectKind, AnnotationObjectHostName, AnnotationObjectHostNamespace,
	AnnotationManagedAnnotations,
}

// IsBookkeepingAnnotation reports whether key is one of the object-* or
// managed-annotations keys the syncer owns on host objects.
func IsBookkeepingAnnotation(key string) bool {
	for _, k := range bookkeepingAnnotations {
		if k == key {
			return true
		}
	}
	return false
}

// AnnotationManagedLabels lists, like managed-annotations, the label keys the
// syncer copied from the virtual object. vCluster keeps no such list; with it
// a label removed in the virtual cluster while the syncer was down is still
// removed from the host afterwards.
const AnnotationManagedLabels = "clustersync.io/managed-labels"

// AnnotationPodResources, on a host pod, is a hash of the container
// resources of its virtual pod when they last reached the host (at create
// or at an in-place resize): a virtual pod whose resources hash otherwise
// was resized by the tenant. Comparing the resources themselves would not
// do: the host's LimitRange may have added defaults to the host pod's.
const AnnotationPodResources = "clustersync.io/resources"

// systemPrefixes are annotation prefixes owned by the syncers: host keys with
// them never flow to the virtual object.
var systemPrefixes = [...]string{"vcluster.loft.sh/", "clustersync.io/"}
