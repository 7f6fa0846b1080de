package config

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// vclusterKeysJSON is vcluster-keys.json: every key of every vCluster
// release from v0.20.0 on, from chart/values.schema.json and
// chart/values.yaml of https://github.com/loft-sh/vcluster at each release
// tag, written by `go run ./hack/vclusterkeys` (see there to refresh it).
//
//go:embed vcluster-keys.json
var vclusterKeysJSON string

// vclusterKeys is the parsed vcluster-keys.json, read once.
var vclusterKeys = sync.OnceValue(func() *VClusterKeys {
	k, err := parseVClusterKeys(vclusterKeysJSON)
	if err != nil {
		panic(fmt.Sprintf("config: vcluster-keys.json: %v", err))
	}
	return k
})

// VCluster returns what vCluster's releases say of their configuration
// keys (vcluster-keys.json, read once; the same value each call, not to
// be changed).
func VCluster() *VClusterKeys { return vclusterKeys() }

// Values returns the values.yaml of vCluster release (a tag of Releases,
// e.g. "v0.36.1") as vcluster-keys.json holds it: every default that
// release gives, as a YAML document decodes (map[string]any, []any,
// string, json.Number, bool, nil), the caller's to change. It is empty
// for a release not in Releases.
func (k *VClusterKeys) Values(release string) map[string]any {
	doc := map[string]any{}
	if !slices.Contains(k.Releases, release) {
		return doc
	}
	for _, d := range k.defaultsIn {
		if !has(k.Releases, d.in, release) {
			continue
		}
		// A copy (SetNestedField's): what Values returns can be changed
		// without changing the defaults. The defaults of one release never
		// put a value where another has keys, so no error can come.
		_ = unstructured.SetNestedField(doc, d.value, d.path...)
	}
	return doc
}

// VClusterKeys is what vCluster's releases say of their configuration
// keys: which keys exist, in which releases, with which types and
// defaults. Parse accepts every key it holds.
type VClusterKeys struct {
	// Releases are the release tags, oldest first, e.g. "v0.20.0", …,
	// "v0.37.0-rc.1".
	Releases []string
	// Keys are the leaf keys, sorted by path.
	Keys []VClusterKey
	root *keyNode
	// defaults maps a concrete path (its keys joined by sep) to the
	// defaults the releases' values.yaml give it.
	defaults map[string][]any
	// defaultsIn are the same defaults with the releases that give them.
	defaultsIn []vclusterDefault
	// ownDefaults is OwnDefaults.
	ownDefaults map[string][]string
}

// vclusterDefault is a default of vCluster's values.yaml.
type vclusterDefault struct {
	path  []string // the keys of a concrete path
	value any      // as parseTree gives it
	in    []string // as VClusterKey.In
}

// has tells whether release is in the runs of in (first and last tag of
// each run, as VClusterKey.In), by its place in releases.
func has(releases, in []string, release string) bool {
	i := slices.Index(releases, release)
	for j := 0; j+1 < len(in); j += 2 {
		if slices.Index(releases, in[j]) <= i && i <= slices.Index(releases, in[j+1]) {
			return true
		}
	}
	return false
}

// VClusterKey is one leaf key of vCluster's configuration.
type VClusterKey struct {
	// Path is the dotted path, "*" standing for any entry of a map, e.g.
	// "controlPlane.statefulSet.env" or "controlPlane.ingress.annotations.*".
	Path string
	// Types are the JSON Schema types its value may take ("string",
	// "boolean", "integer", "number", "array", "object"); empty for any.
	Types []string
	// In are the releases that have the key, as first and last tag of
	// each run of consecutive releases.
	In []string
}

// keyNode is one element of a path in the tree of vCluster's keys.
type keyNode struct {
	children map[string]*keyNode // "*": any entry of a map
	leaf     *VClusterKey        // set when a key ends here
}

// child returns the node of key below n: the key itself, else the entries
// of a map; nil when vCluster has no such key.
func (n *keyNode) child(key string) *keyNode {
	if n == nil {
		return nil
	}
	if c, ok := n.children[key]; ok {
		return c
	}
	return n.children["*"]
}

// names returns the keys below n that are not "*", sorted.
func (n *keyNode) names() []string {
	if n == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(n.children))
}

