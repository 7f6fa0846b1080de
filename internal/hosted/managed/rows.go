package managed

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
)

// Row is one line of the effective-state table (`clustersync cluster show`).
type Row struct {
	// Path names the field, as in Change.
	Path string
	// Managed is true when the config sets the field.
	Managed bool
	// Config, Upstream, Applied and Effective render the values as JSON
	// ("" when unset). Applied is the last value clustersync and the cloud
	// agreed on.
	Config, Upstream, Applied, Effective string
	// Drift is true when a managed field differs from upstream: a change
	// not yet applied, or one made outside clustersync.
	Drift bool
}

// Rows lists every nillable field of config and upstream, and, for keyed
// lists, every field of every element, with its state and the value
// applied holds for it. Identity fields come first.
func Rows[T any](config, upstream, applied T, o Options) []Row {
	eff := Effective(config, upstream, o)
	var rows []Row
	rowsOf(&rows, "", reflect.ValueOf(config), reflect.ValueOf(upstream), reflect.ValueOf(eff), o, true)
	for i := range rows {
		if v, err := Value(applied, rows[i].Path, o); err == nil && string(v) != "null" {
			rows[i].Applied = string(v)
		}
	}
	return rows
}

func rowsOf(rows *[]Row, prefix string, cfg, up, eff reflect.Value, o Options, top bool) {
	t := cfg.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		path := jsonName(f)
		if prefix != "" {
			path = prefix + "." + path
		}
		c, u, e := cfg.Field(i), up.Field(i), eff.Field(i)
		if f.Type.Kind() != reflect.Pointer { // identity field
			if top {
				*rows = append(*rows, Row{Path: path, Managed: true, Config: render(c), Upstream: render(u), Effective: render(c)})
			}
			continue
		}
		if key, ok := o.KeyedLists[jsonName(f)]; ok && top {
			cm, corder := byKey(c, key)
			um, _ := byKey(u, key)
			em, _ := byKey(e, key)
			names := corder
			for _, n := range slices.Sorted(maps.Keys(um)) {
				if _, ok := cm[n]; !ok {
					names = append(names, n)
				}
			}
			zero := reflect.New(f.Type.Elem().Elem()).Elem()
			for _, n := range names {
				ce, ue, ee := orZero(cm[n], zero), orZero(um[n], zero), orZero(em[n], zero)
				rowsOf(rows, path+"["+n+"]", ce, ue, ee, o, false)
			}
			continue
		}
		managed := !c.IsNil()
		*rows = append(*rows, Row{Path: path, Managed: managed, Config: render(c), Upstream: render(u),
			Effective: render(e), Drift: managed && !eq(c, u)})
	}
}

func orZero(v, zero reflect.Value) reflect.Value {
	if v.IsValid() {
		return v
	}
	return zero
}

func render(v reflect.Value) string {
	if isNil(v) {
		return ""
	}
	data, err := json.Marshal(v.Interface())
	if err != nil {
		return "?"
	}
	return string(data)
}
