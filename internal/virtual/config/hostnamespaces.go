package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// HostNamespaceUse is a host namespace other than the virtual cluster's own
// that the configuration names, where the chart gives the syncer a Role:
// it must exist before the chart is installed.
type HostNamespaceUse struct {
	// Namespace is the host namespace.
	Namespace string
	// Key is the first configuration key that names it, e.g.
	// `sync.fromHost.configMaps.mappings.byName["platform/ca"]`.
	Key string
}

// OtherHostNamespaces returns the host namespaces other than own (the
// virtual cluster's host namespace, named name) that c names: the sources
// of sync.fromHost configMaps, secrets and gateways mappings, the targets of
// networking.replicateServices.toHost and sources of .fromHost, and the
// namespaces of exportKubeConfig's Secrets; each once, with the first key
// naming it, sorted by namespace.
func (c *Config) OtherHostNamespaces(name, own string) []HostNamespaceUse {
	var out []HostNamespaceUse
	add := func(ns, key string) {
		if ns != "" && ns != own && !slices.ContainsFunc(out, func(u HostNamespaceUse) bool { return u.Namespace == ns }) {
			out = append(out, HostNamespaceUse{Namespace: ns, Key: key})
		}
	}
	for _, m := range []struct {
		key string
		m   FromHostMapped
	}{{"sync.fromHost.configMaps", c.Sync.FromHost.ConfigMaps}, {"sync.fromHost.secrets", c.Sync.FromHost.Secrets}} {
		if !m.m.Enabled {
			continue
		}
		for _, from := range slices.Sorted(maps.Keys(m.m.Mappings.ByName)) {
			ns, _, _ := strings.Cut(from, "/")
			add(ns, fmt.Sprintf("%s.mappings.byName[%q]", m.key, from))
		}
	}
	if g := c.Sync.FromHost.Gateways; g.Enabled {
		for _, from := range slices.Sorted(maps.Keys(g.Mappings.ByName)) {
			ns, _, _ := strings.Cut(from, "/")
			add(ns, fmt.Sprintf("sync.fromHost.gateways.mappings.byName[%q]", from))
		}
	}
	rs := c.Networking.ReplicateServices
	for i, e := range rs.ToHost {
		ns, _, _ := strings.Cut(e.To, "/")
		add(ns, fmt.Sprintf("networking.replicateServices.toHost[%d].to", i))
	}
	for i, e := range rs.FromHost {
		ns, _, _ := strings.Cut(e.From, "/")
		add(ns, fmt.Sprintf("networking.replicateServices.fromHost[%d].from", i))
	}
	for _, s := range c.ExportKubeConfig.KubeconfigSecrets(name, own) {
		add(s.Namespace, "exportKubeConfig")
	}
	slices.SortFunc(out, func(a, b HostNamespaceUse) int { return strings.Compare(a.Namespace, b.Namespace) })
	return out
}