func parseVClusterKeys(data string) (*VClusterKeys, error) {
	var file struct {
		Releases []string `json:"releases"`
		Keys     []struct {
			Path  string   `json:"path"`
			Types []string `json:"types"`
			In    []string `json:"in"`
		} `json:"keys"`
		Defaults []struct {
			Path  []string        `json:"path"`
			Value json.RawMessage `json:"value"`
			In    []string        `json:"in"`
		} `json:"defaults"`
	}
	if err := json.Unmarshal([]byte(data), &file); err != nil {
		return nil, err
	}
	k := &VClusterKeys{Releases: file.Releases, root: &keyNode{}, defaults: map[string][]any{}}
	for _, fk := range file.Keys {
		k.Keys = append(k.Keys, VClusterKey{Path: fk.Path, Types: fk.Types, In: fk.In})
	}
	for i := range k.Keys {
		n := k.root
		for seg := range strings.SplitSeq(k.Keys[i].Path, ".") {
			if n.children == nil {
				n.children = map[string]*keyNode{}
			}
			c, ok := n.children[seg]
			if !ok {
				c = &keyNode{}
				n.children[seg] = c
			}
			n = c
		}
		n.leaf = &k.Keys[i]
	}
	for _, d := range file.Defaults {
		// JSON already: decoded as parseTree decodes (numbers as
		// json.Number), without its YAML step.
		var v any
		dec := json.NewDecoder(bytes.NewReader(d.Value))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("default of %s: %w", d.Path, err)
		}
		p := strings.Join(d.Path, sep)
		k.defaults[p] = append(k.defaults[p], v)
		k.defaultsIn = append(k.defaultsIn, vclusterDefault{path: d.Path, value: v, in: d.In})
	}
	k.ownDefaults = k.OwnDefaults()
	return k, nil
}

// sep joins the keys of a concrete path in VClusterKeys.defaults.
const sep = "\x00"

// isDefault tells whether v, at the concrete path of keys segs, is the
// default some vCluster release gives that key, or, for a key no
// values.yaml sets, the zero value of its type (false, "", 0, an empty
// list or map); an object is a default when each of its entries is.
func (k *VClusterKeys) isDefault(segs []string, v any) bool {
	defaults, ok := k.defaults[strings.Join(segs, sep)]
	if obj, isObject := v.(map[string]any); !ok && isObject {
		// An object whose defaults lie deeper (resources.requests.cpu).
		for key, x := range obj {
			if !k.isDefault(with(segs, key), x) {
				return false
			}
		}
		return true
	}
	if !ok {
		return isZero(v)
	}
	for _, d := range defaults {
		if reflect.DeepEqual(normalize(d), normalize(v)) {
			return true
		}
	}
	return false
}

// isZero tells whether v is null, false, "", 0, an empty list or an empty
// map (or a map of zero values).
func isZero(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case bool:
		return !v
	case string:
		return v == ""
	case json.Number:
		f, err := v.Float64()
		return err == nil && f == 0
	case []any:
		return len(v) == 0
	case map[string]any:
		for _, x := range v {
			if !isZero(x) {
				return false
			}
		}
		return true
	}
	return false
}

// normalize makes numbers comparable whatever their notation (1, 1.0).
func normalize(v any) any {
	switch v := v.(type) {
	case json.Number:
		if f, err := v.Float64(); err == nil {
			return f
		}
		return v.String()
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = normalize(x)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = normalize(x)
		}
		return out
	}
	return v
}

