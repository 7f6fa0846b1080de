package v1

// Namespace is the namespace the management controller creates operator
// objects in, and keeps the Secrets it makes for clusters (Rancher's
// cattle-global-data).
const Namespace = "clustersync-global-data"

// Phases of an operator object (status.phase), as in Rancher's EKS, AKS and
// GKE operators. The empty phase means the operator has not created or
// imported the cluster yet.
const (
	// PhaseCreating means the cluster is being created in the cloud.
	PhaseCreating = "creating"
	// PhaseActive means the cluster exists and no change is being applied.
	PhaseActive = "active"
	// PhaseUpdating means a change is being applied to the cluster, by
	// clustersync or by someone else (the operator waits for it).
	PhaseUpdating = "updating"
	// PhaseImporting means an existing cluster is being registered.
	PhaseImporting = "importing"
	// PhaseDeleting means the cluster is being deleted (or, if imported,
	// disconnected).
	PhaseDeleting = "deleting"
)

// OperatorStatus is the part of an operator object's status that the
// hosted-cluster engine keeps for every cloud. The typed applied spec
// (status.appliedSpec) sits beside it in each provider's status, since its
// type is the provider's config spec.
type OperatorStatus struct {
	// Phase is where the operator is in the cluster's life cycle: "",
	// creating, active, updating, importing or deleting.
	// +kubebuilder:validation:Enum=creating;active;updating;importing;deleting
	// +optional
	Phase string `json:"phase,omitempty"`

	// FailureMessage is the last error of the operator (e.g. a refused
	// downgrade), empty after a successful pass.
	// +optional
	FailureMessage string `json:"failureMessage,omitempty"`

	// PendingUpdates are pushes the cloud accepted whose outcome is not
	// known yet (an operation in progress, or a call whose answer was
	// lost). status.appliedSpec already holds their value; when the cloud
	// reports the operation failed, or the value never shows up once the
	// cloud is idle, the applied value goes back to Previous and
	// failureMessage names the field.
	// +listType=map
	// +listMapKey=path
	// +optional
	PendingUpdates []PendingUpdate `json:"pendingUpdates,omitempty"`

	// Conflicts are the managed fields changed both in the spec and in the
	// cloud since they were last applied; nothing is written to them.
	// Editing such a field in the spec again answers the conflict: the new
	// value is pushed over the upstream value recorded here (unless the
	// cloud moved once more). The management controller reports them in the
	// Cluster's condition Conflict.
	// +listType=map
	// +listMapKey=path
	// +optional
	Conflicts []FieldConflict `json:"conflicts,omitempty"`

	// ObservedGeneration is the metadata.generation of the spec the
	// operator last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// PendingUpdate is one field the operator pushed whose outcome the cloud
// has not reported yet. Values are JSON ("null" for unset, or for a node
// group or pool that does not exist).
type PendingUpdate struct {
	// Path names the field: "tags", "nodeGroups[workers].desiredSize",
	// "nodeGroups[batch]" (a whole node group created or deleted).
	Path string `json:"path"`
	// UpdateID is the cloud's ID of the operation that applies it (an EKS
	// update ID), empty for calls that return none; such a push took effect
	// when upstream shows its value.
	// +optional
	UpdateID string `json:"updateID,omitempty"`
	// Value is what was pushed.
	Value string `json:"value"`
	// Previous is the applied value before the push, restored if the push
	// does not take effect.
	Previous string `json:"previous"`
}

// FieldConflict is one managed field changed on both sides since it was
// last applied. Values are JSON ("null" for unset or absent).
type FieldConflict struct {
	// Path names the field, as in PendingUpdate.
	Path string `json:"path"`
	// Config is the spec's value when the conflict was found.
	Config string `json:"config"`
	// Upstream is the value the cloud reported then.
	Upstream string `json:"upstream"`
	// Applied is the last value applied before both changes.
	Applied string `json:"applied"`
}
