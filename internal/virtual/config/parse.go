package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// Load reads the configuration file at path and parses it with Parse. Every
// error it returns starts with path.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config file: %w", err)
	}
	cfg, err := Parse(data)
	if err != nil {
		return nil, prefixErrors(path, err)
	}
	return cfg, nil
}

// Parse parses a YAML configuration file. It starts from Default and
// overlays the file: a key that is absent or null keeps its default, maps
// are merged into their defaults key by key (as Helm merges values.yaml)
// and lists replace theirs. An empty document gives the defaults.
//
// Parse is strict. Every unknown key and every value of the wrong type is
// reported with the dotted path of its key, then the result is checked with
// Validate; all problems are returned together, sorted by path, one per
// line, as FieldErrors joined with errors.Join. A YAML syntax error is
// returned alone, with the parser's line information. On error the Config
// is nil.
func Parse(data []byte) (*Config, error) {
	tree, err := parseTree(data)
	if err != nil {
		return nil, err
	}
	cfg := Default()
	d := decoder{keys: vclusterKeys()}
	switch tree.(type) {
	case nil:
	case map[string]any:
		d.decode("", nil, tree, reflect.ValueOf(cfg).Elem(), d.keys.root)
	default:
		d.fail("", "expected an object at the top level, got %s", describeValue(tree))
	}
	errs := d.errs
	for _, ve := range cfg.validate() {
		// A check on a key whose value could not be decoded would judge the
		// default in its place, so leave it until the value is fixed.
		if !d.failedNear(ve.Path) {
			errs = append(errs, ve)
		}
	}
	if err := joinFieldErrors(errs); err != nil {
		return nil, err
	}
	cfg.noted = d.noted
	return cfg, nil
}

// parseTree converts YAML to the generic values of encoding/json
// (map[string]any, []any, string, json.Number, bool, nil). Duplicate keys
// are a syntax error.
func parseTree(data []byte) (any, error) {
	j, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, invalidYAML(err)
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, invalidYAML(err)
	}
	return tree, nil
}

// invalidYAML is "invalid YAML: " and the parser's error on one line: the
// YAML library puts each of several problems on a line of its own
// ("unmarshal errors:\n  line 3: …"), which would read as lines of Parse's
// one-problem-per-line list that name no path.
func invalidYAML(err error) error {
	var parts []string
	for line := range strings.SplitSeq(err.Error(), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			parts = append(parts, line)
		}
	}
	if len(parts) == 0 {
		return errors.New("invalid YAML")
	}
	msg := parts[0]
	if len(parts) > 1 {
		msg += " " + strings.Join(parts[1:], "; ")
	}
	return fmt.Errorf("invalid YAML: %s", msg)
}

// prefixErrors puts prefix in front of err, or of each error err joins.
func prefixErrors(prefix string, err error) error {
	multi, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return fmt.Errorf("%s: %w", prefix, err)
	}
	var errs []error
	for _, e := range multi.Unwrap() {
		errs = append(errs, fmt.Errorf("%s: %w", prefix, e))
	}
	return errors.Join(errs...)
}

// decoder assigns a generic tree to a Go value by reflection, checking
// every key and type against the json tags and field types, and collecting
// a FieldError for each problem instead of stopping at the first. A key
// that clustersync's types lack and a vCluster release has is accepted
// and checked against vCluster's keys (vclusterValue), as is the content
// of the sections kept as written.
type decoder struct {
	keys  *VClusterKeys
	errs  []*FieldError
	noted []string // see Config.noted
}

// fail records a problem at path.
func (d *decoder) fail(path, format string, args ...any) {
	d.errs = append(d.errs, &FieldError{Path: path, Message: fmt.Sprintf(format, args...)})
}

// mismatch records that the value at path does not fit type t.
func (d *decoder) mismatch(path string, t reflect.Type, v any) {
	d.fail(path, "expected %s, got %s", describeType(t), describeValue(v))
}

