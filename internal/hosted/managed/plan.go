package managed

import (
	"maps"
	"reflect"
	"slices"
)

// decision is what happens to one managed field.
type decision int

const (
	inSync decision = iota
	push
	adopt
	conflict
	ignore
)

// decide compares the config value c, the upstream value u and the last
// applied value a of one managed field (c is set). neverAdopt fields only
// ever push user changes.
func decide(c, u, a reflect.Value, neverAdopt bool) decision {
	if eq(c, u) {
		return inSync
	}
	never := isNil(a)
	userChanged := never || !eq(c, a)
	upstreamMoved := !never && !eq(u, a)
	switch {
	case neverAdopt && userChanged:
		return push
	case neverAdopt:
		return ignore
	case userChanged && !upstreamMoved:
		return push
	case !userChanged && upstreamMoved:
		return adopt
	default:
		return conflict
	}
}

func isNil(v reflect.Value) bool { return !v.IsValid() || (v.Kind() == reflect.Pointer && v.IsNil()) }

// eq compares two field values; an unset value equals the zero value, so
// an upstream that omits empty tags matches a config of empty tags.
func eq(a, b reflect.Value) bool {
	return reflect.DeepEqual(normalize(a), normalize(b))
}

func normalize(v reflect.Value) any {
	if isNil(v) {
		return nil
	}
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if v.IsZero() || ((v.Kind() == reflect.Map || v.Kind() == reflect.Slice) && v.Len() == 0) {
		return nil
	}
	return v.Interface()
}

// nonNil returns v, or a pointer to a zero value of v's type when v is a nil
// pointer: a value an adopted field can take without becoming unmanaged.
func nonNil(v reflect.Value, t reflect.Type) reflect.Value {
	if isNil(v) {
		p := reflect.New(t.Elem())
		switch t.Elem().Kind() {
		case reflect.Map:
			p.Elem().Set(reflect.MakeMap(t.Elem()))
		case reflect.Slice:
			p.Elem().Set(reflect.MakeSlice(t.Elem(), 0, 0))
		}
		return p
	}
	return deepCopyValue(v)
}

// Reconcile compares config (desired, nil = unmanaged), upstream (as the
// cloud reports it) and applied (the value clustersync last applied for
// each managed field) and returns what to push, what to adopt and what
// conflicts. The inputs are not modified.
func Reconcile[T any](config, upstream, applied T, o Options) Plan[T] {
	p := Plan[T]{Config: Copy(config), Applied: Copy(applied)}
	r := &reconciler{o: o, push: &p.Push, adopt: &p.Adopt, conflicts: &p.Conflicts}
	r.fields("", reflect.ValueOf(&p.Config).Elem(), reflect.ValueOf(config), reflect.ValueOf(upstream),
		reflect.ValueOf(applied), reflect.ValueOf(&p.Applied).Elem(), true)
	return p
}

type reconciler struct {
	o         Options
	push      *[]Change
	adopt     *[]Change
	conflicts *[]Conflict
}

// fields decides every managed pointer field of one struct value: cfgOut
// and appOut are the outputs (copies), cfg, up and app the inputs.
func (r *reconciler) fields(prefix string, cfgOut, cfg, up, app, appOut reflect.Value, top bool) {
	t := cfg.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() || f.Type.Kind() != reflect.Pointer {
			continue // identity fields are never synced
		}
		name := jsonName(f)
		path := name
		if prefix != "" {
			path = prefix + "." + name
		}
		c, u, a := cfg.Field(i), up.Field(i), fieldOrZero(app, i)
		if c.IsNil() {
			if appOut.IsValid() {
				appOut.Field(i).Set(reflect.Zero(f.Type)) // unmanaged: nothing applied to remember
			}
			continue
		}
		if key, ok := r.o.KeyedLists[name]; ok && top {
			r.keyed(path, key, cfgOut.Field(i), c, u, a, appOut.Field(i))
			continue
		}
		switch decide(c, u, a, slices.Contains(r.o.NeverAdopt, name)) {
		case inSync:
			appOut.Field(i).Set(deepCopyValue(c))
		case push:
			*r.push = append(*r.push, Change{Path: path, Old: iface(u), New: iface(c)})
		case adopt:
			v := nonNil(u, f.Type)
			*r.adopt = append(*r.adopt, Change{Path: path, Old: iface(c), New: iface(v)})
			cfgOut.Field(i).Set(v)
		case conflict:
			*r.conflicts = append(*r.conflicts, Conflict{Path: path, Config: iface(c), Upstream: iface(u), Applied: iface(a)})
		}
	}
}

