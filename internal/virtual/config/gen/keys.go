package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/runner"
)

// The marker lines of docs/configuration.md between which spliceKeys
// writes the key table; the text around them is left as it is.
const (
	beginKeys = "<!-- BEGIN GENERATED: keys (go generate ./internal/virtual/config) -->"
	endKeys   = "<!-- END GENERATED: keys -->"
)

// The statuses of a key in the table.
const (
	statusHonoured    = "honoured"
	statusUnsupported = "not yet (refused when set)"
	statusNoEffect    = "accepted, no effect"
)

// none is the table's cell for an empty default or description.
const none = "—"

// keyRow is one row of the key table.
type keyRow struct {
	// keys are the dotted paths of the row, as written in YAML; more than
	// one for a group of vCluster keys that share one doc comment.
	keys []string
	// segments are the elements of keys[0]'s path, each with its other
	// spelling (config:"alias=…"), for matching runner's paths.
	segments []segment
	// typ is the value's type as a user writes it.
	typ string
	// def is the default as a Markdown cell.
	def string
	// status is one of the status constants; patch items get theirs from
	// the lists that hold them.
	status string
	// desc is the first sentence of the key's doc comment.
	desc string
	// patches marks a list of config.Patch, whose items are described once.
	patches bool
}

// segment is one element of a key's path.
type segment struct{ name, alias string }

// keyGroup is one table of the output: the rows below one section.
type keyGroup struct {
	// title (Markdown) and desc (plain text, may be "") introduce the table.
	title, desc string
	rows        []*keyRow
}

// schemaNode is the part of a JSON Schema node the table reads. A boolean
// schema (true: anything, as the vCluster sections kept as written are)
// decodes to the zero node.
type schemaNode struct {
	Ref                  string                 `json:"$ref"`
	Description          string                 `json:"description"`
	Properties           map[string]*schemaNode `json:"properties"`
	Items                *schemaNode            `json:"items"`
	AdditionalProperties *schemaNode            `json:"additionalProperties"`
	Defs                 map[string]*schemaNode `json:"$defs"`
}

// UnmarshalJSON decodes a schema object, or a boolean schema as the zero
// node.
func (n *schemaNode) UnmarshalJSON(b []byte) error {
	if s := strings.TrimSpace(string(b)); s == "true" || s == "false" {
		*n = schemaNode{}
		return nil
	}
	type plain schemaNode
	return json.Unmarshal(b, (*plain)(n))
}

// keyWalker builds the rows from the Go types of package config, the
// schema generated from them (for the doc comments) and config.Default().
type keyWalker struct {
	defs     map[string]*schemaNode
	defaults any
	// uses counts the fields of each struct type, to tell a shared switch
	// type (EnableSwitch) from a type of its own (SyncPods).
	uses   map[reflect.Type]int
	groups []*keyGroup
	items  []*keyRow
}

// keyTable returns the Markdown that goes between the markers of
// docs/configuration.md: one table per section of the configuration file
// (sync.toHost, sync.fromHost, controlPlane, syncer, then vCluster's
// other top-level sections), then one for the items of a patch list, with
// one row per leaf key: its path, type, default (config.Default()), status
// and the first sentence of its doc comment (from schema, config.Schema's
// output). The status is "not yet (refused when set)" for the keys of
// runner.Unsupported, "accepted, no effect" for those of runner.Ignored
// and the fields tagged config:"vcluster" (listed once, not their
// content), else "honoured". The `enabled` key of a switch type that
// several keys share takes its parent key's comment, its own being
// generic. It returns an error when the schema does not describe the
// types, a path of runner matches no key, or a field has a Go type the
// table has no name for.
func keyTable(schema []byte) (string, error) {
	w, err := walkKeys(schema)
	if err != nil {
		return "", err
	}
	var unsupported []string
	for _, k := range runner.Unsupported() {
		unsupported = append(unsupported, k.Path)
	}
	if err := w.setStatuses(unsupported, runner.Ignored()); err != nil {
		return "", err
	}
	return w.render(), nil
}

