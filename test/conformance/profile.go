package conformance

import (
	"fmt"

	"sigs.k8s.io/yaml"
)

// ConformanceValues is the values file of profile "conformance", relative
// to this package's folder.
const ConformanceValues = "../../examples/conformance/values.yaml"

// WithDefaultPolicies returns values (a vcluster.yaml) without its
// top-level `policies` key, so that every policy is clustersync's default:
// profile "defaults" runs the suite on the conformance profile's nodes,
// scheduler and storage (examples/conformance/values.yaml) with the secure
// defaults on, and what fails then is what those defaults stop
// (docs/security.md). Pure clustersync defaults cannot start the suite: a
// virtual cluster with pseudo nodes and no pod has no node yet, and the
// suite first waits for a schedulable one. It returns an error when values
// is not a YAML mapping or has no `policies` key (nothing would differ
// from profile "conformance").
func WithDefaultPolicies(values []byte) ([]byte, error) {
	var m map[string]any
	if err := yaml.Unmarshal(values, &m); err != nil {
		return nil, fmt.Errorf("values: %w", err)
	}
	if _, ok := m["policies"]; !ok {
		return nil, fmt.Errorf("values: no policies key to leave out")
	}
	delete(m, "policies")
	out, err := yaml.Marshal(m)
	if err != nil {
		return nil, err
	}
	header := "# Written by test/conformance for profile \"defaults\": examples/conformance/values.yaml\n" +
		"# without its policies key, so every policy is clustersync's default.\n"
	return append([]byte(header), out...), nil
}
