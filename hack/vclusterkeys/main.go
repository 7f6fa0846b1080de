// Command vclusterkeys writes internal/virtual/config/vcluster-keys.json:
// every key of every vCluster release from 0.20.0 on, with its JSON
// Schema type and the releases that have it, and the default each release
// gives it. It reads chart/values.schema.json and chart/values.yaml at each
// release tag of a clone of https://github.com/loft-sh/vcluster:
//
//	git clone https://github.com/loft-sh/vcluster /tmp/vcluster
//	go run ./hack/vclusterkeys -repo /tmp/vcluster -out internal/virtual/config/vcluster-keys.json
//
// The releases are the tags vX.Y.Z from v0.20.0 on, and for a minor
// version without such a tag yet its newest release candidate (vX.Y.0-rc.N).
// A key is a dotted path down the schema's properties to a leaf: a value
// that is not an object with properties (a string, a list, a free-form
// object); "*" stands for the entries of a map (additionalProperties).
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

func main() {
	repo := flag.String("repo", "", "a git clone of github.com/loft-sh/vcluster with its tags")
	out := flag.String("out", "internal/virtual/config/vcluster-keys.json", "the file to write")
	flag.Parse()
	if *repo == "" {
		fmt.Fprintln(os.Stderr, "vclusterkeys: -repo is required")
		os.Exit(2)
	}
	data, err := generate(*repo)
	if err != nil {
		fmt.Fprintln(os.Stderr, "vclusterkeys:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, data, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "vclusterkeys:", err)
		os.Exit(1)
	}
}

// schema is the part of a JSON Schema node the walk reads.
type schema struct {
	Ref                  string             `json:"$ref"`
	Type                 any                `json:"type"`
	Properties           map[string]*schema `json:"properties"`
	AdditionalProperties json.RawMessage    `json:"additionalProperties"`
	PatternProperties    map[string]*schema `json:"patternProperties"`
	AnyOf                []*schema          `json:"anyOf"`
	OneOf                []*schema          `json:"oneOf"`
	Defs                 map[string]*schema `json:"$defs"`
}

// release is what one release says of its keys.
type release struct {
	tag      string
	keys     map[string][]string // key → its types
	defaults map[string]string   // concrete path (segments joined by sep) → the default's JSON
}

func generate(repo string) ([]byte, error) {
	tags, err := releases(repo)
	if err != nil {
		return nil, err
	}
	var rels []release
	for _, tag := range tags {
		r, err := readRelease(repo, tag)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", tag, err)
		}
		rels = append(rels, r)
	}
	return render(rels), nil
}

var (
	finalTag = regexp.MustCompile(`^v0\.(\d+)\.(\d+)$`)
	rcTag    = regexp.MustCompile(`^v0\.(\d+)\.0-rc\.(\d+)$`)
)

// releases returns the release tags of repo, oldest first.
func releases(repo string) ([]string, error) {
	out, err := exec.Command("git", "-C", repo, "tag").Output()
	if err != nil {
		return nil, fmt.Errorf("git tag: %w", err)
	}
	type version struct{ minor, patch, rc int } // rc -1: a final release
	var all []version
	hasFinal := map[int]bool{}
	newestRC := map[int]int{}
	for tag := range strings.FieldsSeq(string(out)) {
		if m := finalTag.FindStringSubmatch(tag); m != nil {
			minor, _ := strconv.Atoi(m[1])
			patch, _ := strconv.Atoi(m[2])
			if minor >= 20 {
				all = append(all, version{minor, patch, -1})
				hasFinal[minor] = true
			}
		} else if m := rcTag.FindStringSubmatch(tag); m != nil {
			minor, _ := strconv.Atoi(m[1])
			rc, _ := strconv.Atoi(m[2])
			if old, ok := newestRC[minor]; minor >= 20 && (!ok || rc > old) {
				newestRC[minor] = rc
			}
		}
	}
	for minor, rc := range newestRC {
		if !hasFinal[minor] {
			all = append(all, version{minor, 0, rc})
		}
	}
	slices.SortFunc(all, func(a, b version) int {
		if a.minor != b.minor {
			return a.minor - b.minor
		}
		return a.patch - b.patch
	})
	var tags []string
	for _, v := range all {
		tag := fmt.Sprintf("v0.%d.%d", v.minor, v.patch)
		if v.rc >= 0 {
			tag += fmt.Sprintf("-rc.%d", v.rc)
		}
		tags = append(tags, tag)
	}
	if len(tags) == 0 {
		return nil, fmt.Errorf("no release tags from v0.20.0 on in %s", repo)
	}
	return tags, nil
}