// walkKeys returns the rows of config.Config's keys, in the order of its
// fields, without their statuses but for the vCluster keys kept as written.
func walkKeys(schema []byte) (*keyWalker, error) {
	var root schemaNode
	if err := json.Unmarshal(schema, &root); err != nil {
		return nil, fmt.Errorf("key table: the schema: %w", err)
	}
	defaults, err := json.Marshal(config.Default())
	if err != nil {
		return nil, fmt.Errorf("key table: the defaults: %w", err)
	}
	w := &keyWalker{defs: root.Defs, uses: map[reflect.Type]int{}}
	if err := json.Unmarshal(defaults, &w.defaults); err != nil {
		return nil, fmt.Errorf("key table: the defaults: %w", err)
	}
	t := reflect.TypeFor[config.Config]()
	countUses(t, w.uses)
	def, err := w.resolve(&root)
	if err != nil {
		return nil, err
	}
	if err := w.walkTop(t, def); err != nil {
		return nil, err
	}
	return w, nil
}

// countUses adds to uses one for each field (or list item, or map entry)
// of a struct type below t.
func countUses(t reflect.Type, uses map[reflect.Type]int) {
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice || ft.Kind() == reflect.Map {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct && ft != reflect.TypeFor[resource.Quantity]() && !isKubernetes(ft) {
			uses[ft]++
			if uses[ft] == 1 {
				countUses(ft, uses)
			}
		}
	}
}

// resolve returns the definition n refers to, or n when it refers to none.
func (w *keyWalker) resolve(n *schemaNode) (*schemaNode, error) {
	if n == nil || n.Ref == "" {
		return n, nil
	}
	def, ok := w.defs[strings.TrimPrefix(n.Ref, "#/$defs/")]
	if !ok {
		return nil, fmt.Errorf("key table: the schema has no definition %s", n.Ref)
	}
	return def, nil
}

// walkTop walks config.Config: a section whose fields are all sections
// (sync) gives one table per field, another section one table, and the
// vCluster sections kept as written one table together.
func (w *keyWalker) walkTop(t reflect.Type, def *schemaNode) error {
	vcluster := &keyGroup{title: "vCluster's other top-level sections"}
	for f := range t.Fields() {
		name, prop, err := field(f, def)
		if err != nil {
			return err
		}
		if name == "" {
			continue
		}
		if isVCluster(f) {
			w.addVCluster(vcluster, []segment{{name: name}}, prop)
			continue
		}
		sub, err := w.resolve(prop)
		if err != nil {
			return err
		}
		if f.Type.Kind() == reflect.Struct && allStructs(f.Type) {
			for sf := range f.Type.Fields() {
				subName, subProp, err := field(sf, sub)
				if err != nil {
					return err
				}
				if subName == "" {
					continue
				}
				g := &keyGroup{title: "`" + name + "." + subName + "`", desc: firstSentence(subProp.Description)}
				w.groups = append(w.groups, g)
				if err := w.walkField(g, sf, []segment{{name: name}}, subProp, ""); err != nil {
					return err
				}
			}
			continue
		}
		g := &keyGroup{title: "`" + name + "`", desc: firstSentence(prop.Description)}
		w.groups = append(w.groups, g)
		if err := w.walkStruct(g, f.Type, sub, []segment{{name: name}}, ""); err != nil {
			return err
		}
	}
	if len(vcluster.rows) > 0 {
		w.groups = append(w.groups, vcluster)
	}
	return nil
}

// allStructs tells whether every exported field of struct t is a struct.
func allStructs(t reflect.Type) bool {
	for f := range t.Fields() {
		if f.IsExported() && f.Type.Kind() != reflect.Struct {
			return false
		}
	}
	return true
}

// field returns the YAML name of f and its property in def, the schema
// definition of f's struct; name is "" for a field the file cannot set.
func field(f reflect.StructField, def *schemaNode) (name string, prop *schemaNode, err error) {
	name, _, _ = strings.Cut(f.Tag.Get("json"), ",")
	if !f.IsExported() || name == "-" || name == "" {
		return "", nil, nil
	}
	if def == nil || def.Properties[name] == nil {
		return "", nil, fmt.Errorf("key table: the schema has no property %q for field %s", name, f.Name)
	}
	return name, def.Properties[name], nil
}

