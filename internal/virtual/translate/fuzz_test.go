package translate

import (
	"maps"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The fuzz targets of the package. Their seed corpus is in
// testdata/fuzz/FuzzXxx and runs with every `go test`; `make fuzz` runs the
// fuzzer on each target (one target per `go test -fuzz` run).

const (
	// fuzzKind and fuzzClusterKind are the object-kind annotations the
	// fuzzed host objects carry, as the syncer writes them.
	fuzzKind        = "/v1, Kind=ConfigMap"
	fuzzClusterKind = "storage.k8s.io/v1, Kind=StorageClass"
)

// identity is one virtual object of one virtual cluster: what must never
// share a host object with any other. namespace is "" for a cluster-scoped
// object.
type identity struct {
	hostNamespace, vcluster, namespace, name string
}

func (id identity) translator() Translator {
	return Translator{VCluster: id.vcluster, HostNamespace: id.hostNamespace}
}

// valid tells whether id names an object Kubernetes accepts: the host
// namespace, the virtual cluster and the virtual namespace are DNS-1123
// labels, the name a DNS-1123 subdomain (Pods, ConfigMaps, Secrets and
// cluster-scoped kinds allow dots).
func (id identity) valid(clusterScoped bool) bool {
	ok := len(validation.IsDNS1123Label(id.hostNamespace)) == 0 &&
		len(validation.IsDNS1123Label(id.vcluster)) == 0 &&
		len(validation.IsDNS1123Subdomain(id.name)) == 0
	if clusterScoped {
		return ok && id.namespace == ""
	}
	return ok && len(validation.IsDNS1123Label(id.namespace)) == 0
}

// hostName is the host name the syncer gives id (syncer.Kind.HostName).
func (id identity) hostName(clusterScoped bool) string {
	if clusterScoped {
		return id.translator().HostClusterScopedName(id.name)
	}
	return id.translator().HostName(id.name, id.namespace)
}

// hostObject builds the host object the syncer creates for id: labels from
// HostLabels, annotations from BookkeepingAnnotations, the host namespace
// for a namespaced kind and none for a cluster-scoped one.
func (id identity) hostObject(clusterScoped bool, labels map[string]string) *metav1.ObjectMeta {
	tr := id.translator()
	kind, namespace := fuzzKind, id.hostNamespace
	if clusterScoped {
		kind, namespace = fuzzClusterKind, ""
	}
	name := id.hostName(clusterScoped)
	return &metav1.ObjectMeta{
		Name:        name,
		Namespace:   namespace,
		Labels:      tr.HostLabels(labels, id.namespace),
		Annotations: tr.BookkeepingAnnotations(VirtualRef{Kind: kind, Name: id.name, Namespace: id.namespace, UID: uidOf(id)}, name),
	}
}

// uidOf gives each identity a UID of its own.
func uidOf(id identity) k8stypes.UID {
	return k8stypes.UID("uid-" + id.hostNamespace + "/" + id.vcluster + "/" + id.namespace + "/" + id.name)
}

// engineOwns is the ownership check the syncer engine makes before it
// changes or deletes the host object it found under the reconciled virtual
// object's host name: Translator.IsManaged with the kind's host-name
// function, and the object-name/object-namespace annotations naming the
// reconciled object itself (the engine refuses a host object made for
// another virtual object that happens to have the same host name).
func engineOwns(id identity, clusterScoped bool, host metav1.Object) bool {
	tr := id.translator()
	kind, hostName := fuzzKind, HostNameFunc(tr.HostName)
	if clusterScoped {
		kind, hostName = fuzzClusterKind, func(name, _ string) string { return tr.HostClusterScopedName(name) }
	}
	ann := host.GetAnnotations()
	return tr.IsManaged(host, kind, hostName) &&
		ann[AnnotationObjectName] == id.name && ann[AnnotationObjectNamespace] == id.namespace
}

// splitsAt returns every way to cut s into n pieces at occurrences of sep
// (which may overlap in s, as "-x-" does in "a-x-x-b").
func splitsAt(s, sep string, n int) [][]string {
	if n == 1 {
		return [][]string{{s}}
	}
	var out [][]string
	for i := 0; i+len(sep) <= len(s); i++ {
		if !strings.HasPrefix(s[i:], sep) {
			continue
		}
		for _, rest := range splitsAt(s[i+len(sep):], sep, n-1) {
			out = append(out, append([]string{s[:i]}, rest...))
		}
	}
	return out
}

// checkHostName fails t unless name is a host name Kubernetes accepts for
// the kind: at most 63 characters (vCluster's limit), a DNS-1123 subdomain,
// and a DNS-1123 label when label is true (the virtual name had no dot).
func checkHostName(t *testing.T, what, name string, label bool) {
	t.Helper()
	if len(name) > MaxNameLength {
		t.Errorf("%s = %q: %d characters, more than %d", what, name, len(name), MaxNameLength)
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		t.Errorf("%s = %q: not a DNS-1123 subdomain: %v", what, name, errs)
	}
	if errs := validation.IsDNS1123Label(name); label && len(errs) > 0 {
		t.Errorf("%s = %q: not a DNS-1123 label: %v", what, name, errs)
	}
}

// FuzzHostNames checks the host names of names.go and the isolation of
// tenants that share a host namespace or a host.
//
// The inputs are two identities (host namespace, virtual cluster, virtual
// namespace, object name) and a host node name; inputs Kubernetes would not
// accept (see identity.valid) are skipped. Properties:
//
//   - nothing panics, on any input (SafeConcatName gets the raw strings);
//   - every host name is at most 63 characters and a DNS-1123 subdomain,
//     and a DNS-1123 label when the virtual name is one. A virtual name with
//     dots keeps them on the host (kube-root-ca.crt-x-team-a-x-my-vc, as
//     vCluster names it), which the kinds whose names may have dots accept;
//     Services, whose names may not, never have one. The node Service and
//     the DNS Service names are always labels;
//   - no tenant can take over another tenant's object. vCluster's
//     NAME-x-NAMESPACE-x-VCLUSTER is ambiguous when names contain "-x-"
//     ("a-x-b" in namespace "c" and "a" in namespace "b-x-c" are both
//     a-x-b-x-c-x-VC), so besides the second fuzzed identity the target tries
//     every identity whose host name is the first one's (every way to re-cut
//     it at "-x-"), in the same and in the second host namespace, namespaced
//     and cluster-scoped. Whenever two different identities meet on one host
//     object, the ownership check of the second (engineOwns: IsManaged plus
//     the object-name/object-namespace annotations) refuses the host object
//     built for the first. Translator.IsManaged alone does not: for two
//     objects of one virtual cluster (a-x-b in c, a in b-x-c) it recomputes
//     the host name from the object's own annotations, which name the
//     first object, and accepts. Namespaced objects of different host
//     namespaces are different host objects (asserted, though trivially
//     true).
//
// Why: host names are what the syncer creates and deletes by; an invalid
// one makes a virtual object unsyncable, and a shared one lets a tenant
// overwrite or delete what another tenant, or another virtual object of
// the same tenant, owns.
func FuzzHostNames(f *testing.F) {
	f.Fuzz(func(t *testing.T, hostNS, vc, ns, name, hostNS2, vc2, ns2, name2, node string) {
		SafeConcatName(name, "x", ns, "x", vc) // no panic on anything
		a := identity{hostNS, vc, ns, name}
		if !a.valid(false) {
			return
		}
		tr := a.translator()
		label := !strings.Contains(name, ".")
		checkHostName(t, "HostName", tr.HostName(name, ns), label)
		checkHostName(t, "HostClusterScopedName", tr.HostClusterScopedName(name), label)
		checkHostName(t, "DNSServiceHostName", tr.DNSServiceHostName(), true)
		if len(validation.IsDNS1123Subdomain(node)) == 0 {
			checkHostName(t, "NodeServiceName", tr.NodeServiceName(node), true)
		}

		for _, clusterScoped := range []bool{false, true} {
			a := a
			if clusterScoped {
				a.namespace = ""
			}
			objA := a.hostObject(clusterScoped, map[string]string{"app": "a"})
			if !engineOwns(a, clusterScoped, objA) {
				t.Fatalf("%+v does not own its own host object %s", a, objA.Name)
			}
			for _, b := range others(a, clusterScoped, identity{hostNS2, vc2, ns2, name2}) {
				if b == a || !b.valid(clusterScoped) {
					continue
				}
				objB := b.hostObject(clusterScoped, nil)
				if !engineOwns(b, clusterScoped, objB) {
					t.Fatalf("%+v does not own its own host object %s", b, objB.Name)
				}
				if objA.Namespace != objB.Namespace || objA.Name != objB.Name {
					continue // different host objects
				}
				if !clusterScoped && a.hostNamespace != b.hostNamespace {
					t.Fatalf("%+v and %+v: namespaced host objects of different host namespaces collide", a, b)
				}
				if engineOwns(b, clusterScoped, objA) {
					t.Errorf("host object %q (cluster-scoped %v) made for %+v is owned by %+v too", objA.Name, clusterScoped, a, b)
				}
			}
		}
	})
}

// others lists the identities the takeover property checks against a: the
// fuzzed second identity, and every identity with a's host name, in a's
// host namespace and in the second one's.
func others(a identity, clusterScoped bool, second identity) []identity {
	if clusterScoped {
		second.namespace = ""
	}
	out := []identity{second}
	hostName := a.hostName(clusterScoped)
	if len(hostName) > MaxNameLength || strings.Count(hostName, "-x-") < 2 {
		return out
	}
	if clusterScoped {
		rest, ok := strings.CutPrefix(hostName, "vcluster-")
		if !ok {
			return out
		}
		// vcluster-NAME-x-HOSTNAMESPACE-x-VCLUSTER
		for _, p := range splitsAt(rest, "-x-", 3) {
			out = append(out, identity{hostNamespace: p[1], vcluster: p[2], name: p[0]})
		}
		return out
	}
	// NAME-x-NAMESPACE-x-VCLUSTER
	for _, p := range splitsAt(hostName, "-x-", 3) {
		for _, h := range []string{a.hostNamespace, second.hostNamespace} {
			out = append(out, identity{hostNamespace: h, vcluster: p[2], namespace: p[1], name: p[0]})
		}
	}
	return out
}

// tooLongToEscape tells whether escaping key (see escapedKey) would make
// its prefix longer than a label key's 253 characters.
func tooLongToEscape(key string) bool {
	prefix, _, _ := strings.Cut(key, "/")
	return escapedKey(key) && len(prefix)+len(escapedKeyPrefix) > maxLabelPrefixLength
}

// reservedHostKeys are the host label keys whose value the syncer sets or
// vCluster tools trust: a tenant must never choose their value.
var reservedHostKeys = []string{LabelManagedBy, LabelNamespace, "release", LabelControlledBy}

// FuzzLabels checks the label translation of labels.go with up to three
// fuzzed virtual labels, a virtual cluster and a virtual namespace.
// Properties:
//
//   - nothing panics, on any input;
//   - for a valid virtual key (validation.IsQualifiedName), the host key is
//     valid too, and VirtualLabelKey gives the virtual key back;
//   - different virtual keys get different host keys, and HostLabels keeps
//     every value unchanged;
//   - VirtualLabels(HostLabels(x, ns)) == x for every valid x, but for
//     the keys whose escaped form would be too long (tooLongToEscape):
//     those are hashed and not read back (no injection of the valid keys
//     into the valid keys outside the syncer's own can exist);
//   - no tenant label becomes managed-by, namespace, release or
//     controlled-by on the host (marker spoofing): managed-by and namespace
//     are always the syncer's values, release and controlled-by never
//     appear; nor does it become a namespace label
//     (vcluster.loft.sh/ns-label-…), which host network policies translated
//     from namespaceSelectors select by;
//   - HostSelector is HostLabels, or nil for no selector.
//
// Why: a tenant chooses its labels freely. A host key the API server
// refuses makes the object unsyncable; a lost or merged key loses the
// tenant's label; a forged marker claims another tenant's object or
// namespace.
func FuzzLabels(f *testing.F) {
	f.Fuzz(func(t *testing.T, vc, ns, k1, v1, k2, v2, k3, v3 string) {
		tr := Translator{VCluster: vc, HostNamespace: "vc-" + vc}
		for _, k := range []string{k1, k2, k3} { // no panic on anything
			tr.VirtualLabelKey(tr.HostLabelKey(k))
			tr.NamespaceLabelKey(k)
		}
		if len(validation.IsDNS1123Label(vc)) > 0 || (ns != "" && len(validation.IsDNS1123Label(ns)) > 0) {
			return
		}
		virtual := map[string]string{}
		for _, kv := range [][2]string{{k1, v1}, {k2, v2}, {k3, v3}} {
			if len(validation.IsQualifiedName(kv[0])) == 0 && len(validation.IsValidLabelValue(kv[1])) == 0 {
				virtual[kv[0]] = kv[1]
			}
		}

		hostKeys := map[string]string{}
		readBack := maps.Clone(virtual)
		for k := range virtual {
			hk := tr.HostLabelKey(k)
			if errs := validation.IsQualifiedName(hk); len(errs) > 0 {
				t.Errorf("HostLabelKey(%q) = %q: not a valid label key: %v", k, hk, errs)
			}
			back, ok := tr.VirtualLabelKey(hk)
			switch {
			case !ok && tooLongToEscape(k) && strings.HasPrefix(hk, LabelPrefixRewritten):
				delete(readBack, k) // hashed instead, not read back
			case !ok || back != k:
				t.Errorf("VirtualLabelKey(HostLabelKey(%q) = %q) = %q, %v", k, hk, back, ok)
			}
			if other, dup := hostKeys[hk]; dup {
				t.Errorf("virtual keys %q and %q both become host key %q", other, k, hk)
			}
			hostKeys[hk] = k
			for _, r := range reservedHostKeys {
				if hk == r {
					t.Errorf("virtual key %q becomes the reserved host key %q", k, r)
				}
			}
			if strings.HasPrefix(hk, LabelPrefixNamespace) {
				t.Errorf("virtual key %q becomes the namespace label key %q", k, hk)
			}
			if nk := tr.NamespaceLabelKey(k); len(validation.IsQualifiedName(nk)) > 0 {
				t.Errorf("NamespaceLabelKey(%q) = %q: not a valid label key", k, nk)
			}
		}

		host := tr.HostLabels(virtual, ns)
		for hk, k := range hostKeys {
			if host[hk] != virtual[k] {
				t.Errorf("HostLabels: %q=%q became %q=%q", k, virtual[k], hk, host[hk])
			}
		}
		if host[LabelManagedBy] != vc {
			t.Errorf("HostLabels(%v): managed-by = %q, want %q", virtual, host[LabelManagedBy], vc)
		}
		if got, ok := host[LabelNamespace]; ns != "" && got != ns || ns == "" && ok {
			t.Errorf("HostLabels(%v, %q): namespace label = %q, %v", virtual, ns, got, ok)
		}
		for _, k := range []string{"release", LabelControlledBy} {
			if v, ok := host[k]; ok {
				t.Errorf("HostLabels(%v): host label %s=%q", virtual, k, v)
			}
		}
		if back := tr.VirtualLabels(host); !maps.Equal(back, readBack) {
			t.Errorf("VirtualLabels(HostLabels(%q)) = %q", virtual, back)
		}
		sel := tr.HostSelector(virtual, ns)
		if len(virtual) == 0 && sel != nil || len(virtual) > 0 && !maps.Equal(sel, host) {
			t.Errorf("HostSelector(%v) = %v, want %v", virtual, sel, host)
		}
	})
}