// failedNear tells whether a problem was recorded at path, inside it or
// around it.
func (d *decoder) failedNear(path string) bool {
	for _, e := range d.errs {
		if e.Path == "" || e.Path == path || isUnder(path, e.Path) || isUnder(e.Path, path) {
			return true
		}
	}
	return false
}

// isUnder tells whether path lies inside the key or entry at parent.
func isUnder(path, parent string) bool {
	return strings.HasPrefix(path, parent+".") || strings.HasPrefix(path, parent+"[")
}

// decode assigns v, found at path, to dst. Objects are merged into the
// struct or map already in dst; everything else replaces it. segs are
// path's keys (a key may have dots of its own); vc is the node of
// vCluster's keys at path, nil where vCluster has none.
func (d *decoder) decode(path string, segs []string, v any, dst reflect.Value, vc *keyNode) {
	t := dst.Type()
	if v == nil {
		d.mismatch(path, t, v)
		return
	}
	if ours, chosen := d.vclusterDefaultMeansOurs(segs, v); ours {
		if chosen {
			d.noted = append(d.noted, dottedPath(path))
		}
		return // dst keeps clustersync's default
	}
	if isKubernetesType(t) {
		d.kubernetesValue(path, v, dst)
		return
	}
	switch t {
	case reflect.TypeFor[AutoSwitch]():
		s, ok := parseAutoSwitch(v)
		if !ok {
			d.mismatch(path, t, v)
			return
		}
		dst.Set(reflect.ValueOf(s))
		return
	case reflect.TypeFor[resource.Quantity]():
		var s string
		switch v := v.(type) {
		case string:
			s = v
		case json.Number:
			s = v.String()
		default:
			d.mismatch(path, t, v)
			return
		}
		q, err := resource.ParseQuantity(s)
		if err != nil {
			d.fail(path, "invalid quantity %q: %v", s, err)
			return
		}
		dst.Set(reflect.ValueOf(q))
		return
	case reflect.TypeFor[intstr.IntOrString]():
		// A number (of pods) or a string (a percentage), as in a
		// Kubernetes object.
		switch v := v.(type) {
		case string:
			dst.Set(reflect.ValueOf(intstr.FromString(v)))
		case json.Number:
			n, err := v.Int64()
			if err != nil || n != int64(int32(n)) {
				d.fail(path, "expected an integer or a string such as 50%%, got %s", v)
				return
			}
			dst.Set(reflect.ValueOf(intstr.FromInt32(int32(n))))
		default:
			d.mismatch(path, t, v)
		}
		return
	case reflect.TypeFor[ImageRef]():
		if ref, ok := d.imageRef(path, v); ok {
			dst.Set(reflect.ValueOf(ref))
		}
		return
	}

	switch t.Kind() {
	case reflect.Pointer:
		elem := reflect.New(t.Elem())
		if !dst.IsNil() {
			elem.Elem().Set(dst.Elem())
		}
		d.decode(path, segs, v, elem.Elem(), vc)
		dst.Set(elem)

	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			d.mismatch(path, t, v)
			return
		}
		fields := jsonFields(t)
		setBy := map[int]string{}
		for _, key := range slices.Sorted(maps.Keys(obj)) {
			index, known := fields[key]
			if other, twice := setBy[index]; known && twice {
				d.fail(keyPath(path, key), "the same setting as %s (one is vCluster's older spelling); give only one", keyPath(path, other))
				continue
			}
			if known {
				setBy[index] = key
			}
			switch {
			case !known && vc.child(key) != nil:
				d.vclusterValue(keyPath(path, key), with(segs, key), keyPath(path, key), obj[key], vc.child(key))
			case !known:
				d.unknownKey(path, key, slices.Concat(slices.Collect(maps.Keys(fields)), vc.names()))
			case obj[key] == nil:
				// null, or a key with nothing after it: keep the default.
			case t.Field(index).Tag.Get("config") == "vcluster":
				d.kept(keyPath(path, key), with(segs, key), obj[key], dst.Field(index), vc.child(key))
			default:
				d.decode(keyPath(path, key), with(segs, key), obj[key], dst.Field(index), vc.child(key))
			}
		}

	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			d.mismatch(path, t, v)
			return
		}
		if dst.IsNil() {
			dst.Set(reflect.MakeMapWithSize(t, len(obj)))
		}
		for _, key := range slices.Sorted(maps.Keys(obj)) {
			k := reflect.ValueOf(key).Convert(t.Key())
			elem := reflect.New(t.Elem()).Elem()
			if old := dst.MapIndex(k); old.IsValid() {
				elem.Set(old)
			}
			d.decode(entryPath(path, key), with(segs, key), obj[key], elem, vc.child(key))
			dst.SetMapIndex(k, elem)
		}

	case reflect.Slice:
		list, ok := v.([]any)
		if !ok {
			d.mismatch(path, t, v)
			return
		}
		items := reflect.MakeSlice(t, len(list), len(list))
		for i, item := range list {
			d.decode(indexPath(path, i), nil, item, items.Index(i), nil)
		}
		dst.Set(items)

	case reflect.Interface:
		// An object as Kubernetes writes it, which clustersync passes on.
		dst.Set(reflect.ValueOf(v))

	case reflect.Bool:
		b, ok := v.(bool)
		if !ok {
			d.mismatch(path, t, v)
			return
		}
		dst.SetBool(b)

	case reflect.String:
		s, ok := v.(string)
		if !ok {
			d.mismatch(path, t, v)
			return
		}
		dst.SetString(s)

	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := v.(json.Number)
		if !ok {
			d.mismatch(path, t, v)
			return
		}
		i, whole, inRange := wholeNumber(n)
		switch {
		case !whole:
			d.mismatch(path, t, v)
			return
		case !inRange || dst.OverflowInt(i):
			d.fail(path, "integer %s is out of range", n)
			return
		}
		dst.SetInt(i)

	case reflect.Float32, reflect.Float64:
		n, ok := v.(json.Number)
		if !ok {
			d.mismatch(path, t, v)
			return
		}
		f, err := strconv.ParseFloat(n.String(), t.Bits())
		if err != nil {
			d.fail(path, "number %s is out of range", n)
			return
		}
		dst.SetFloat(f)

	default:
		panic(fmt.Sprintf("config: no decoding for %s at %q", t, path))
	}
}