// isVCluster tells whether f is a vCluster key kept as written.
func isVCluster(f reflect.StructField) bool { return f.Tag.Get("config") == "vcluster" }

// walkStruct adds the rows of the fields of struct t, whose definition in
// the schema is def, at path; parentDesc is the description of the key
// that holds it.
func (w *keyWalker) walkStruct(g *keyGroup, t reflect.Type, def *schemaNode, path []segment, parentDesc string) error {
	for f := range t.Fields() {
		name, prop, err := field(f, def)
		if err != nil {
			return err
		}
		if name == "" {
			continue
		}
		if isVCluster(f) {
			w.addVCluster(g, append(slices.Clip(path), segment{name: name}), prop)
			continue
		}
		desc := firstSentence(prop.Description)
		if name == "enabled" && w.uses[t] > 1 && parentDesc != "" {
			desc = parentDesc
		}
		if err := w.walkField(g, f, path, prop, desc); err != nil {
			return err
		}
	}
	return nil
}

// walkField adds the rows of field f of the struct at path; desc overrides
// the field's own description when not "".
func (w *keyWalker) walkField(g *keyGroup, f reflect.StructField, path []segment, prop *schemaNode, desc string) error {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	alias, _ := strings.CutPrefix(f.Tag.Get("config"), "alias=")
	p := append(slices.Clip(path), segment{name: name, alias: alias})
	if desc == "" {
		desc = firstSentence(prop.Description)
	}
	ft := f.Type
	if ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Struct && ft.Elem().NumField() > 0 {
		ft = ft.Elem()
	}
	if typ, ok := userType(ft); ok {
		g.rows = append(g.rows, &keyRow{keys: []string{joinPath(p)}, segments: p, typ: typ,
			def: w.defaultCell(p), desc: desc, patches: ft == reflect.TypeFor[[]config.Patch]()})
		if ft == reflect.TypeFor[[]config.Patch]() && w.items == nil {
			return w.walkItems(prop)
		}
		return nil
	}
	switch {
	case ft.Kind() == reflect.Struct:
		def, err := w.resolve(prop)
		if err != nil {
			return err
		}
		return w.walkStruct(g, ft, def, p, desc)
	case ft.Kind() == reflect.Map && ft.Key().Kind() == reflect.String && ft.Elem().Kind() == reflect.Struct:
		def, err := w.resolve(prop.AdditionalProperties)
		if err != nil {
			return err
		}
		return w.walkStruct(g, ft.Elem(), def, append(p, segment{name: entryPlaceholder(name)}), desc)
	}
	return fmt.Errorf("key table: no user type for %s (%s) at %s", f.Name, f.Type, joinPath(p))
}

// walkItems adds the rows of the keys of a config.Patch, an item of the
// list whose property is prop, once for every such list.
func (w *keyWalker) walkItems(prop *schemaNode) error {
	def, err := w.resolve(prop.Items)
	if err != nil {
		return err
	}
	g := &keyGroup{}
	if err := w.walkStruct(g, reflect.TypeFor[config.Patch](), def, []segment{{name: "translate[]"}}, ""); err != nil {
		return err
	}
	for _, r := range g.rows {
		r.def = none
	}
	w.items = g.rows
	return nil
}

// addVCluster adds the row of the vCluster key at path, kept as written:
// to the row before it when the key has no doc comment of its own (one
// comment above a group of such keys), else as a row of its own.
func (w *keyWalker) addVCluster(g *keyGroup, path []segment, prop *schemaNode) {
	key := joinPath(path)
	if n := len(g.rows); prop.Description == "" && n > 0 && g.rows[n-1].status == statusNoEffect {
		g.rows[n-1].keys = append(g.rows[n-1].keys, key)
		return
	}
	g.rows = append(g.rows, &keyRow{keys: []string{key}, segments: path, typ: "as in vCluster",
		def: none, status: statusNoEffect, desc: firstSentence(prop.Description)})
}

// entryPlaceholder is the path element that stands for any entry of the
// map of objects named name.
func entryPlaceholder(name string) string {
	if name == "customResources" {
		return "<plural>.<group>"
	}
	return "<name>"
}

