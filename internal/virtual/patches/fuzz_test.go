package patches

import (
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzPath checks patch paths (path.go) with a fuzzed path, a fuzzed JSON
// object and a fuzzed JSON value. Properties:
//
//   - ParsePath, Match, Get, Set, Put and Relative never panic, on any
//     path and any object (a path comes from the user's configuration, an
//     object from a tenant);
//   - a parsed path printed with String parses back to the same path, and
//     String is then stable (error messages and the canonical form name the
//     path the user wrote);
//   - every Location that Match returns exists (Get finds it), prints as a
//     path that matches exactly that location, and can be Set: afterwards
//     Get reads the new value; Set with remove deletes a map key (a list
//     item becomes null);
//   - Put below a matched location succeeds exactly when the value there is
//     an object, and creates the key.
//
// Why: a patch that panics stops the syncer for every object of its kind;
// a path that prints differently from what it matches makes errors point
// at the wrong field.
func FuzzPath(f *testing.F) {
	f.Fuzz(func(t *testing.T, path, objJSON, valueJSON string) {
		var obj map[string]any
		if json.Unmarshal([]byte(objJSON), &obj) != nil || obj == nil {
			obj = map[string]any{}
		}
		var value any
		if json.Unmarshal([]byte(valueJSON), &value) != nil {
			value = valueJSON
		}
		Relative(obj, path)
		Relative(value, path)

		p, err := ParsePath(path)
		if err != nil {
			return
		}
		s := p.String()
		back, err := ParsePath(s)
		if err != nil {
			t.Fatalf("ParsePath(%q).String() = %q does not parse: %v", path, s, err)
		}
		if !reflect.DeepEqual(back, p) {
			t.Fatalf("ParsePath(%q) = %#v, but its String %q parses to %#v", path, p, s, back)
		}
		if s2 := back.String(); s2 != s {
			t.Fatalf("String is not stable: %q, then %q", s, s2)
		}

		locs := p.Match(obj)
		for _, l := range locs {
			if _, ok := l.Get(obj); !ok {
				t.Fatalf("Match(%q) gave %v, which Get does not find", path, l)
			}
			lp, err := ParsePath(l.String())
			if err != nil {
				t.Fatalf("location %v prints as %q, which does not parse: %v", l, l.String(), err)
			}
			if got := lp.Match(obj); len(got) != 1 || !reflect.DeepEqual(got[0], l) {
				t.Fatalf("location %v prints as %q, which matches %v", l, l.String(), got)
			}
		}
		for _, l := range locs {
			if !l.Set(obj, value, false) {
				t.Fatalf("Set(%v) of a location from Match failed", l)
			}
			if got, ok := l.Get(obj); !ok || !reflect.DeepEqual(got, value) {
				t.Fatalf("after Set(%v, %v), Get = %v, %v", l, value, got, ok)
			}
			below := append(Location{}, l...)
			below = append(below, "fuzz-new-key")
			_, isObject := value.(map[string]any)
			if ok := below.Put(obj, "x"); ok != isObject {
				t.Fatalf("Put(%v) = %v, but the value there is %T", below, ok, value)
			}
			if isObject {
				if got, ok := below.Get(obj); !ok || got != "x" {
					t.Fatalf("after Put(%v), Get = %v, %v", below, got, ok)
				}
				value = map[string]any{} // a fresh object for the next location
			}
		}
		for _, l := range locs {
			if !l.Set(obj, nil, true) {
				t.Fatalf("Set(%v, remove) of a location from Match failed", l)
			}
			got, ok := l.Get(obj)
			if _, isIndex := l[len(l)-1].(int); isIndex && (!ok || got != nil) || !isIndex && ok {
				t.Fatalf("after Set(%v, remove), Get = %v, %v", l, got, ok)
			}
		}
	})
}