// isKubernetesType tells whether t is a type of the Kubernetes API
// (k8s.io/api/…), such as corev1.Affinity: a value of the file that goes
// to Kubernetes as it is written.
func isKubernetesType(t reflect.Type) bool { return strings.HasPrefix(t.PkgPath(), "k8s.io/api/") }

// kubernetesValue decodes v, found at path, into dst, a Kubernetes API
// type, as the API server decodes it (sigs.k8s.io/json: field names are
// case-sensitive, unknown and duplicate fields are errors), so that the
// file is refused here for what the API server would refuse it for.
func (d *decoder) kubernetesValue(path string, v any, dst reflect.Value) {
	data, err := json.Marshal(v)
	if err != nil {
		d.fail(path, "%v", err)
		return
	}
	p := reflect.New(dst.Type())
	strict, err := kjson.UnmarshalStrict(data, p.Interface())
	if err != nil {
		d.fail(path, "not a Kubernetes %s: %v", dst.Type().Name(), err)
		return
	}
	for _, e := range strict {
		d.fail(path, "not a Kubernetes %s: %v", dst.Type().Name(), e)
	}
	if len(strict) == 0 {
		dst.Set(p.Elem())
	}
}

// kept keeps v, found at path, in dst, a field of a vCluster section that
// clustersync accepts as written (tagged config:"vcluster"): checked
// against vCluster's keys at vc and noted where it sets other than
// vCluster's defaults (Config.NoEffect).
func (d *decoder) kept(path string, segs []string, v any, dst reflect.Value, vc *keyNode) {
	if vc != nil {
		d.vclusterValue(path, segs, path, v, vc)
	} else if !isZero(v) {
		d.noted = append(d.noted, path)
	}
	dst.Set(reflect.ValueOf(v))
}

