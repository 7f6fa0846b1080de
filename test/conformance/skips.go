package conformance

// Skips are the [Conformance] specs make conformance does not run, each
// with the reason, as ginkgo skip patterns (a part of the spec's name,
// matched literally): a spec whose image cannot be built honestly here, or
// that needs what the local host does not have. Such a spec is skipped by
// name and counted as not run, never as passed; docs/conformance.md lists
// them.
func Skips() map[string]string {
	return map[string]string{
		`ImageVolume should succeed with pod and pull policy of Always`: "it mounts image kitten:1.8 as a volume and expects Alpine's " +
			"/etc/os-release in it; clustersync builds kitten on a Debian userland (internal/images.ConformanceImages)",
		`Conformance Tests should have at least two untainted nodes`: "the local host has one real node; " +
			"the suite's own check that a cluster has two schedulable nodes",
		`Daemon set should rollback without unnecessary restarts`: "the local host has one real node; " +
			"the spec fails at once on a cluster with fewer than two schedulable nodes",
	}
}