func fieldOrZero(v reflect.Value, i int) reflect.Value {
	if !v.IsValid() {
		return reflect.Value{}
	}
	return v.Field(i)
}

// keyed decides a managed list of named elements, element by element.
func (r *reconciler) keyed(path, key string, cfgOut, c, u, a, appOut reflect.Value) {
	cm, corder := byKey(c, key)
	um, _ := byKey(u, key)
	am, _ := byKey(a, key)
	elemType := c.Type().Elem().Elem()
	cfgList := reflect.MakeSlice(c.Type().Elem(), 0, len(cm))
	appList := reflect.MakeSlice(c.Type().Elem(), 0, len(am))
	keep := func(v reflect.Value) { cfgList = reflect.Append(cfgList, v) }
	record := func(v reflect.Value) { appList = reflect.Append(appList, v) }

	names := slices.Clone(corder)
	for _, n := range slices.Sorted(maps.Keys(um)) {
		if _, ok := cm[n]; !ok {
			names = append(names, n)
		}
	}
	for _, n := range slices.Sorted(maps.Keys(am)) {
		if _, ok := cm[n]; !ok {
			if _, ok := um[n]; !ok {
				names = append(names, n)
			}
		}
	}
	for _, n := range names {
		ce, inC := cm[n]
		ue, inU := um[n]
		ae, inA := am[n]
		ep := path + "[" + n + "]"
		switch {
		case inC && inU:
			outC := deepCopyValue(ce)
			outA := reflect.New(elemType).Elem()
			if inA {
				outA.Set(deepCopyValue(ae))
			} else {
				setKey(outA, key, n)
				ae = reflect.Value{}
			}
			r.fields(ep, outC, ce, ue, ae, outA, false)
			keep(outC)
			record(outA)
		case inC && inA: // gone upstream: deleted outside clustersync?
			if managedEqual(ce, ae) {
				*r.adopt = append(*r.adopt, Change{Path: ep, Old: iface(ce), New: nil})
				record(deepCopyValue(ae)) // until the config drops it too
				continue
			}
			*r.conflicts = append(*r.conflicts, Conflict{Path: ep, Config: iface(ce), Upstream: nil, Applied: iface(ae)})
			keep(deepCopyValue(ce))
			record(deepCopyValue(ae))
		case inC: // added in the config
			*r.push = append(*r.push, Change{Path: ep, Old: nil, New: iface(ce)})
			keep(deepCopyValue(ce))
		case inU && inA: // removed from the config
			if managedEqual(ae, ue) {
				*r.push = append(*r.push, Change{Path: ep, Old: iface(ue), New: nil})
				record(deepCopyValue(ae)) // until the deletion is done
				continue
			}
			*r.conflicts = append(*r.conflicts, Conflict{Path: ep, Config: nil, Upstream: iface(ue), Applied: iface(ae)})
			record(deepCopyValue(ae))
		case inU: // created outside clustersync
			*r.adopt = append(*r.adopt, Change{Path: ep, Old: nil, New: iface(ue)})
			keep(deepCopyValue(ue))
		}
		// in neither config nor upstream (only applied): gone on both sides; forget it.
	}
	cp := reflect.New(cfgList.Type())
	cp.Elem().Set(cfgList)
	cfgOut.Set(cp)
	ap := reflect.New(appList.Type())
	ap.Elem().Set(appList)
	appOut.Set(ap)
}

// byKey indexes a *[]Elem by its key field; order lists the keys in order.
func byKey(list reflect.Value, key string) (m map[string]reflect.Value, order []string) {
	m = map[string]reflect.Value{}
	if isNil(list) {
		return m, nil
	}
	for j := 0; j < list.Elem().Len(); j++ {
		e := list.Elem().Index(j)
		k := keyOf(e, key)
		m[k] = e
		order = append(order, k)
	}
	return m, order
}

func setKey(elem reflect.Value, key, value string) {
	t := elem.Type()
	for i := 0; i < t.NumField(); i++ {
		if jsonName(t.Field(i)) == key && t.Field(i).Type.Kind() == reflect.String {
			elem.Field(i).SetString(value)
		}
	}
}

// managedEqual reports whether every field set in a has the same value in b.
func managedEqual(a, b reflect.Value) bool {
	t := a.Type()
	for i := 0; i < t.NumField(); i++ {
		if !t.Field(i).IsExported() {
			continue
		}
		fa := a.Field(i)
		if fa.Kind() == reflect.Pointer && fa.IsNil() {
			continue
		}
		if !eq(fa, b.Field(i)) {
			return false
		}
	}
	return true
}
