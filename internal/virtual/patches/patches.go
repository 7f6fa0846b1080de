// Package patches applies the patches of vCluster's sync configuration
// (`sync.toHost.<kind>.patches`, also spelled `translate`) to the objects
// the syncer writes: a JavaScript expression on a field on the way to the
// host and its reverse on the way back, a field treated as a reference to
// another object (its name translated like the syncer's own references), or
// a field treated as a label selector. The rules are vCluster's
// (https://www.vcluster.com/docs/vcluster/configure/vcluster-yaml/sync/to-host/advanced/patches);
// vCluster ships expressions and references only in its paid edition.
//
// Everything here is pure: objects are JSON values
// (map[string]any as k8s.io/apimachinery's unstructured holds them), and
// names are translated by a translate.Translator.
package patches

import (
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/mapping"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// Set is the compiled patch list of one kind. A nil *Set has no patches.
type Set struct {
	section string
	patches []patch
	limits  Limits
}

// patch is one compiled entry.
type patch struct {
	index               int
	path                Path
	expression, reverse *Expression
	reference           *config.PatchReference
	labels              bool
}

// Compile checks and compiles the patches ps of one kind; section is their
// key in the configuration file (e.g. "sync.toHost.pods.patches"), used in
// messages. Each patch needs a path and exactly one way to change it:
// expression and/or reverseExpression, reference, or labels. It returns
// nil, nil for an empty list, and otherwise every problem joined, each
// naming its key (section[i].path, section[i].expression, …). Evaluations
// run within lim.
func Compile(section string, ps []config.Patch, lim Limits) (*Set, error) {
	if len(ps) == 0 {
		return nil, nil
	}
	set := &Set{section: section, limits: lim}
	var errs []error
	for i, p := range ps {
		key := fmt.Sprintf("%s[%d]", section, i)
		c := patch{index: i, reference: p.Reference, labels: p.Labels != nil}
		var err error
		if c.path, err = ParsePath(p.Path); err != nil {
			errs = append(errs, fmt.Errorf("%s.path: %w", key, err))
		}
		if p.Expression != "" {
			if c.expression, err = CompileExpression(p.Expression); err != nil {
				errs = append(errs, fmt.Errorf("%s.expression: %w", key, err))
			}
		}
		if p.ReverseExpression != "" {
			if c.reverse, err = CompileExpression(p.ReverseExpression); err != nil {
				errs = append(errs, fmt.Errorf("%s.reverseExpression: %w", key, err))
			}
		}
		modes := 0
		if p.Expression != "" || p.ReverseExpression != "" {
			modes++
		}
		if p.Reference != nil {
			modes++
			if p.Reference.Kind == "" && p.Reference.KindPath == "" {
				errs = append(errs, fmt.Errorf("%s.reference: kind or kindPath is required", key))
			}
		}
		if p.Labels != nil {
			modes++
		}
		if modes != 1 {
			errs = append(errs, fmt.Errorf("%s: needs exactly one of expression/reverseExpression, reference and labels, has %d", key, modes))
		}
		set.patches = append(set.patches, c)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return set, nil
}

// Error is a patch that could not be applied to an object: the object is
// then not synced.
type Error struct {
	// Key is the patch's key in the configuration file, e.g.
	// "sync.toHost.pods.patches[0]"; Path the field it targets.
	Key, Path string
	// Object names the virtual object, "namespace/name".
	Object string
	// Location is the concrete field (Path with list indexes), Direction
	// "expression" or "reverseExpression" (or "reference", "labels").
	Location, Direction string
	Err                 error
}

// Error implements error.
func (e *Error) Error() string {
	return fmt.Sprintf("%s (path %s) on %s: %s at %s: %v", e.Key, e.Path, e.Object, e.Direction, e.Location, e.Err)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

func (s *Set) fail(p patch, vref translate.VirtualRef, loc Location, dir string, err error) *Error {
	obj := vref.Name
	if vref.Namespace != "" {
		obj = vref.Namespace + "/" + vref.Name
	}
	return &Error{Key: fmt.Sprintf("%s[%d]", s.section, p.index), Path: p.path.String(), Object: obj,
		Location: loc.String(), Direction: dir, Err: err}
}

// HasReferences reports whether any patch treats a field as a reference.
func (s *Set) HasReferences() bool {
	if s == nil {
		return false
	}
	for _, p := range s.patches {
		if p.reference != nil {
			return true
		}
	}
	return false
}

// ToHost applies the patches, in order, to host, the host object as the
// syncer built it from the virtual object vref (modified in place):
// an expression replaces each matched value by its result (null or
// undefined removes a map key); a reference's name becomes its host name
// (tr.HostName, the namespace from namespacePath or vref's) and a
// namespace at namespacePath the host namespace; a label selector (a map
// of labels, or {matchLabels, matchExpressions}) is translated as the
// syncer translates Service and PodDisruptionBudget selectors. A path that
// matches nothing changes nothing. It returns an *Error for the first
// patch that fails; host is then partly patched and must not be written.
func (s *Set) ToHost(host map[string]any, vref translate.VirtualRef, tr translate.Translator) error {
	if s == nil {
		return nil
	}
	for _, p := range s.patches {
		for _, loc := range p.path.Match(host) {
			v, _ := loc.Get(host)
			var (
				out any
				err error
				dir string
			)
			switch {
			case p.expression != nil:
				dir = "expression"
				out, err = p.expression.Eval(v, s.limits)
			case p.reference != nil:
				dir = "reference"
				out, err = hostReference(v, p.reference, vref.Namespace, tr)
			case p.labels:
				dir = "labels"
				out, err = hostSelector(v, vref.Namespace, tr)
			default: // only a reverseExpression
				continue
			}
			if err != nil {
				return s.fail(p, vref, loc, dir, err)
			}
			loc.Set(host, out, out == nil)
		}
	}
	return nil
}

// ToVirtual undoes the patches on host, in reverse order, so that host can
// be compared with and copied back to the virtual object virtual (neither
// is modified; the result is a copy of host): a value with a
// reverseExpression becomes its result; any other patched value becomes
// the virtual object's value at the same place (removed when the virtual
// object has none, put back when a patch removed it from the host), so a
// host-side edit of a field without a reverseExpression does not flow
// back. It returns an *Error for the
// first reverseExpression that fails.
func (s *Set) ToVirtual(host, virtual map[string]any, vref translate.VirtualRef) (map[string]any, error) {
	out := runtime.DeepCopyJSON(host)
	if s == nil {
		return out, nil
	}
	for i := len(s.patches) - 1; i >= 0; i-- {
		p := s.patches[i]
		for _, loc := range p.path.Match(out) {
			if p.reverse != nil {
				v, _ := loc.Get(out)
				r, err := p.reverse.Eval(v, s.limits)
				if err != nil {
					return nil, s.fail(p, vref, loc, "reverseExpression", err)
				}
				loc.Set(out, r, r == nil)
				continue
			}
			if v, ok := loc.Get(virtual); ok {
				loc.Set(out, runtime.DeepCopyJSONValue(v), false)
			} else {
				loc.Set(out, nil, true)
			}
		}
		if p.reverse != nil {
			continue
		}
		// A value the patch removed on the host is the virtual one too.
		for _, loc := range p.path.Match(virtual) {
			if _, ok := loc.Get(out); !ok {
				v, _ := loc.Get(virtual)
				loc.Put(out, runtime.DeepCopyJSONValue(v))
			}
		}
	}
	return out, nil
}

// References lists the objects the reference patches name in virtual, the
// virtual object of namespace namespace (for selective sync: a Secret
// named this way counts as used).
func (s *Set) References(virtual map[string]any, namespace string) []mapping.Ref {
	if s == nil {
		return nil
	}
	var out []mapping.Ref
	for _, p := range s.patches {
		if p.reference == nil {
			continue
		}
		for _, loc := range p.path.Match(virtual) {
			v, _ := loc.Get(virtual)
			if r, ok := readReference(v, p.reference, namespace); ok {
				out = append(out, mapping.Ref{Kind: r.kind, Namespace: r.namespace, Name: r.name})
			}
		}
	}
	return out
}

// reference is what a reference patch reads at one place.
type reference struct{ kind, namespace, name string }

// readReference reads the reference at v: v is the name itself when
// namePath is "", else an object holding name, kind, apiVersion and
// namespace at the relative paths.
func readReference(v any, ref *config.PatchReference, namespace string) (reference, bool) {
	r := reference{kind: ref.Kind, namespace: namespace}
	if k, ok := Relative(v, ref.KindPath); ref.KindPath != "" && ok {
		if ks, ok := k.(string); ok && ks != "" {
			r.kind = ks
		}
	}
	if ref.NamespacePath != "" {
		if n, ok := Relative(v, ref.NamespacePath); ok {
			if ns, ok := n.(string); ok && ns != "" {
				r.namespace = ns
			}
		}
	}
	n, ok := Relative(v, ref.NamePath)
	if !ok {
		return r, false
	}
	r.name, ok = n.(string)
	return r, ok && r.name != ""
}

// hostReference rewrites the reference at v to the host's names.
func hostReference(v any, ref *config.PatchReference, namespace string, tr translate.Translator) (any, error) {
	r, ok := readReference(v, ref, namespace)
	if !ok {
		if ref.NamePath == "" {
			return nil, fmt.Errorf("the value is %s, not an object name", describe(v))
		}
		return v, nil // no name at namePath: nothing to rewrite
	}
	host := tr.HostName(r.name, r.namespace)
	if ref.NamePath == "" {
		return host, nil
	}
	out := runtime.DeepCopyJSONValue(v).(map[string]any)
	setRelative(out, ref.NamePath, host)
	if ref.NamespacePath != "" {
		setRelative(out, ref.NamespacePath, tr.HostNamespace)
	}
	return out, nil
}

// setRelative sets the existing field at rel below obj.
func setRelative(obj map[string]any, rel, value string) {
	p, err := ParsePath(rel)
	if err != nil {
		return
	}
	for _, loc := range p.Match(obj) {
		loc.Set(obj, value, false)
	}
}

// hostSelector translates the label selector at v.
func hostSelector(v any, namespace string, tr translate.Translator) (any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the value is %s, not a label selector", describe(v))
	}
	_, hasLabels := m["matchLabels"]
	_, hasExprs := m["matchExpressions"]
	if hasLabels || hasExprs {
		var sel metav1.LabelSelector
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &sel); err != nil {
			return nil, fmt.Errorf("not a label selector: %w", err)
		}
		return runtime.DefaultUnstructuredConverter.ToUnstructured(tr.HostLabelSelector(&sel, namespace))
	}
	labels := make(map[string]string, len(m))
	for k, x := range m {
		s, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("label %q is %s, not a string", k, describe(x))
		}
		labels[k] = s
	}
	out := map[string]any{}
	for k, x := range tr.HostSelector(labels, namespace) {
		out[k] = x
	}
	return out, nil
}

// describe names the JSON type of v for messages.
func describe(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64, float64, int:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
