package patches

import (
	"fmt"
	"strconv"
	"strings"
)

// Path is a parsed patch path: the field a patch targets, as vCluster's
// sync patches write it (https://www.vcluster.com/docs/vcluster/configure/vcluster-yaml/sync/to-host/advanced/patches:
// "path is the path within the object to target"):
//
//	metadata.annotations["example.com/owner"]   a map key with dots or slashes
//	spec.containers[*].image                    every item of a list
//	spec.containers[0].image                    one item
//	spec.template.metadata.labels.app           plain dotted fields
//
// Keys in brackets are quoted with " or '. A path never creates fields:
// where it is not found, the patch does nothing.
type Path []step

// step is one segment of a Path: a map key, a list index, or every item.
type step struct {
	key   string
	index int // list index when isIndex
	// isIndex: [N]; all: [*]; else a map key.
	isIndex, all bool
}

// String writes the path back in its canonical form, which ParsePath reads
// as the same path: a key that is not plain goes in double quotes, in
// single quotes when it has a double quote (quoted keys have no escapes).
func (p Path) String() string {
	var b strings.Builder
	for i, s := range p {
		switch {
		case s.all:
			b.WriteString("[*]")
		case s.isIndex:
			fmt.Fprintf(&b, "[%d]", s.index)
		case isPlainKey(s.key):
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.key)
		case !strings.Contains(s.key, `"`):
			b.WriteString(`["` + s.key + `"]`)
		case !strings.Contains(s.key, "'"):
			b.WriteString(`['` + s.key + `']`)
		case s.key != "" && !strings.ContainsAny(s.key, ".["):
			// Both quotes: only a dotted field can hold it.
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.key)
		default:
			// No path holds it (a key of an object, not of a parsed path):
			// Go-quoted, for messages.
			b.WriteString("[" + strconv.Quote(s.key) + "]")
		}
	}
	return b.String()
}

func isPlainKey(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// ParsePath parses s. It returns an error naming the offset of the first
// character it cannot read: an empty segment ("a..b"), an unterminated
// bracket or quote, a negative or non-numeric index.
func ParsePath(s string) (Path, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("path is empty")
	}
	var p Path
	i := 0
	expectKey := true // at the start or after a '.'
	for i < len(s) {
		switch c := s[i]; {
		case c == '[':
			end, st, err := parseBracket(s, i)
			if err != nil {
				return nil, err
			}
			p = append(p, st)
			i = end
			expectKey = false
		case c == '.':
			if expectKey {
				return nil, fmt.Errorf("path %q: empty field name at offset %d", s, i)
			}
			i++
			expectKey = true
			if i == len(s) {
				return nil, fmt.Errorf("path %q: ends with '.'", s)
			}
		default:
			if !expectKey {
				return nil, fmt.Errorf("path %q: expected '.' or '[' at offset %d", s, i)
			}
			j := i
			for j < len(s) && s[j] != '.' && s[j] != '[' {
				j++
			}
			p = append(p, step{key: s[i:j]})
			i = j
			expectKey = false
		}
	}
	return p, nil
}

// parseBracket reads the bracket segment starting at s[i] == '['.
func parseBracket(s string, i int) (end int, st step, err error) {
	rest := s[i+1:]
	if rest == "" {
		return 0, st, fmt.Errorf("path %q: unterminated '[' at offset %d", s, i)
	}
	if q := rest[0]; q == '"' || q == '\'' {
		j := strings.IndexByte(rest[1:], q)
		if j < 0 || len(rest) < j+3 || rest[j+2] != ']' {
			return 0, st, fmt.Errorf("path %q: unterminated quoted key at offset %d", s, i)
		}
		return i + j + 4, step{key: rest[1 : j+1]}, nil
	}
	j := strings.IndexByte(rest, ']')
	if j < 0 {
		return 0, st, fmt.Errorf("path %q: unterminated '[' at offset %d", s, i)
	}
	inner := rest[:j]
	if inner == "*" {
		return i + j + 2, step{all: true}, nil
	}
	n, err := strconv.Atoi(inner)
	if err != nil || n < 0 {
		return 0, st, fmt.Errorf("path %q: [%s] at offset %d is not a list index, [*] or a quoted key", s, inner, i)
	}
	return i + j + 2, step{isIndex: true, index: n}, nil
}

