package eks

import "github.com/clustersync/clustersync/internal/hosted/engine"

// NextVersion is the version to upgrade a cluster at current to on the way
// to desired: EKS upgrades one minor version at a time and never
// downgrades (engine.NextVersion), so the result is current's next minor
// (or desired when that is the next one), "" when current is already
// desired, and an error that names both versions for a downgrade or a
// major-version change.
func NextVersion(current, desired string) (string, error) {
	return engine.NextVersion("EKS", current, desired)
}
