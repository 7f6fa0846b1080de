package akstest

import (
	"encoding/json"
	"reflect"
)

// obj is a decoded JSON object: the emulator stores resources as the JSON
// trees clients sent, merged with what it computes.
type obj = map[string]any

// replaceWhole reports the members whose value a PUT replaces instead of
// merging into: maps of user data (tags, node labels, add-on config,
// user-assigned identities), where an absent key means "remove it".
func replaceWhole(key string) bool {
	switch key {
	case "tags", "nodeLabels", "config", "userAssignedIdentities":
		return true
	}
	return false
}

// mergeInto merges src into dst in place, as an AKS update PUT is applied
// here: members of src replace those of dst, objects merge member by
// member (except replaceWhole ones), arrays and scalars replace, and an
// explicit null removes the member.
func mergeInto(dst, src obj) {
	for k, v := range src {
		if v == nil {
			delete(dst, k)
			continue
		}
		sv, sIsObj := v.(obj)
		dv, dIsObj := dst[k].(obj)
		if sIsObj && dIsObj && !replaceWhole(k) {
			mergeInto(dv, sv)
			continue
		}
		dst[k] = deepCopy(v)
	}
}

func deepCopy(v any) any {
	switch t := v.(type) {
	case obj:
		out := make(obj, len(t))
		for k, e := range t {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = deepCopy(e)
		}
		return out
	default:
		return v
	}
}

func copyObj(m obj) obj {
	if m == nil {
		return obj{}
	}
	return deepCopy(m).(obj)
}

// child returns m[key] as an object, nil if absent or not an object.
func child(m obj, key string) obj {
	if m == nil {
		return nil
	}
	c, _ := m[key].(obj)
	return c
}

// ensure returns m[key] as an object, creating it when absent.
func ensure(m obj, key string) obj {
	if c, ok := m[key].(obj); ok {
		return c
	}
	c := obj{}
	m[key] = c
	return c
}

func str(m obj, key string) string {
	if m == nil {
		return ""
	}
	s, _ := m[key].(string)
	return s
}

func boolOf(m obj, key string) bool {
	if m == nil {
		return false
	}
	b, _ := m[key].(bool)
	return b
}

// num returns m[key] as an integer; ok is false if absent or not a number.
func num(m obj, key string) (int64, bool) {
	if m == nil {
		return 0, false
	}
	switch n := m[key].(type) {
	case float64:
		return int64(n), true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case int64:
		return n, true
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}

// has reports whether m has a non-null key.
func has(m obj, key string) bool {
	if m == nil {
		return false
	}
	v, ok := m[key]
	return ok && v != nil
}

func setDefault(m obj, key string, v any) {
	if !has(m, key) {
		m[key] = v
	}
}

// strings returns m[key] as a list of strings (non-strings skipped).
func strList(m obj, key string) []string {
	if m == nil {
		return nil
	}
	l, _ := m[key].([]any)
	var out []string
	for _, e := range l {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func strMap(m obj, key string) map[string]string {
	c := child(m, key)
	if c == nil {
		return nil
	}
	out := make(map[string]string, len(c))
	for k, v := range c {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

func tagsObj(m map[string]string) obj {
	out := make(obj, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func anyList[T any](l []T) []any {
	out := make([]any, len(l))
	for i, e := range l {
		out[i] = e
	}
	return out
}

// sameJSON reports whether a and b are equal as JSON values.
func sameJSON(a, b any) bool {
	return reflect.DeepEqual(normalize(a), normalize(b))
}

// normalize converts Go numbers to float64, as decoded JSON has them.
func normalize(v any) any {
	switch t := v.(type) {
	case obj:
		out := make(obj, len(t))
		for k, e := range t {
			out[k] = normalize(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = normalize(e)
		}
		return out
	case int:
		return float64(t)
	case int32:
		return float64(t)
	case int64:
		return float64(t)
	default:
		return v
	}
}
