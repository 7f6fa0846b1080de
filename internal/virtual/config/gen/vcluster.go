package main

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/clustersync/clustersync/internal/virtual/config"
)

// The marker lines of docs/configuration.md between which vclusterTable
// goes.
const (
	beginVCluster = "<!-- BEGIN GENERATED: vcluster-keys (go generate ./internal/virtual/config) -->"
	endVCluster   = "<!-- END GENERATED: vcluster-keys -->"
)

// statusTakesEffect is the cell of a vCluster key that takes effect.
const statusTakesEffect = "takes effect"

// vclusterTable returns the Markdown that goes between the vcluster-keys
// markers of docs/configuration.md: a count of vCluster release's keys by
// what clustersync does with them (config.VClusterKeys.Statuses), then
// one row per key with its types and that status.
func vclusterTable(k *config.VClusterKeys, release string) (string, error) {
	statuses := k.Statuses(release)
	if len(statuses) == 0 {
		return "", fmt.Errorf("vCluster release %s: no keys", release)
	}
	types := map[string][]string{}
	for _, key := range k.Keys {
		types[key.Path] = key.Types
	}
	count := map[string]int{}
	for _, s := range statuses {
		count[cmpReason(s.Reason)]++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Of the %d keys of vCluster %s:\n\n", len(statuses), release)
	for _, r := range slices.SortedFunc(maps.Keys(count), func(a, b string) int { return cmp.Or(count[b]-count[a], strings.Compare(a, b)) }) {
		fmt.Fprintf(&b, "- %d: %s\n", count[r], r)
	}
	b.WriteString("\n| vCluster key | Type | In clustersync |\n| --- | --- | --- |\n")
	for _, s := range statuses {
		typ := strings.Join(types[s.Path], " or ")
		if typ == "" {
			typ = "any"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", s.Path, typ, cmpReason(s.Reason))
	}
	return b.String(), nil
}

// cmpReason is the status cell of a key: "takes effect", or "no effect: "
// and why.
func cmpReason(reason string) string {
	if reason == "" {
		return statusTakesEffect
	}
	return "no effect: " + reason
}
