package config

import rbacv1 "k8s.io/api/rbac/v1"

// RBAC is vCluster's rbac: the host permissions of the control plane pod.
type RBAC struct {
	// Role is Role vc-NAME in the host namespace.
	Role RBACRole `json:"role"`
	// ClusterRole is ClusterRole vc-NAME-v-NAMESPACE.
	ClusterRole RBACClusterRole `json:"clusterRole"`

	// EnableVolumeSnapshotRules is vCluster's switch of the volume
	// snapshot rules: accepted, not acted on (the chart gives them when
	// sync.toHost.volumeSnapshots is on).
	EnableVolumeSnapshotRules any `json:"enableVolumeSnapshotRules,omitempty" config:"vcluster"`
}

// RBACRole is vCluster's rbac.role.
type RBACRole struct {
	// Enabled makes the Role and its RoleBinding; false leaves the
	// control plane's namespaced permissions to the host's administrator.
	Enabled bool `json:"enabled"`
	// ExtraRules are added to the Role's rules.
	ExtraRules []rbacv1.PolicyRule `json:"extraRules"`
	// OverwriteRules, when given, are the Role's rules instead of the
	// chart's (which the syncer needs: without them it is refused what it
	// does).
	OverwriteRules []rbacv1.PolicyRule `json:"overwriteRules"`
}

// RBACClusterRole is vCluster's rbac.clusterRole.
type RBACClusterRole struct {
	// Enabled makes the ClusterRole and its binding: true or "auto" (the
	// chart always needs it, to read the host's nodes), or false, which
	// leaves them to the host's administrator.
	Enabled AutoSwitch `json:"enabled"`
	// ExtraRules are added to the ClusterRole's rules.
	ExtraRules []rbacv1.PolicyRule `json:"extraRules"`
	// OverwriteRules, when given, are the ClusterRole's rules instead of
	// the chart's.
	OverwriteRules []rbacv1.PolicyRule `json:"overwriteRules"`
}
