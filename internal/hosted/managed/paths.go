package managed

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// A path names one managed value of a spec, as Change and Conflict do: a
// field ("tags"), an element of a keyed list ("nodeGroups[ng-1]") or a
// field of one ("nodeGroups[ng-1].desiredSize"). Fields are named by their
// JSON names.

// parsePath splits a path into the field name, the element key (isElem
// when the path names an element) and the element's field (rest, "" for
// the whole element).
func parsePath(path string) (name, elem string, isElem bool, rest string, err error) {
	open := strings.IndexByte(path, '[')
	if open < 0 {
		if path == "" || strings.Contains(path, ".") {
			return "", "", false, "", fmt.Errorf("managed: bad path %q", path)
		}
		return path, "", false, "", nil
	}
	closing := strings.IndexByte(path[open:], ']')
	if closing < 0 {
		return "", "", false, "", fmt.Errorf("managed: bad path %q: no ]", path)
	}
	name, elem = path[:open], path[open+1:open+closing]
	switch after := path[open+closing+1:]; {
	case after == "":
	case strings.HasPrefix(after, ".") && len(after) > 1:
		rest = after[1:]
	default:
		return "", "", false, "", fmt.Errorf("managed: bad path %q", path)
	}
	return name, elem, true, rest, nil
}

// locate resolves path in the struct value v: the field's index, and for
// element paths the keyed list's key field and the element's field index
// (-1 for the whole element). Errors name a path that names no field.
func locate(t reflect.Type, path string, o Options) (i int, key string, j int, name, elem string, isElem bool, err error) {
	name, elem, isElem, rest, err := parsePath(path)
	if err != nil {
		return 0, "", 0, "", "", false, err
	}
	if i = fieldIndex(t, name); i < 0 {
		return 0, "", 0, "", "", false, fmt.Errorf("managed: no field %q in %s (path %q)", name, t, path)
	}
	j = -1
	if !isElem {
		return i, "", j, name, "", false, nil
	}
	key, ok := o.KeyedLists[name]
	if !ok {
		return 0, "", 0, "", "", false, fmt.Errorf("managed: %q is not a keyed list (path %q)", name, path)
	}
	if rest != "" {
		et := t.Field(i).Type.Elem().Elem()
		if j = fieldIndex(et, rest); j < 0 {
			return 0, "", 0, "", "", false, fmt.Errorf("managed: no field %q in %s (path %q)", rest, et, path)
		}
	}
	return i, key, j, name, elem, true, nil
}

// lookup returns the value at path of v: the field (a pointer for a
// nillable field), the element, or the element's field; the zero Value
// when the element does not exist.
func lookup(v reflect.Value, path string, o Options) (reflect.Value, error) {
	i, key, j, _, elem, isElem, err := locate(v.Type(), path, o)
	if err != nil {
		return reflect.Value{}, err
	}
	f := v.Field(i)
	if !isElem {
		return f, nil
	}
	m, _ := byKey(f, key)
	e, ok := m[elem]
	switch {
	case !ok:
		return reflect.Value{}, nil
	case j < 0:
		return e, nil
	}
	return e.Field(j), nil
}

// Value returns the JSON of the value at path of spec, "null" when it is
// unset or names an element that does not exist. Maps are rendered with
// sorted keys, so equal values give equal bytes. Errors name a path that
// names no field of T.
func Value[T any](spec T, path string, o Options) ([]byte, error) {
	v, err := lookup(reflect.ValueOf(spec), path, o)
	if err != nil {
		return nil, err
	}
	return json.Marshal(iface(v))
}

// SetValue sets the value at path of spec from raw, JSON as Value renders
// it: "null" unsets a field or removes an element; an element field set on
// an element spec lacks adds the element with only its key and that field.
// Errors name the path: one that names no field, or a value that does not
// decode into the field's type.
func SetValue[T any](spec *T, path string, raw []byte, o Options) error {
	src := Copy(*spec)
	sv := reflect.ValueOf(&src).Elem()
	i, key, j, _, elem, isElem, err := locate(sv.Type(), path, o)
	if err != nil {
		return err
	}
	f := sv.Field(i)
	decode := func(t reflect.Type) (reflect.Value, error) {
		p := reflect.New(t)
		if err := json.Unmarshal(raw, p.Interface()); err != nil {
			return reflect.Value{}, fmt.Errorf("managed: value of %s: %w", path, err)
		}
		return p.Elem(), nil
	}
	if !isElem {
		v, err := decode(f.Type())
		if err != nil {
			return err
		}
		f.Set(v)
		*spec = src
		return nil
	}
	et := f.Type().Elem().Elem()
	m, _ := byKey(f, key)
	var e reflect.Value // the element's new value; invalid removes it
	switch {
	case j < 0 && bytes.Equal(bytes.TrimSpace(raw), []byte("null")):
	case j < 0:
		if e, err = decode(et); err != nil {
			return err
		}
		setKey(e, key, elem)
	default:
		e = reflect.New(et).Elem()
		if old, ok := m[elem]; ok {
			e.Set(deepCopyValue(old))
		}
		setKey(e, key, elem)
		v, err := decode(et.Field(j).Type)
		if err != nil {
			return err
		}
		e.Field(j).Set(v)
	}
	f.Set(withElem(f, key, elem, e))
	return CopyPath(spec, src, path, o)
}

