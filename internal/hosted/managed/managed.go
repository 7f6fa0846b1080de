package managed

import (
	"fmt"
	"reflect"
	"strings"
)

// Options describe the parts of a spec type that need more than the
// default per-field treatment.
type Options struct {
	// KeyedLists maps the JSON name of a list field (e.g. "nodeGroups") to
	// the JSON name of the field that names its elements ("nodegroupName").
	// Such lists are compared element by element.
	KeyedLists map[string]string
	// NeverAdopt lists JSON names of managed fields whose upstream value is
	// never taken into the config (Rancher: subnets, securityGroups,
	// serviceRole): an upstream difference there is neither adopted nor a
	// conflict, and the config value is pushed only when the user changes it.
	NeverAdopt []string
}

// Change is one field whose value moves from Old to New.
type Change struct {
	// Path names the field: "tags", "nodeGroups[ng-1].desiredSize".
	Path string
	// Old and New are the values (nil for unset or absent).
	Old, New any
}

// Conflict is a managed field changed both in the config and upstream since
// clustersync last applied it.
type Conflict struct {
	Path                      string
	Config, Upstream, Applied any
}

// Plan is the outcome of comparing config, upstream and applied spec.
type Plan[T any] struct {
	// Push are the config values to apply to the cloud (Old = upstream, New =
	// config), in field order. Element additions and removals of keyed lists
	// appear as whole elements (Old or New nil).
	Push []Change
	// Adopt are upstream values taken into the config (Old = config, New =
	// upstream): changes made outside clustersync.
	Adopt []Change
	// Conflicts are fields left alone because both sides changed.
	Conflicts []Conflict
	// Config is the config with the adoptions applied.
	Config T
	// Applied is the applied spec to record now: in-sync fields set to
	// their agreed value; every other field keeps its old applied value —
	// a push until the cloud has accepted it (MarkApplied), an adoption
	// until the config holds the adopted value (then it is in sync), a
	// conflict until it is answered (Acknowledge).
	Applied T
}

// Effective returns the effective desired state: upstream with every
// non-nil field of config over it; keyed lists are merged element by
// element (a config element's nil fields come from the upstream element of
// the same name; elements only upstream are dropped when the list is managed).
func Effective[T any](config, upstream T, o Options) T {
	out := Copy(upstream)
	overlay(reflect.ValueOf(&out).Elem(), reflect.ValueOf(config), reflect.ValueOf(upstream), o, true)
	return out
}

// overlay lays the non-nil pointer fields of cfg over dst (a copy of up).
func overlay(dst, cfg, up reflect.Value, o Options, top bool) {
	t := dst.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name := jsonName(f)
		if f.Type.Kind() != reflect.Pointer {
			if top {
				dst.Field(i).Set(cfg.Field(i)) // identity fields come from the config
			}
			continue
		}
		c := cfg.Field(i)
		if c.IsNil() {
			continue
		}
		key, keyed := o.KeyedLists[name]
		if keyed && top {
			dst.Field(i).Set(mergeKeyed(c, up.Field(i), key, o))
			continue
		}
		dst.Field(i).Set(deepCopyValue(c))
	}
}

// mergeKeyed returns the config list with each element's nil fields filled
// from the upstream element of the same name.
func mergeKeyed(cfg, up reflect.Value, key string, o Options) reflect.Value {
	byName := map[string]reflect.Value{}
	if !up.IsNil() {
		for j := 0; j < up.Elem().Len(); j++ {
			e := up.Elem().Index(j)
			byName[keyOf(e, key)] = e
		}
	}
	list := reflect.MakeSlice(cfg.Elem().Type(), 0, cfg.Elem().Len())
	for j := 0; j < cfg.Elem().Len(); j++ {
		c := cfg.Elem().Index(j)
		merged := reflect.New(c.Type()).Elem()
		if u, ok := byName[keyOf(c, key)]; ok {
			merged.Set(deepCopyValue(u))
			overlay(merged, c, u, o, false)
			// identity (non-pointer) fields of the element from the config
			for k := 0; k < c.NumField(); k++ {
				if c.Type().Field(k).IsExported() && c.Type().Field(k).Type.Kind() != reflect.Pointer {
					merged.Field(k).Set(c.Field(k))
				}
			}
		} else {
			merged.Set(deepCopyValue(c))
		}
		list = reflect.Append(list, merged)
	}
	p := reflect.New(list.Type())
	p.Elem().Set(list)
	return p
}

// Element returns the element of a keyed list (Options.KeyedLists) whose
// key field, named key as in JSON, is name: the pool "a" of
// spec.nodePools is Element(spec.NodePools, "name", "a"). It is nil when
// list is nil or has no such element.
func Element[E any](list *[]E, key, name string) *E {
	if list == nil {
		return nil
	}
	for i := range *list {
		if keyOf(reflect.ValueOf((*list)[i]), key) == name {
			return &(*list)[i]
		}
	}
	return nil
}

func keyOf(elem reflect.Value, key string) string {
	t := elem.Type()
	for i := 0; i < t.NumField(); i++ {
		if jsonName(t.Field(i)) == key {
			v := elem.Field(i)
			if v.Kind() == reflect.Pointer {
				if v.IsNil() {
					return ""
				}
				v = v.Elem()
			}
			return fmt.Sprint(v.Interface())
		}
	}
	return ""
}

// jsonName is the JSON name of a struct field.
func jsonName(f reflect.StructField) string {
	tag := f.Tag.Get("json")
	if name, _, _ := strings.Cut(tag, ","); name != "" && name != "-" {
		return name
	}
	return f.Name
}

// Copy returns a deep copy of v: no pointer, map or slice is shared.
func Copy[T any](v T) T {
	return deepCopyValue(reflect.ValueOf(v)).Interface().(T)
}

// deepCopyValue copies v so that no pointer, map or slice is shared.
func deepCopyValue(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return reflect.Zero(v.Type())
		}
		p := reflect.New(v.Type().Elem())
		p.Elem().Set(deepCopyValue(v.Elem()))
		return p
	case reflect.Map:
		if v.IsNil() {
			return reflect.Zero(v.Type())
		}
		m := reflect.MakeMapWithSize(v.Type(), v.Len())
		iter := v.MapRange()
		for iter.Next() {
			m.SetMapIndex(iter.Key(), deepCopyValue(iter.Value()))
		}
		return m
	case reflect.Slice:
		if v.IsNil() {
			return reflect.Zero(v.Type())
		}
		s := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := 0; i < v.Len(); i++ {
			s.Index(i).Set(deepCopyValue(v.Index(i)))
		}
		return s
	case reflect.Struct:
		s := reflect.New(v.Type()).Elem()
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				s.Field(i).Set(deepCopyValue(v.Field(i)))
			}
		}
		return s
	}
	return v
}

// iface renders a field value for a Change: the pointed value, or nil.
func iface(v reflect.Value) any {
	if !v.IsValid() {
		return nil
	}
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil
		}
		return deepCopyValue(v.Elem()).Interface()
	}
	return deepCopyValue(v).Interface()
}

// WithIdentity sets the identity fields of s (its top-level fields that
// are not pointers: a cluster's name, region, credential, imported) to
// from's. They are never synced, so a stored applied or upstream spec takes
// them from the config.
func WithIdentity[T any](s *T, from T) {
	dst, src := reflect.ValueOf(s).Elem(), reflect.ValueOf(from)
	for i := 0; i < dst.NumField(); i++ {
		if f := dst.Type().Field(i); f.IsExported() && f.Type.Kind() != reflect.Pointer {
			dst.Field(i).Set(deepCopyValue(src.Field(i)))
		}
	}
}