func gitShow(repo, tag, path string) ([]byte, error) {
	out, err := exec.Command("git", "-C", repo, "show", tag+":"+path).Output()
	if err != nil {
		return nil, fmt.Errorf("git show %s:%s: %w", tag, path, err)
	}
	return out, nil
}

func readRelease(repo, tag string) (release, error) {
	r := release{tag: tag, keys: map[string][]string{}, defaults: map[string]string{}}
	raw, err := gitShow(repo, tag, "chart/values.schema.json")
	if err != nil {
		return r, err
	}
	var root schema
	if err := json.Unmarshal(raw, &root); err != nil {
		return r, fmt.Errorf("values.schema.json: %w", err)
	}
	walkSchema(&root, root.Defs, "", r.keys, map[string]bool{})
	raw, err = gitShow(repo, tag, "chart/values.yaml")
	if err != nil {
		return r, err
	}
	var values any
	if err := yaml.Unmarshal(raw, &values); err != nil {
		return r, fmt.Errorf("values.yaml: %w", err)
	}
	walkValues(values, "", r)
	return r, nil
}

// walkSchema records the leaves below s at path in keys, following $ref
// into defs (a definition that refers to itself ends the path).
func walkSchema(s *schema, defs map[string]*schema, path string, keys map[string][]string, inside map[string]bool) {
	if s.Ref != "" {
		name := s.Ref[strings.LastIndex(s.Ref, "/")+1:]
		d, ok := defs[name]
		if !ok || inside[name] {
			addKey(keys, path, nil)
			return
		}
		inside[name] = true
		walkSchema(d, defs, path, keys, inside)
		delete(inside, name)
		return
	}
	var entries []*schema // the schemas of a map's entries
	if len(s.AdditionalProperties) > 0 && s.AdditionalProperties[0] == '{' {
		e := &schema{}
		if err := json.Unmarshal(s.AdditionalProperties, e); err == nil && !isEmpty(e) {
			entries = append(entries, e)
		}
	}
	for _, e := range s.PatternProperties {
		entries = append(entries, e)
	}
	branches := append(slices.Clone(s.AnyOf), s.OneOf...)
	if len(s.Properties) == 0 && len(entries) == 0 && len(branches) == 0 {
		addKey(keys, path, types(s))
		return
	}
	for name, p := range s.Properties {
		walkSchema(p, defs, join(path, name), keys, inside)
	}
	for _, e := range entries {
		walkSchema(e, defs, join(path, "*"), keys, inside)
	}
	for _, b := range branches {
		walkSchema(b, defs, path, keys, inside)
	}
}

func isEmpty(s *schema) bool {
	return s.Ref == "" && s.Type == nil && len(s.Properties) == 0 && len(s.PatternProperties) == 0 && len(s.AnyOf) == 0 && len(s.OneOf) == 0
}

// types returns the JSON types a leaf takes, nil for any.
func types(s *schema) []string {
	switch t := s.Type.(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if x, ok := x.(string); ok {
				out = append(out, x)
			}
		}
		return out
	}
	return nil
}