// withElem returns a copy of the keyed list list (a *[]Elem) with the
// element named elem replaced by e, appended when absent, or removed when
// e is the zero Value.
func withElem(list reflect.Value, key, elem string, e reflect.Value) reflect.Value {
	st := list.Type().Elem()
	out := reflect.MakeSlice(st, 0, 1)
	found := false
	if !isNil(list) {
		for k := 0; k < list.Elem().Len(); k++ {
			x := list.Elem().Index(k)
			if keyOf(x, key) != elem {
				out = reflect.Append(out, deepCopyValue(x))
				continue
			}
			found = true
			if e.IsValid() {
				out = reflect.Append(out, e)
			}
		}
	}
	if !found && e.IsValid() {
		out = reflect.Append(out, e)
	}
	p := reflect.New(st)
	p.Elem().Set(out)
	return p
}

// Target returns what the cloud is to hold once the given pushes are
// applied: upstream, with the config's value at the path of every change
// in push and the config's identity fields. A cloud call that sets several
// fields at once (endpoint access, a node group's scaling, a launch
// template version) is built from it, so that a field not being pushed
// keeps upstream's value: an outside change waiting to be adopted, or a
// field in conflict, is never written back with the config's stale value.
// Errors are CopyPath's.
func Target[T any](config, upstream T, push []Change, o Options) (T, error) {
	out := Copy(upstream)
	ov, cv := reflect.ValueOf(&out).Elem(), reflect.ValueOf(config)
	for i := 0; i < ov.NumField(); i++ {
		if f := ov.Type().Field(i); f.IsExported() && f.Type.Kind() != reflect.Pointer {
			ov.Field(i).Set(cv.Field(i))
		}
	}
	for _, ch := range push {
		if err := CopyPath(&out, config, ch.Path, o); err != nil {
			return out, err
		}
	}
	return out, nil
}

// Acknowledge answers a conflict found earlier on path, when the config
// value then was recordedConfig and the upstream value recordedUpstream
// (JSON, as Value renders them). If config's value at path is no longer
// recordedConfig, the user has edited the field since the conflict was
// reported: the edit is the answer, and applied takes recordedUpstream at
// path, so that Reconcile pushes the new value — unless upstream moved once
// more, which is a new conflict. It reports whether it changed applied.
// Errors are Value's and SetValue's.
func Acknowledge[T any](applied *T, config T, path string, recordedConfig, recordedUpstream []byte, o Options) (bool, error) {
	now, err := Value(config, path, o)
	if err != nil {
		return false, err
	}
	if SameValue(now, recordedConfig) {
		return false, nil
	}
	return true, SetValue(applied, path, recordedUpstream, o)
}

// SameValue reports whether two JSON texts are equal as values (key order
// and spacing do not count), as Value's renderings of equal values are.
func SameValue(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	return reflect.DeepEqual(x, y)
}

// Render renders a value of a Change or Conflict as JSON, as Value renders
// the field.
func Render(v any) ([]byte, error) { return json.Marshal(v) }

// Show renders a change's value (Change.Old, Change.New) for a message:
// its JSON, "unset" for nil.
func Show(v any) string {
	if v == nil {
		return "unset"
	}
	raw, err := Render(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(raw)
}

// Landed reports whether upstream holds the value raw (JSON, as Value
// renders it) pushed at path. For a whole element only presence counts —
// it exists exactly when raw is not null — because the cloud reports more
// of an element than was sent; for a field the values must be equal, an
// unset value counting as equal to an empty one. Errors name a path that
// names no field, or a value that does not decode into its type.
func Landed[T any](upstream T, path string, raw []byte, o Options) (bool, error) {
	uv := reflect.ValueOf(upstream)
	i, _, j, _, _, isElem, err := locate(uv.Type(), path, o)
	if err != nil {
		return false, err
	}
	v, err := lookup(uv, path, o)
	if err != nil {
		return false, err
	}
	null := bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
	if isElem && j < 0 {
		return v.IsValid() == !null, nil
	}
	t := uv.Type().Field(i).Type
	if isElem {
		t = t.Elem().Elem().Field(j).Type
	}
	p := reflect.New(t)
	if err := json.Unmarshal(raw, p.Interface()); err != nil {
		return false, fmt.Errorf("managed: value of %s: %w", path, err)
	}
	return eq(p.Elem(), v), nil
}

// SplitElementPath splits a path of keyed list list ("nodePools[NAME]" or
// "nodePools[NAME].field" for list "nodePools") into the element's key and
// the field ("" for the whole element); ok is false for a path of another
// field.
func SplitElementPath(path, list string) (key, field string, ok bool) {
	rest, ok := strings.CutPrefix(path, list+"[")
	if !ok {
		return "", "", false
	}
	key, after, _ := strings.Cut(rest, "]")
	return key, strings.TrimPrefix(after, "."), true
}
