package eks

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	"github.com/clustersync/clustersync/internal/hosted/managed"
)

// The operator's record of what it applied (status.appliedSpec), of the
// pushes whose outcome EKS has not reported (status.pendingUpdates) and of
// the fields in conflict (status.conflicts). docs/hosted.md states the
// rules; package managed holds the pure comparisons.

// appliedOf returns status.appliedSpec, or an empty spec, with the spec's
// identity fields (they are never synced).
func appliedOf(c *eksv1.EKSClusterConfig) eksv1.EKSClusterConfigSpec {
	var a eksv1.EKSClusterConfigSpec
	if c.Status.AppliedSpec != nil {
		a = *c.Status.AppliedSpec.DeepCopy()
	}
	withIdentity(&a, c.Spec)
	return a
}

// withIdentity sets the identity fields of s to spec's.
func withIdentity(s *eksv1.EKSClusterConfigSpec, spec eksv1.EKSClusterConfigSpec) {
	s.DisplayName, s.Region = spec.DisplayName, spec.Region
	s.AmazonCredentialSecret, s.Imported = spec.AmazonCredentialSecret, spec.Imported
}

// createdApplied is the applied spec of a cluster CreateCluster was just
// sent for: the updatable fields the request carried (CreateClusterInput).
// Node groups are recorded as each is created.
func createdApplied(spec eksv1.EKSClusterConfigSpec) *eksv1.EKSClusterConfigSpec {
	s := spec.DeepCopy()
	return &eksv1.EKSClusterConfigSpec{
		DisplayName: s.DisplayName, Region: s.Region, AmazonCredentialSecret: s.AmazonCredentialSecret, Imported: s.Imported,
		KubernetesVersion: s.KubernetesVersion, Tags: s.Tags, LoggingTypes: s.LoggingTypes,
		PublicAccess: s.PublicAccess, PrivateAccess: s.PrivateAccess, PublicAccessSources: s.PublicAccessSources,
	}
}

// markCreated records node group ng, just created from the spec, as
// applied.
func markCreated(c *eksv1.EKSClusterConfig, ng string) error {
	a := appliedOf(c)
	if err := managed.MarkApplied(&a, c.Spec, "nodeGroups["+ng+"]", ManagedOptions()); err != nil {
		return err
	}
	c.Status.AppliedSpec = &a
	return nil
}

// settlePending decides the outcome of every push in
// status.pendingUpdates, now that EKS is idle, and empties the list. A
// push with an update ID took effect when EKS reports that update
// Successful (finished holds the updates seen finishing in this pass;
// others are described); one without took effect when upstream shows its
// value. A push that did not take effect gets its previous applied value
// back, so that it is neither taken for an outside change nor lost: the
// spec still differs from applied, and the next plan pushes it again. The
// returned messages name each such field.
func settlePending(ctx context.Context, api API, c *eksv1.EKSClusterConfig, up eksv1.EKSClusterConfigSpec, finished map[string]*ekstypes.Update, applied *eksv1.EKSClusterConfigSpec) ([]string, error) {
	var failures []string
	for _, p := range c.Status.PendingUpdates {
		var failed string
		if p.UpdateID != "" {
			u, ok := finished[p.UpdateID]
			if !ok {
				in := &eks.DescribeUpdateInput{Name: aws.String(c.Spec.DisplayName), UpdateId: aws.String(p.UpdateID)}
				if ng, _, ok := splitNodegroupPath(p.Path); ok {
					in.NodegroupName = aws.String(ng) // EKS finds node group updates only so
				}
				out, err := api.DescribeUpdate(ctx, in)
				if err != nil {
					return nil, fmt.Errorf("describe update %s of %s: %w", p.UpdateID, p.Path, err)
				}
				u = out.Update
			}
			if u.Status != ekstypes.UpdateStatusSuccessful {
				failed = fmt.Sprintf("%s: EKS update %s ended %s%s", p.Path, p.UpdateID, u.Status, updateErrors(u.Errors))
			}
		} else {
			landed, err := managed.Landed(up, p.Path, []byte(p.Value), ManagedOptions())
			if err != nil {
				return nil, err
			}
			if !landed {
				now, _ := managed.Value(up, p.Path, ManagedOptions())
				failed = fmt.Sprintf("%s: pushed %s but EKS reports %s", p.Path, p.Value, now)
			}
		}
		if failed == "" {
			continue
		}
		failures = append(failures, failed)
		if err := managed.SetValue(applied, p.Path, []byte(p.Previous), ManagedOptions()); err != nil {
			return nil, err
		}
	}
	c.Status.PendingUpdates = nil
	return failures, nil
}