// jsonType names the JSON type of a generic value as JSON Schema does.
func jsonType(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if _, whole, _ := wholeNumber(v); whole {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// typeFits tells whether a value of JSON type got fits a key of types
// (empty: any); an integer is a number, and null (unset) fits anything.
func typeFits(types []string, got string) bool {
	return len(types) == 0 || got == "null" || slices.Contains(types, got) || (got == "integer" && slices.Contains(types, "number"))
}

// vclusterValue checks v, found at path, against vCluster's keys below n:
// an object's keys must be keys of n (or entries of a map), a leaf's value
// of one of its types. Every leaf set to a value that no release gives it
// by default is noted (Config.noted) under notePath: path, or the path of
// the map whose entry it is.
func (d *decoder) vclusterValue(path string, segs []string, notePath string, v any, n *keyNode) {
	obj, isObject := v.(map[string]any)
	if n.leaf != nil && (len(n.children) == 0 || !isObject) {
		if got := jsonType(v); !typeFits(n.leaf.Types, got) {
			d.fail(path, "expected %s, got %s", strings.Join(n.leaf.Types, " or "), describeValue(v))
			return
		}
		d.note(segs, notePath, v)
		return
	}
	if !isObject {
		if v != nil {
			d.fail(path, "expected an object, got %s", describeValue(v))
		}
		return
	}
	for _, key := range slices.Sorted(maps.Keys(obj)) {
		p := keyPath(path, key)
		_, named := n.children[key]
		np := notePath
		if named && notePath == path {
			np = p
		}
		switch c := n.child(key); {
		case c != nil:
			d.vclusterValue(p, with(segs, key), np, obj[key], c)
		case n.leaf != nil: // also a free-form object
			d.note(with(segs, key), notePath, obj[key])
		default:
			d.unknownKey(path, key, n.names())
		}
	}
}

// note records notePath as a key without effect (Config.noted) unless v,
// the value at the path of keys segs, is a default of vCluster's or what
// clustersync does anyway (asClustersyncDoes).
func (d *decoder) note(segs []string, notePath string, v any) {
	if d.keys.isDefault(segs, v) {
		return
	}
	if same, ok := asClustersyncDoes()[strings.Join(segs, ".")]; ok && reflect.DeepEqual(normalize(same), normalize(v)) {
		return
	}
	d.noted = append(d.noted, notePath)
}

// unknownKey reports key, inside the object at path, as a key neither
// clustersync nor any vCluster release has, with the known key nearest
// to it when one is near (a typo) and the known keys, clustersync's and
// every vCluster release's.
func (d *decoder) unknownKey(path, key string, known []string) {
	known = slices.DeleteFunc(slices.Compact(slices.Sorted(slices.Values(known))), func(k string) bool { return k == "*" })
	if len(known) == 0 {
		d.fail(keyPath(path, key), "unknown key (no keys are allowed here)")
		return
	}
	msg := "unknown key"
	if near := nearest(key, known); near != "" {
		msg += fmt.Sprintf("; did you mean %s?", near)
	}
	d.fail(keyPath(path, key), "%s (known: %s)", msg, strings.Join(known, ", "))
}

// nearest returns the name of names nearest to key — the same but for
// case, or at most a third of its letters (and at least 2) apart —, or ""
// when none is that near.
func nearest(key string, names []string) string {
	best, bestDist := "", max(2, len(key)/3)+1
	for _, n := range names {
		if strings.EqualFold(n, key) {
			return n
		}
		if dist := editDistance(strings.ToLower(key), strings.ToLower(n)); dist < bestDist {
			best, bestDist = n, dist
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// dottedPath turns a decoder path (map entries as [name]) into a dotted
// path: a.b[c].d → a.b.c.d.
func dottedPath(path string) string {
	return strings.NewReplacer("[", ".", "]", "").Replace(path)
}

// with returns segs and key, in a new slice.
func with(segs []string, key string) []string {
	return append(slices.Clip(segs), key)
}

// KeyStatus is what clustersync does with one vCluster key.
type KeyStatus struct {
	// Path is the key's path, as VClusterKey.Path.
	Path string
	// Reason is "" when the key takes effect in clustersync, else why it
	// has none (one of the Reason constants of noeffect.go).
	Reason string
}

// Statuses returns what clustersync does with every key of vCluster
// release (a tag of Releases), sorted by path: a key that reaches a field
// of clustersync's configuration types takes effect; any other (a vCluster
// section kept as written, a key the types lack) is accepted and has
// none, for the reason NoEffect would give. It returns nil for a release
// not in Releases.
func (k *VClusterKeys) Statuses(release string) []KeyStatus {
	if !slices.Contains(k.Releases, release) {
		return nil
	}
	reasons := noEffectReasons()
	var out []KeyStatus
	for _, key := range k.Keys {
		if !has(k.Releases, key.In, release) {
			continue
		}
		s := KeyStatus{Path: key.Path}
		if !typed(reflect.TypeFor[Config](), strings.Split(key.Path, ".")) {
			s.Reason = reasonFor(key.Path, reasons)
		}
		out = append(out, s)
	}
	return out
}

// typed tells whether the path of keys segs ("*" for a map entry) leads
// through the configuration type t to a field of clustersync's own, not a
// vCluster section kept as written.
func typed(t reflect.Type, segs []string) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case len(segs) == 0:
		return t.Kind() != reflect.Interface
	case t.Kind() == reflect.Map:
		return typed(t.Elem(), segs[1:])
	case t.Kind() != reflect.Struct:
		return false
	}
	index, ok := jsonFields(t)[segs[0]]
	if !ok || t.Field(index).Tag.Get("config") == "vcluster" {
		return false
	}
	return typed(t.Field(index).Type, segs[1:])
}