// isKubernetes tells whether t is a type of the Kubernetes API
// (k8s.io/api/…), which the table names and does not walk.
func isKubernetes(t reflect.Type) bool { return strings.HasPrefix(t.PkgPath(), "k8s.io/api/") }

// userType returns the name a user knows t by, and false for a struct or
// map of objects, whose keys get rows of their own, and for a type the
// table has no name for.
func userType(t reflect.Type) (string, bool) {
	switch {
	case isKubernetes(t):
		return "Kubernetes " + t.Name(), true
	case t.Kind() == reflect.Slice && isKubernetes(t.Elem()):
		return "list of Kubernetes " + t.Elem().Name(), true
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct && t.Elem().Name() != "Patch":
		// A list of clustersync's own objects: their keys.
		var keys []string
		for i := range t.Elem().NumField() {
			if name, _, _ := strings.Cut(t.Elem().Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
				keys = append(keys, name)
			}
		}
		return "list of {" + strings.Join(keys, ", ") + "}", true
	}
	switch t {
	case reflect.TypeFor[resource.Quantity]():
		return "quantity", true
	case reflect.TypeFor[intstr.IntOrString]():
		return "number or percentage", true
	case reflect.TypeFor[*bool]():
		return "boolean", true
	case reflect.TypeFor[config.AutoSwitch]():
		return `true/false/"auto"`, true
	case reflect.TypeFor[config.ImageRef]():
		return "string or {registry, repository, tag}", true
	case reflect.TypeFor[[]config.Patch]():
		return "list of patches", true
	case reflect.TypeFor[*config.PatchLabels]():
		return "empty object {}", true
	case reflect.TypeFor[[]string]():
		return "list of strings", true
	case reflect.TypeFor[map[string]string]():
		return "map of strings", true
	case reflect.TypeFor[map[string]resource.Quantity]():
		return "map of quantities", true
	case reflect.TypeFor[any]():
		return "object, as Kubernetes writes it", true
	case reflect.TypeFor[[]any]():
		return "list of objects, as Kubernetes writes them", true
	}
	switch t.Kind() {
	case reflect.Bool:
		return "boolean", true
	case reflect.String:
		return "string", true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "integer", true
	case reflect.Float32, reflect.Float64:
		return "number", true
	}
	return "", false
}

// defaultCell returns the default of the key at path in config.Default()
// as compact JSON in backticks, or none when it is empty or absent.
func (w *keyWalker) defaultCell(path []segment) string {
	v := w.defaults
	for _, s := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return none
		}
		v = m[s.name]
	}
	switch v := v.(type) {
	case nil:
		return none
	case string:
		if v == "" {
			return none
		}
	case []any:
		if len(v) == 0 {
			return none
		}
	case map[string]any:
		if len(v) == 0 {
			return none
		}
	}
	b, err := json.Marshal(v)
	if err != nil { // a value decoded from JSON always encodes
		panic(err)
	}
	return "`" + string(b) + "`"
}

// setStatuses marks the rows of the keys at the paths of unsupported (as
// runner.Unsupported writes them) and ignored (runner.Ignored), and of
// their children, the others honoured, and the patch items as the lists
// that hold them. It returns an error naming the paths that match no row.
func (w *keyWalker) setStatuses(unsupported, ignored []string) error {
	var errs []error
	mark := func(path, status string) {
		// "sync.toHost.pods.patches (translate)" names key …pods.patches.
		key, _, _ := strings.Cut(path, " ")
		want := strings.Split(key, ".")
		found := false
		for _, g := range w.groups {
			for _, r := range g.rows {
				if r.status == "" && matches(r.segments, want) {
					r.status, found = status, true
				}
			}
		}
		if !found {
			errs = append(errs, fmt.Errorf("key table: %q matches no key of the configuration file", path))
		}
	}
	for _, path := range unsupported {
		mark(path, statusUnsupported)
	}
	for _, path := range ignored {
		mark(path, statusNoEffect)
	}
	var lists []string
	for _, g := range w.groups {
		for _, r := range g.rows {
			if r.status == "" {
				r.status = statusHonoured
			}
			if r.patches && !slices.Contains(lists, r.status) {
				lists = append(lists, r.status)
			}
		}
	}
	itemStatus := "as the list's"
	if len(lists) == 1 {
		itemStatus = lists[0]
	}
	for _, r := range w.items {
		r.status = itemStatus
	}
	return errors.Join(errs...)
}

