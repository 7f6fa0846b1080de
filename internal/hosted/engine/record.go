package engine

import (
	"fmt"
	"slices"
	"strings"

	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	"github.com/clustersync/clustersync/internal/hosted/managed"
)

// The operator's record of what it applied (status.appliedSpec), of the
// pushes whose outcome the cloud has not reported (status.pendingUpdates)
// and of the fields in conflict (status.conflicts), the same for every
// provider. docs/hosted.md states the rules; package managed holds the
// pure comparisons.

// AppliedOf returns o's status.appliedSpec, or an empty spec, with the
// spec's identity fields (they are never synced).
func AppliedOf[S any, O Object[S]](o O) S {
	var a S
	if p := *o.AppliedSpecRef(); p != nil {
		a = managed.Copy(*p)
	}
	managed.WithIdentity(&a, *o.ConfigSpec())
	return a
}

// MarkApplied records the spec's value at path (a node group or pool just
// created from the spec: "nodeGroups[ng-1]") as applied in o.
func MarkApplied[S any, O Object[S]](o O, path string, opts managed.Options) error {
	a := AppliedOf[S](o)
	if err := managed.MarkApplied(&a, *o.ConfigSpec(), path, opts); err != nil {
		return err
	}
	*o.AppliedSpecRef() = &a
	return nil
}

// AppliedFor returns what o's status records as applied, for deciding on
// config (the management Cluster's config, which o's spec follows): the
// applied spec with config's identity fields, every recorded conflict
// config or o's KeepAnnotation has answered taken as answered
// (answerConflicts), and ready
// reporting whether the record is settled — the operator is active with no
// push pending — so that an upstream value differing from it is an
// outside change, not one of clustersync's own on its way.
func AppliedFor[S any, O Object[S]](o O, config S, opts managed.Options) (applied S, ready bool, err error) {
	if p := *o.AppliedSpecRef(); p != nil {
		applied = managed.Copy(*p)
	}
	managed.WithIdentity(&applied, config)
	rec := o.OperatorRecord()
	if err := answerConflicts(&applied, config, rec.Conflicts, keepsOf(o), opts); err != nil {
		return applied, false, err
	}
	return applied, Settled(rec), nil
}

// Settled reports whether an operator's record is settled: the operator
// is active with no push pending, so that an upstream value differing from
// the applied one is an outside change, not one of clustersync's own on
// its way.
func Settled(rec *hostedv1.OperatorStatus) bool {
	return rec.Phase == hostedv1.PhaseActive && len(rec.PendingUpdates) == 0
}

// keepsOf returns the answers of o's KeepAnnotation; none when it does not
// parse (the management controller copies only answers it parsed, and
// reports a Cluster's that do not parse).
func keepsOf(o interface{ GetAnnotations() map[string]string }) Keeps {
	ks, err := KeepsOf(o.GetAnnotations())
	if err != nil {
		return nil
	}
	return ks
}

// answerConflicts takes the user's answers to the recorded conflicts:
// one keeps answers ("keep my value": the config value, which is the one
// the conflict recorded) and one the user answered by editing the field
// since it was reported (managed.Acknowledge) are both pushed over the
// upstream value the conflict recorded — applied takes that value at the
// conflict's path — unless upstream moved once more, which is a new
// conflict.
func answerConflicts[S any](applied *S, spec S, conflicts []hostedv1.FieldConflict, keeps Keeps, opts managed.Options) error {
	for _, cf := range conflicts {
		if keeps.Answers(cf) {
			if err := managed.SetValue(applied, cf.Path, []byte(cf.Upstream), opts); err != nil {
				return err
			}
			continue
		}
		if _, err := managed.Acknowledge(applied, spec, cf.Path, []byte(cf.Config), []byte(cf.Upstream), opts); err != nil {
			return err
		}
	}
	return nil
}

// recordConflicts renders a plan's conflicts for status.conflicts.
func recordConflicts(cs []managed.Conflict) ([]hostedv1.FieldConflict, error) {
	var out []hostedv1.FieldConflict
	for _, cf := range cs {
		f := hostedv1.FieldConflict{Path: cf.Path}
		for _, v := range []struct {
			to  *string
			val any
		}{{&f.Config, cf.Config}, {&f.Upstream, cf.Upstream}, {&f.Applied, cf.Applied}} {
			raw, err := managed.Render(v.val)
			if err != nil {
				return nil, fmt.Errorf("conflict on %s: %w", cf.Path, err)
			}
			*v.to = string(raw)
		}
		out = append(out, f)
	}
	return out, nil
}

// SameCall returns the first change of ordered and every other change
// group (a provider's CallGroup) puts in the same call, the first first.
func SameCall(ordered []managed.Change, group func(path string) string) []managed.Change {
	first := group(ordered[0].Path)
	var out []managed.Change
	for _, ch := range ordered {
		if group(ch.Path) == first {
			out = append(out, ch)
		}
	}
	return out
}

// pathsOf joins the paths of call's changes for a message.
func pathsOf(call []managed.Change) string {
	var ps []string
	for _, ch := range call {
		ps = append(ps, ch.Path)
	}
	return strings.Join(ps, ", ")
}

// writeAhead records the changes of one call as pending and applied, with
// the values the call sends (target's), before the call is sent.
func writeAhead[S any, O Object[S]](o O, target S, call []managed.Change, opts managed.Options) error {
	applied := AppliedOf[S](o)
	rec := o.OperatorRecord()
	for _, ch := range call {
		value, err := managed.Value(target, ch.Path, opts)
		if err != nil {
			return err
		}
		previous, err := managed.Value(applied, ch.Path, opts)
		if err != nil {
			return err
		}
		if err := managed.MarkApplied(&applied, target, ch.Path, opts); err != nil {
			return err
		}
		rec.PendingUpdates = append(rec.PendingUpdates, hostedv1.PendingUpdate{Path: ch.Path, Value: string(value), Previous: string(previous)})
	}
	*o.AppliedSpecRef() = &applied
	return nil
}

// undo takes back writeAhead after the cloud refused the call (or nothing
// was sent): the applied values return to what they were.
func undo[S any, O Object[S]](o O, call []managed.Change, opts managed.Options) error {
	applied := AppliedOf[S](o)
	rec := o.OperatorRecord()
	var keep []hostedv1.PendingUpdate
	for _, p := range rec.PendingUpdates {
		if !slices.ContainsFunc(call, func(ch managed.Change) bool { return ch.Path == p.Path }) {
			keep = append(keep, p)
			continue
		}
		if err := managed.SetValue(&applied, p.Path, []byte(p.Previous), opts); err != nil {
			return err
		}
	}
	rec.PendingUpdates = keep
	*o.AppliedSpecRef() = &applied
	return nil
}

// OrderBy sorts pushed changes by a provider's rank of each (its update
// order), changes of equal rank keeping their order (field order of the
// spec).
func OrderBy(changes []managed.Change, rank func(managed.Change) int) []managed.Change {
	out := slices.Clone(changes)
	slices.SortStableFunc(out, func(a, b managed.Change) int { return rank(a) - rank(b) })
	return out
}