func addKey(keys map[string][]string, path string, ts []string) {
	if path == "" {
		return
	}
	old, seen := keys[path]
	switch {
	case !seen:
		keys[path] = ts
	case old == nil || ts == nil:
		keys[path] = nil // any
	default:
		for _, t := range ts {
			if !slices.Contains(old, t) {
				old = append(old, t)
			}
		}
		slices.Sort(old)
		keys[path] = old
	}
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// sep joins the segments of a concrete path in release.defaults: map keys
// (annotations, quotas) have dots of their own.
const sep = "\x00"

// walkValues records the defaults of values.yaml: every value that is not
// a non-empty object, at its concrete path.
func walkValues(v any, path string, r release) {
	if m, ok := v.(map[string]any); ok && len(m) > 0 {
		for k, x := range m {
			p := k
			if path != "" {
				p = path + sep + k
			}
			walkValues(x, p, r)
		}
		return
	}
	if path == "" {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	r.defaults[path] = string(b)
}

// render writes the JSON file, one key and one default per line.
func render(rels []release) []byte {
	var b bytes.Buffer
	tags := make([]string, len(rels))
	for i, r := range rels {
		tags[i] = r.tag
	}
	tagsJSON, _ := json.Marshal(tags)
	fmt.Fprintf(&b, "{\n\"source\": \"chart/values.schema.json and chart/values.yaml of https://github.com/loft-sh/vcluster at each release tag; written by go run ./hack/vclusterkeys\",\n")
	fmt.Fprintf(&b, "\"releases\": %s,\n\"keys\": [\n", tagsJSON)
	allKeys := map[string]bool{}
	for _, r := range rels {
		for k := range r.keys {
			allKeys[k] = true
		}
	}
	lines := []string{}
	for _, k := range slices.Sorted(maps.Keys(allKeys)) {
		ts, anyType := []string{}, false
		var in []int
		for i, r := range rels {
			t, ok := r.keys[k]
			if !ok {
				continue
			}
			in = append(in, i)
			anyType = anyType || t == nil
			for _, x := range t {
				if !slices.Contains(ts, x) {
					ts = append(ts, x)
				}
			}
		}
		if anyType {
			ts = []string{}
		}
		slices.Sort(ts)
		tj, _ := json.Marshal(ts)
		pj, _ := json.Marshal(k)
		rj, _ := json.Marshal(ranges(tags, in))
		lines = append(lines, fmt.Sprintf("{\"path\": %s, \"types\": %s, \"in\": %s}", pj, tj, rj))
	}
	b.WriteString(strings.Join(lines, ",\n"))
	b.WriteString("\n],\n\"defaults\": [\n")
	lines = lines[:0]
	allPaths := map[string]bool{}
	for _, r := range rels {
		for p := range r.defaults {
			allPaths[p] = true
		}
	}
	for _, p := range slices.Sorted(maps.Keys(allPaths)) {
		byValue := map[string][]int{}
		for i, r := range rels {
			if v, ok := r.defaults[p]; ok {
				byValue[v] = append(byValue[v], i)
			}
		}
		for _, v := range slices.SortedFunc(maps.Keys(byValue), func(a, b string) int { return byValue[a][0] - byValue[b][0] }) {
			pj, _ := json.Marshal(strings.Split(p, sep))
			rj, _ := json.Marshal(ranges(tags, byValue[v]))
			lines = append(lines, fmt.Sprintf("{\"path\": %s, \"value\": %s, \"in\": %s}", pj, v, rj))
		}
	}
	b.WriteString(strings.Join(lines, ",\n"))
	b.WriteString("\n]\n}\n")
	return b.Bytes()
}

// ranges writes the release indices in (ascending) as first and last tags
// of each run: ["v0.20.0", "v0.29.3", "v0.31.0", "v0.37.0-rc.1"].
func ranges(tags []string, in []int) []string {
	var out []string
	for i := 0; i < len(in); {
		j := i
		for j+1 < len(in) && in[j+1] == in[j]+1 {
			j++
		}
		out = append(out, tags[in[i]], tags[in[j]])
		i = j + 1
	}
	return out
}