// matches tells whether the path want (split at dots) is the key of segs
// or one of its parents, an element matching a segment's name or alias.
func matches(segs []segment, want []string) bool {
	if len(want) > len(segs) {
		return false
	}
	for i, e := range want {
		if e != segs[i].name && (segs[i].alias == "" || e != segs[i].alias) {
			return false
		}
	}
	return true
}

// render writes the groups, then the patch items, as Markdown tables.
func (w *keyWalker) render() string {
	var b strings.Builder
	header := "| Key | Type | Default | Status | Description |\n| --- | --- | --- | --- | --- |\n"
	for i, g := range w.groups {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "**%s**", g.title)
		if g.desc != "" {
			fmt.Fprintf(&b, ": %s", g.desc)
		}
		b.WriteString("\n\n" + header)
		for _, r := range g.rows {
			writeRow(&b, r)
		}
	}
	if len(w.items) > 0 {
		b.WriteString("\n**Items of a `translate` (or `patches`) list**, the same in every kind that has one:\n\n")
		b.WriteString(header)
		for _, r := range w.items {
			writeRow(&b, r)
		}
	}
	return b.String()
}

// writeRow writes r as one line of a Markdown table.
func writeRow(b *strings.Builder, r *keyRow) {
	keys := make([]string, len(r.keys))
	for i, k := range r.keys {
		keys[i] = "`" + k + "`"
	}
	key := strings.Join(keys, ", ")
	if alias := r.segments[len(r.segments)-1].alias; alias != "" {
		key += " (or `" + alias + "`)"
	}
	desc := r.desc
	if desc == "" {
		desc = none
	}
	fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", key, cell(r.typ), r.def, r.status, cell(desc))
}

// joinPath writes path as dotted YAML keys.
func joinPath(path []segment) string {
	names := make([]string, len(path))
	for i, s := range path {
		names[i] = s.name
	}
	return strings.Join(names, ".")
}

// cell escapes s for a cell of a Markdown table.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// firstSentence returns the first sentence of a doc comment, its lines
// joined: up to the first period followed by a space and a capital letter,
// so that "e.g. \"5Gi\"" does not end it.
func firstSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	for i := 0; i+2 < len(s); i++ {
		if s[i] == '.' && s[i+1] == ' ' {
			if r, _ := utf8.DecodeRuneInString(s[i+2:]); unicode.IsUpper(r) {
				return s[:i+1]
			}
		}
	}
	return s
}

// spliceKeys returns doc with the text between its key table markers
// replaced by table. It returns an error unless doc holds each marker
// once, on a line of its own, the begin marker first.
func spliceKeys(doc, table string) (string, error) { return splice(doc, beginKeys, endKeys, table) }

// splice returns doc with text between the lines begin and end, which must
// each be in doc once, begin first.
func splice(doc, begin, end, text string) (string, error) {
	_, afterBegin := markerLine(doc, begin)
	endAt, _ := markerLine(doc, end)
	if afterBegin < 0 || endAt < 0 || endAt < afterBegin {
		return "", fmt.Errorf("the generated table's markers are missing, repeated or out of order; want once each, in this order, the lines\n%s\n%s", begin, end)
	}
	return doc[:afterBegin] + "\n" + text + "\n" + doc[endAt:], nil
}

// markerLine returns the offsets in doc of the start of the line that is
// exactly marker and of the line after it, or -1, -1 when there is no such
// line or more than one.
func markerLine(doc, marker string) (start, next int) {
	start, next = -1, -1
	offset := 0
	for line := range strings.Lines(doc) {
		if strings.TrimRight(line, "\r\n") == marker {
			if start >= 0 {
				return -1, -1
			}
			start, next = offset, offset+len(line)
		}
		offset += len(line)
	}
	return start, next
}
