package managed

import (
	"fmt"
	"reflect"
	"strings"
)

// MarkApplied records in applied that the config value at path (a Change
// path of a push: "tags", "nodeGroups[ng-1]", "nodeGroups[ng-1].desiredSize")
// was accepted by the cloud, so the next Reconcile does not take it for a
// new user change. A pushed element removal removes the element.
func MarkApplied[T any](applied *T, config T, path string, o Options) error {
	return CopyPath(applied, config, path, o)
}

// CopyPath sets the value at path (a Change or Conflict path) of dst to
// src's, removing a keyed-list element src does not have. Controllers use
// it to hand the operator the upstream value of a conflicting field, so
// that nothing is written to it.
func CopyPath[T any](to *T, from T, path string, o Options) error {
	dst := reflect.ValueOf(to).Elem()
	src := reflect.ValueOf(from)
	head, rest, _ := strings.Cut(path, ".")
	name, elem, isElem := strings.Cut(strings.TrimSuffix(head, "]"), "[")
	i := fieldIndex(dst.Type(), name)
	if i < 0 {
		return fmt.Errorf("managed: no field %q in %s", name, dst.Type())
	}
	if !isElem {
		dst.Field(i).Set(deepCopyValue(src.Field(i)))
		return nil
	}
	key, ok := o.KeyedLists[name]
	if !ok {
		return fmt.Errorf("managed: %q is not a keyed list", name)
	}
	cm, _ := byKey(src.Field(i), key)
	am, aorder := byKey(dst.Field(i), key)
	ce, inC := cm[elem]
	list := reflect.MakeSlice(dst.Field(i).Type().Elem(), 0, len(aorder)+1)
	found := false
	for _, n := range aorder {
		e := am[n]
		if n != elem {
			list = reflect.Append(list, deepCopyValue(e))
			continue
		}
		found = true
		switch {
		case !inC: // the element's removal was applied
		case rest == "":
			list = reflect.Append(list, deepCopyValue(ce))
		default:
			e = deepCopyValue(e)
			j := fieldIndex(e.Type(), rest)
			if j < 0 {
				return fmt.Errorf("managed: no field %q in %s", rest, e.Type())
			}
			e.Field(j).Set(deepCopyValue(ce.Field(j)))
			list = reflect.Append(list, e)
		}
	}
	if !found && inC {
		e := deepCopyValue(ce)
		if rest != "" { // only that field is known to be applied
			e = reflect.New(ce.Type()).Elem()
			setKey(e, key, elem)
			j := fieldIndex(e.Type(), rest)
			if j < 0 {
				return fmt.Errorf("managed: no field %q in %s", rest, e.Type())
			}
			e.Field(j).Set(deepCopyValue(ce.Field(j)))
		}
		list = reflect.Append(list, e)
	}
	p := reflect.New(list.Type())
	p.Elem().Set(list)
	dst.Field(i).Set(p)
	return nil
}

func fieldIndex(t reflect.Type, json string) int {
	for i := 0; i < t.NumField(); i++ {
		if t.Field(i).IsExported() && jsonName(t.Field(i)) == json {
			return i
		}
	}
	return -1
}
