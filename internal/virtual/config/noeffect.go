package config

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// NoEffect lists the keys of the file that clustersync accepts and does
// not act on, as dotted paths of their leaves, sorted (e.g.
// "networking.advanced.clusterDomain"): what is set under the vCluster
// sections kept as written (fields tagged config:"vcluster"), and a
// backing store with neither etcd switch on, which clustersync runs as its
// embedded etcd. `virtual create` prints the list once.
func (c *Config) NoEffect() []string {
	var out []string
	walkVCluster("", reflect.ValueOf(c).Elem(), &out)
	if etcd := c.ControlPlane.BackingStore.Etcd; !etcd.Embedded.Enabled && !etcd.External.Enabled {
		out = append(out, "controlPlane.backingStore.etcd (neither embedded nor external enabled: clustersync runs its embedded etcd)")
	}
	slices.Sort(out)
	return out
}

// walkVCluster appends the leaves of the config:"vcluster" fields of the
// struct v at path, also in the entries of maps of structs
// (customResources).
func walkVCluster(path string, v reflect.Value, out *[]string) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		p := keyPath(path, name)
		switch {
		case f.Tag.Get("config") == "vcluster":
			if val := v.Field(i).Interface(); val != nil {
				leaves(p, val, out)
			}
		case f.Type.Kind() == reflect.Struct && f.IsExported():
			walkVCluster(p, v.Field(i), out)
		case f.Type.Kind() == reflect.Map && f.Type.Elem().Kind() == reflect.Struct && f.IsExported():
			m := v.Field(i)
			keys := m.MapKeys()
			slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
			for _, k := range keys {
				walkVCluster(keyPath(p, k.String()), m.MapIndex(k), out)
			}
		}
	}
}

// leaves appends the dotted paths of the leaves of the generic value v at
// path; a list counts as one leaf.
func leaves(path string, v any, out *[]string) {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		*out = append(*out, path)
		return
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		leaves(keyPath(path, k), m[k], out)
	}
}

// NoEffectMessage is NoEffect as the one line `virtual create` prints, ""
// when the list is empty.
func (c *Config) NoEffectMessage() string {
	keys := c.NoEffect()
	if len(keys) == 0 {
		return ""
	}
	return fmt.Sprintf("accepted, no effect in clustersync: %s", strings.Join(keys, ", "))
}
