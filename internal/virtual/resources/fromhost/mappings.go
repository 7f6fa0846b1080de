package fromhost

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Mappings say which objects of a namespaced host kind are copied into the
// virtual cluster and under which namespace and name: vCluster's
// mappings.byName of sync.fromHost.configMaps, .secrets and
// .customResources.<name>
// (https://www.vcluster.com/docs/vcluster/configure/vcluster-yaml/sync/from-host/config-maps).
// Keys are host "namespace/name", values virtual "namespace/name":
//
//	"foo/*": "bar/*"        every object of host namespace foo, into bar
//	"foo/obj": "bar/other"  one object, renamed
//	"": "bar/*"             every object of the virtual cluster's own host namespace
//	"/obj": "bar/obj"       one object of the virtual cluster's own host namespace
//
// A named entry wins over its namespace's "*" entry.
type Mappings struct {
	// whole maps a host namespace to a virtual namespace ("*" entries).
	whole map[string]string
	// named maps one host object to one virtual object.
	named map[types.NamespacedName]types.NamespacedName
}

// ParseMappings reads byName; hostNamespace is the virtual cluster's host
// namespace (the "" and "/name" keys). It returns every problem joined,
// each naming its key: a side that is not namespace/name, "*" on one side
// only, an invalid namespace name, two host namespaces into one virtual
// namespace (the copies could not be told apart), or no entry.
func ParseMappings(byName map[string]string, hostNamespace string) (Mappings, error) {
	m := Mappings{whole: map[string]string{}, named: map[types.NamespacedName]types.NamespacedName{}}
	var errs []string
	intoNamespace := map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(byName)) {
		v := byName[k]
		hk := k
		if hk == "" {
			hk = hostNamespace + "/*"
		} else if strings.HasPrefix(hk, "/") {
			hk = hostNamespace + hk
		}
		hns, hname, ok1 := strings.Cut(hk, "/")
		vns, vname, ok2 := strings.Cut(v, "/")
		switch {
		case !ok1 || hns == "" || hname == "":
			errs = append(errs, fmt.Sprintf("%q: the host side must be namespace/name, namespace/*, /name or \"\"", k))
		case !ok2 || vns == "" || vname == "":
			errs = append(errs, fmt.Sprintf("%q: the virtual side %q must be namespace/name or namespace/*", k, v))
		case (hname == "*") != (vname == "*"):
			errs = append(errs, fmt.Sprintf("%q: %q: a whole namespace maps to a whole namespace (both sides namespace/*)", k, v))
		case len(validation.IsDNS1123Label(vns)) > 0:
			errs = append(errs, fmt.Sprintf("%q: %q is not a namespace name", k, vns))
		case hname == "*":
			if other, ok := intoNamespace[vns]; ok && other != hns {
				errs = append(errs, fmt.Sprintf("%q: host namespaces %s and %s both map to virtual namespace %s", k, other, hns, vns))
				continue
			}
			intoNamespace[vns] = hns
			m.whole[hns] = vns
		default:
			m.named[types.NamespacedName{Namespace: hns, Name: hname}] = types.NamespacedName{Namespace: vns, Name: vname}
		}
	}
	if len(byName) == 0 {
		errs = append(errs, "no entry: a namespaced kind needs mappings.byName (e.g. \"\": \"default/*\")")
	}
	if len(errs) > 0 {
		return Mappings{}, fmt.Errorf("mappings.byName: %s", strings.Join(errs, "; "))
	}
	return m, nil
}

// Virtual is the virtual key of the copy of host object host.
func (m Mappings) Virtual(host types.NamespacedName) (types.NamespacedName, bool) {
	if v, ok := m.named[host]; ok {
		return v, true
	}
	if vns, ok := m.whole[host.Namespace]; ok {
		return types.NamespacedName{Namespace: vns, Name: host.Name}, true
	}
	return types.NamespacedName{}, false
}

// Host is the key of the host object whose copy is virtual, the inverse of
// Virtual.
func (m Mappings) Host(virtual types.NamespacedName) (types.NamespacedName, bool) {
	for h, v := range m.named {
		if v == virtual {
			return h, true
		}
	}
	for hns, vns := range m.whole {
		if vns == virtual.Namespace {
			h := types.NamespacedName{Namespace: hns, Name: virtual.Name}
			if _, named := m.named[h]; named {
				continue // that host object is copied under another name
			}
			return h, true
		}
	}
	return types.NamespacedName{}, false
}

// HostNamespaces are the host namespaces the mappings read, sorted.
func (m Mappings) HostNamespaces() []string {
	set := map[string]bool{}
	for ns := range m.whole {
		set[ns] = true
	}
	for h := range m.named {
		set[h.Namespace] = true
	}
	return slices.Sorted(maps.Keys(set))
}

// Named tells whether host object host has an entry of its own (not only
// its namespace's "*" entry).
func (m Mappings) Named(host types.NamespacedName) bool {
	_, ok := m.named[host]
	return ok
}