func updateErrors(errs []ekstypes.ErrorDetail) string {
	var out []string
	for _, e := range errs {
		out = append(out, fmt.Sprintf("%s: %s", e.ErrorCode, aws.ToString(e.ErrorMessage)))
	}
	if len(out) == 0 {
		return ""
	}
	return " (" + strings.Join(out, "; ") + ")"
}

// answerConflicts applies managed.Acknowledge to every recorded conflict:
// a field the user edited since its conflict was reported is pushed over
// the upstream value the conflict recorded.
func answerConflicts(applied *eksv1.EKSClusterConfigSpec, spec eksv1.EKSClusterConfigSpec, conflicts []eksv1.FieldConflict) error {
	for _, cf := range conflicts {
		if _, err := managed.Acknowledge(applied, spec, cf.Path, []byte(cf.Config), []byte(cf.Upstream), ManagedOptions()); err != nil {
			return err
		}
	}
	return nil
}

// recordConflicts renders a plan's conflicts for status.conflicts.
func recordConflicts(cs []managed.Conflict) ([]eksv1.FieldConflict, error) {
	var out []eksv1.FieldConflict
	for _, cf := range cs {
		f := eksv1.FieldConflict{Path: cf.Path}
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

// callGroup names the EKS call a pushed field is sent with: fields that
// one call sets together share a group (endpoint access; a node group's
// scaling; a node group's managed launch template version).
func callGroup(path string) string {
	switch path {
	case "publicAccess", "privateAccess":
		return "endpointAccess"
	}
	if name, field, ok := splitNodegroupPath(path); ok {
		switch {
		case field == "":
		case field == "desiredSize" || field == "minSize" || field == "maxSize":
			return "nodeGroups[" + name + "].scaling"
		case isTemplateField(field):
			return "nodeGroups[" + name + "].template"
		}
	}
	return path
}

// sameCall returns the first change of ordered and every other change
// sent with the same call (callGroup), the first first.
func sameCall(ordered []managed.Change) []managed.Change {
	group := callGroup(ordered[0].Path)
	var out []managed.Change
	for _, ch := range ordered {
		if callGroup(ch.Path) == group {
			out = append(out, ch)
		}
	}
	return out
}

func pathsOf(call []managed.Change) string {
	var ps []string
	for _, ch := range call {
		ps = append(ps, ch.Path)
	}
	return strings.Join(ps, ", ")
}

// writeAhead records the changes of one call as pending and applied, with
// the values the call sends (target's), before the call is sent.
func writeAhead(c *eksv1.EKSClusterConfig, target eksv1.EKSClusterConfigSpec, call []managed.Change) error {
	o := ManagedOptions()
	applied := appliedOf(c)
	for _, ch := range call {
		value, err := managed.Value(target, ch.Path, o)
		if err != nil {
			return err
		}
		previous, err := managed.Value(applied, ch.Path, o)
		if err != nil {
			return err
		}
		if err := managed.MarkApplied(&applied, target, ch.Path, o); err != nil {
			return err
		}
		c.Status.PendingUpdates = append(c.Status.PendingUpdates, eksv1.PendingUpdate{Path: ch.Path, Value: string(value), Previous: string(previous)})
	}
	c.Status.AppliedSpec = &applied
	return nil
}

// undo takes back writeAhead after EKS refused the call (or nothing was
// sent): the applied values return to what they were.
func undo(c *eksv1.EKSClusterConfig, call []managed.Change) error {
	applied := appliedOf(c)
	var keep []eksv1.PendingUpdate
	for _, p := range c.Status.PendingUpdates {
		if !slices.ContainsFunc(call, func(ch managed.Change) bool { return ch.Path == p.Path }) {
			keep = append(keep, p)
			continue
		}
		if err := managed.SetValue(&applied, p.Path, []byte(p.Previous), ManagedOptions()); err != nil {
			return err
		}
	}
	c.Status.PendingUpdates = keep
	c.Status.AppliedSpec = &applied
	return nil
}

// AppliedFor returns what op's status records as applied, for deciding on
// config (the management Cluster's spec.eksConfig, which op's spec follows):
// status.appliedSpec with config's identity fields, every recorded
// conflict config has answered taken as answered (answerConflicts), and
// ready reporting whether the record is settled — the operator is active
// with no push pending — so that an upstream value differing from it is
// an outside change, not one of clustersync's own on its way.
func AppliedFor(op *eksv1.EKSClusterConfig, config eksv1.EKSClusterConfigSpec) (applied eksv1.EKSClusterConfigSpec, ready bool, err error) {
	if op.Status.AppliedSpec != nil {
		applied = *op.Status.AppliedSpec.DeepCopy()
	}
	withIdentity(&applied, config)
	if err := answerConflicts(&applied, config, op.Status.Conflicts); err != nil {
		return applied, false, err
	}
	ready = op.Status.Phase == eksv1.PhaseActive && len(op.Status.PendingUpdates) == 0
	return applied, ready, nil
}
