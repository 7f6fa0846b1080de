package engine

import (
	"encoding/json"
	"fmt"
	"slices"

	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	"github.com/clustersync/clustersync/internal/hosted/managed"
)

// KeepAnnotation holds the user's "keep my value" answers to conflicts, on
// the management Cluster (where the user, the CLI and the dashboard write
// it) and on its operator object (where the management controller copies
// the answers that still match a recorded conflict, for the engine to
// read). Its value is a JSON object of Keeps:
//
//	{"nodeGroups[workers].desiredSize": {"config": 1, "upstream": 4}}
//
// An entry answers only the conflict recorded at its path with exactly
// those config and upstream values (Keeps.Answers): the config value is
// pushed over the upstream one, as if the user had edited the field.
const KeepAnnotation = "clustersync.io/keep-config"

// Keep is one "keep my value" answer: the config and upstream values
// (JSON, as status.conflicts records them) of the conflict it answers.
type Keep struct {
	// Config is the conflict's config value, the one to push.
	Config json.RawMessage `json:"config"`
	// Upstream is the conflict's upstream value, the one to push over.
	Upstream json.RawMessage `json:"upstream"`
}

// Keeps are the answers of a KeepAnnotation by path.
type Keeps map[string]Keep

// KeepsOf parses the KeepAnnotation of annotations; none when it is
// absent or empty. Errors name the annotation and what is wrong: not a
// JSON object of {"config", "upstream"}, or an entry lacking either value.
func KeepsOf(annotations map[string]string) (Keeps, error) {
	raw := annotations[KeepAnnotation]
	if raw == "" {
		return nil, nil
	}
	var ks Keeps
	if err := json.Unmarshal([]byte(raw), &ks); err != nil {
		return nil, fmt.Errorf("annotation %s: want a JSON object of path: {\"config\": VALUE, \"upstream\": VALUE}: %w", KeepAnnotation, err)
	}
	for path, k := range ks {
		if len(k.Config) == 0 || len(k.Upstream) == 0 {
			return nil, fmt.Errorf("annotation %s: %s: want both \"config\" and \"upstream\"", KeepAnnotation, path)
		}
	}
	return ks, nil
}

// KeepOf is the answer to cf that keeps its config value.
func KeepOf(cf hostedv1.FieldConflict) Keep {
	return Keep{Config: json.RawMessage(cf.Config), Upstream: json.RawMessage(cf.Upstream)}
}

// Answers reports whether ks answers cf: ks has an entry at cf's path with
// cf's config and upstream values (equal as values: key order and spacing
// do not count).
func (ks Keeps) Answers(cf hostedv1.FieldConflict) bool {
	k, ok := ks[cf.Path]
	return ok && managed.SameValue(k.Config, []byte(cf.Config)) && managed.SameValue(k.Upstream, []byte(cf.Upstream))
}

// Split sorts the entries of ks by the conflicts recorded now: live
// answers one of them; gone answers none (the conflict was answered, or
// never was recorded with those values). Either is nil when empty.
func (ks Keeps) Split(conflicts []hostedv1.FieldConflict) (live, gone Keeps) {
	for path, k := range ks {
		to := &gone
		if slices.ContainsFunc(conflicts, func(cf hostedv1.FieldConflict) bool { return cf.Path == path && ks.Answers(cf) }) {
			to = &live
		}
		if *to == nil {
			*to = Keeps{}
		}
		(*to)[path] = k
	}
	return live, gone
}

// Render returns ks as the KeepAnnotation's value, paths sorted; "" when
// ks is empty (the annotation is then removed).
func (ks Keeps) Render() (string, error) {
	if len(ks) == 0 {
		return "", nil
	}
	raw, err := json.Marshal(ks)
	if err != nil {
		return "", fmt.Errorf("annotation %s: %w", KeepAnnotation, err)
	}
	return string(raw), nil
}

// SetOn sets the KeepAnnotation of the object with annotations a (its
// GetAnnotations) to ks, removing it when ks is empty, and returns the
// annotations to set. Errors are Render's.
func (ks Keeps) SetOn(a map[string]string) (map[string]string, error) {
	v, err := ks.Render()
	if err != nil {
		return a, err
	}
	if v == "" {
		delete(a, KeepAnnotation)
		return a, nil
	}
	if a == nil {
		a = map[string]string{}
	}
	a[KeepAnnotation] = v
	return a, nil
}