// wholeNumber tells whether n is a whole number, in integer (16) or
// floating-point (16.0, 1e+06) notation, and whether it fits in an int64,
// which it returns.
func wholeNumber(n json.Number) (i int64, whole, inRange bool) {
	if i, err := strconv.ParseInt(n.String(), 10, 64); err == nil {
		return i, true, true
	}
	f, err := strconv.ParseFloat(n.String(), 64)
	switch {
	case err != nil || f != math.Trunc(f):
		return 0, false, false
	case f < math.MinInt64 || f >= math.MaxInt64:
		return 0, true, false
	default:
		return int64(f), true, true
	}
}

// jsonFields maps the json key of each field of struct type t to the
// field's index.
func jsonFields(t reflect.Type) map[string]int {
	fields := make(map[string]int, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fields[name] = i
		if alias, ok := strings.CutPrefix(f.Tag.Get("config"), "alias="); ok {
			fields[alias] = i
		}
	}
	return fields
}

// imageRef decodes an ImageRef at path: a string, or an object with
// string keys registry, repository (required) and tag.
func (d *decoder) imageRef(path string, v any) (ImageRef, bool) {
	switch v := v.(type) {
	case string:
		return ImageRef(v), true
	case map[string]any:
		parts := map[string]string{}
		ok := true
		for _, key := range slices.Sorted(maps.Keys(v)) {
			switch key {
			case "registry", "repository", "tag":
				s, isString := v[key].(string)
				if !isString && v[key] != nil {
					d.fail(keyPath(path, key), "expected a string, got %s", describeValue(v[key]))
					ok = false
				}
				parts[key] = s
			default:
				d.fail(keyPath(path, key), "unknown key (known: registry, repository, tag)")
				ok = false
			}
		}
		if !ok {
			return "", false
		}
		if parts["repository"] == "" {
			d.fail(keyPath(path, "repository"), "required when the image is an object")
			return "", false
		}
		ref := parts["repository"]
		if parts["registry"] != "" {
			ref = strings.TrimSuffix(parts["registry"], "/") + "/" + ref
		}
		if parts["tag"] != "" {
			ref += ":" + parts["tag"]
		}
		return ImageRef(ref), true
	default:
		d.mismatch(path, reflect.TypeFor[ImageRef](), v)
		return "", false
	}
}

// describeType names what a value of type t is written as, for messages.
func describeType(t reflect.Type) string {
	switch t {
	case reflect.TypeFor[AutoSwitch]():
		return autoSwitchWant
	case reflect.TypeFor[resource.Quantity]():
		return "a quantity (e.g. 30m, 64Mi, 1)"
	case reflect.TypeFor[intstr.IntOrString]():
		return "a number or a percentage (e.g. 1, 50%)"
	case reflect.TypeFor[ImageRef]():
		return "an image: a string, or an object {registry, repository, tag}"
	}
	switch t.Kind() {
	case reflect.Pointer:
		return describeType(t.Elem())
	case reflect.Struct:
		return "an object"
	case reflect.Map:
		return "a map"
	case reflect.Slice:
		return "a list"
	case reflect.Bool:
		return "a boolean"
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	default:
		return t.String()
	}
}

// describeValue describes a generic value for messages, e.g. `string "yes"`.
func describeValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean " + strconv.FormatBool(v)
	case json.Number:
		return "number " + v.String()
	case float64:
		return "number " + strconv.FormatFloat(v, 'g', -1, 64)
	case string:
		const limit = 60
		if r := []rune(v); len(r) > limit {
			return "string " + strconv.Quote(string(r[:limit])) + "…"
		}
		return "string " + strconv.Quote(v)
	case []any:
		return "a list"
	case map[string]any:
		return "a map"
	default:
		return fmt.Sprintf("%T", v)
	}
}