// Location is one concrete place a Path matched: map keys (string) and
// list indexes (int), from the object's root.
type Location []any

// String writes the location as a path with concrete indexes.
func (l Location) String() string {
	p := make(Path, len(l))
	for i, s := range l {
		if n, ok := s.(int); ok {
			p[i] = step{isIndex: true, index: n}
		} else {
			p[i] = step{key: s.(string)}
		}
	}
	return p.String()
}

// Match lists the locations of obj (a JSON object as decoded by
// encoding/json or k8s.io/apimachinery's unstructured) that p names, in
// document order; none when the path is not found.
func (p Path) Match(obj map[string]any) []Location {
	var out []Location
	var walk func(v any, i int, loc Location)
	walk = func(v any, i int, loc Location) {
		if i == len(p) {
			out = append(out, append(Location(nil), loc...))
			return
		}
		st := p[i]
		switch {
		case st.all:
			list, ok := v.([]any)
			if !ok {
				return
			}
			for n, item := range list {
				walk(item, i+1, append(loc, n))
			}
		case st.isIndex:
			list, ok := v.([]any)
			if !ok || st.index >= len(list) {
				return
			}
			walk(list[st.index], i+1, append(loc, st.index))
		default:
			m, ok := v.(map[string]any)
			if !ok {
				return
			}
			child, ok := m[st.key]
			if !ok {
				return
			}
			walk(child, i+1, append(loc, st.key))
		}
	}
	walk(obj, 0, nil)
	return out
}

// Get returns the value at loc in obj, and whether it exists.
func (l Location) Get(obj map[string]any) (any, bool) {
	var v any = obj
	for _, s := range l {
		switch s := s.(type) {
		case int:
			list, ok := v.([]any)
			if !ok || s >= len(list) {
				return nil, false
			}
			v = list[s]
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil, false
			}
			if v, ok = m[s]; !ok {
				return nil, false
			}
		}
	}
	return v, true
}

// Set replaces the value at loc, which must exist (a location from Match);
// remove deletes a map key instead (a list item becomes null, so that the
// other locations of the same Match stay valid). It reports whether it
// found loc.
func (l Location) Set(obj map[string]any, value any, remove bool) bool {
	if remove {
		value = nil
	}
	return l.write(obj, value, remove, false)
}

// Put sets the value at loc, creating the last map key when its parent
// exists (a list index must exist). It reports whether it could.
func (l Location) Put(obj map[string]any, value any) bool {
	return l.write(obj, value, false, true)
}

// write is Set (create false) and Put (create true, remove false).
func (l Location) write(obj map[string]any, value any, remove, create bool) bool {
	if len(l) == 0 {
		return false
	}
	parent, ok := l[:len(l)-1].Get(obj)
	if !ok {
		return false
	}
	switch last := l[len(l)-1].(type) {
	case int:
		list, ok := parent.([]any)
		if !ok || last >= len(list) {
			return false
		}
		list[last] = value
	case string:
		m, ok := parent.(map[string]any)
		if !ok {
			return false
		}
		if _, exists := m[last]; !exists && !create {
			return false
		}
		if remove {
			delete(m, last)
		} else {
			m[last] = value
		}
	}
	return true
}

// Relative reads the value at the relative path rel (ParsePath syntax)
// below v; "" is v itself. The second result is false when rel is not
// found or does not parse.
func Relative(v any, rel string) (any, bool) {
	if rel == "" {
		return v, true
	}
	p, err := ParsePath(rel)
	if err != nil {
		return nil, false
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	locs := p.Match(m)
	if len(locs) != 1 {
		return nil, false
	}
	return locs[0].Get(m)
}
