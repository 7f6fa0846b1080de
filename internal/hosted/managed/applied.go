package managed

import (
	"reflect"
)

// MarkApplied records in applied that the config value at path (a Change
// path of a push: "tags", "nodeGroups[ng-1]", "nodeGroups[ng-1].desiredSize")
// was accepted by the cloud, so the next Reconcile does not take it for a
// new user change. A pushed element removal removes the element.
func MarkApplied[T any](applied *T, config T, path string, o Options) error {
	return CopyPath(applied, config, path, o)
}

// CopyPath sets the value at path (a Change or Conflict path) of to to
// from's, removing a keyed-list element from does not have; for an
// element field, an element to lacks is added with only its key and that
// field. Errors name a path that names no field.
func CopyPath[T any](to *T, from T, path string, o Options) error {
	dst := reflect.ValueOf(to).Elem()
	src := reflect.ValueOf(from)
	i, key, j, _, elem, isElem, err := locate(dst.Type(), path, o)
	if err != nil {
		return err
	}
	if !isElem {
		dst.Field(i).Set(deepCopyValue(src.Field(i)))
		return nil
	}
	cm, _ := byKey(src.Field(i), key)
	ce, inC := cm[elem]
	var e reflect.Value // the element's new value; invalid removes it
	switch {
	case !inC: // the element's removal was applied
	case j < 0:
		e = deepCopyValue(ce)
	default:
		am, _ := byKey(dst.Field(i), key)
		e = reflect.New(ce.Type()).Elem()
		if ae, ok := am[elem]; ok {
			e.Set(deepCopyValue(ae))
		}
		setKey(e, key, elem)
		e.Field(j).Set(deepCopyValue(ce.Field(j)))
	}
	dst.Field(i).Set(withElem(dst.Field(i), key, elem, e))
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
