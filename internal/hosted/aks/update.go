package aks

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"k8s.io/utils/ptr"

	aksv1 "github.com/clustersync/clustersync/api/aks/v1"
	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	"github.com/clustersync/clustersync/internal/hosted/engine"
	"github.com/clustersync/clustersync/internal/hosted/managed"
)

// Kinds of operations whose resume token is kept as a pending update's
// ID ("KIND:TOKEN"), so that Outcome resumes the SDK's poller of the right
// call.
const (
	opCluster    = "cluster"
	opTags       = "tags"
	opPool       = "pool"
	opPoolDelete = "pooldelete"
)

// Observe reads the cluster, its pools with it (one GET), and builds the
// upstream spec.
func (s *conn) Observe(ctx context.Context) (engine.Observation[aksv1.AKSClusterConfigSpec], error) {
	var obs engine.Observation[aksv1.AKSClusterConfigSpec]
	mc, err := s.get(ctx)
	if err != nil {
		return obs, fmt.Errorf("get cluster %s: %w", s.c.Spec.ClusterName, err)
	}
	if obs.Busy, _ = Busy(mc); !obs.Busy {
		obs.Upstream, err = reading(ctx, s.r.Client, s.c.Spec, s.c, mc)
	}
	return obs, err
}

// Prepare takes a Kubernetes upgrade one minor version at a time.
func (s *conn) Prepare(call []managed.Change, target *aksv1.AKSClusterConfigSpec) error {
	for _, ch := range call {
		if ch.Path != "kubernetesVersion" {
			continue
		}
		current := ptr.Deref(s.mc.Properties.CurrentKubernetesVersion, "")
		if current == "" {
			current = ptr.Deref(s.mc.Properties.KubernetesVersion, "")
		}
		next, err := engine.NextVersion("AKS", current, ptr.Deref(s.c.Spec.KubernetesVersion, ""))
		if err != nil {
			return fmt.Errorf("kubernetesVersion: %w", err)
		}
		if next != "" {
			target.KubernetesVersion = &next
		}
	}
	return nil
}

// Apply sends one call: tags (PATCH updateTags), the cluster's fields (a
// full PUT from this pass's GET), or one pool's creation, change or
// removal; every write carries the eTag this pass read (If-Match), or
// If-None-Match "*" for a new pool. It returns the operation's resume
// token as the pending update's ID.
func (s *conn) Apply(ctx context.Context, call []managed.Change, up, target aksv1.AKSClusterConfigSpec) (string, error) {
	spec, mc := s.c.Spec, s.mc
	var paths []string
	for _, ch := range call {
		paths = append(paths, ch.Path)
	}
	switch group := callGroup(call[0].Path); {
	case group == "tags":
		// No operation ID: the push took effect when Azure shows the tags,
		// so a tag Azure Policy changes back is held as a conflict instead
		// of being pushed for ever (rancher/rancher#37608).
		p, err := s.cs.ManagedClusters.BeginUpdateTags(ctx, spec.ResourceGroup, spec.ClusterName, armcontainerservice.TagsObject{Tags: azureTags(target.Tags)},
			&armcontainerservice.ManagedClustersClientBeginUpdateTagsOptions{IfMatch: mc.ETag})
		_, err = token(opTags, p, err)
		return "", err
	case group == "cluster":
		body := updateCluster(s.cs.SubscriptionID, mc, target, fieldsOf(paths))
		p, err := s.cs.ManagedClusters.BeginCreateOrUpdate(ctx, spec.ResourceGroup, spec.ClusterName, body,
			&armcontainerservice.ManagedClustersClientBeginCreateOrUpdateOptions{IfMatch: mc.ETag})
		return token(opCluster, p, err)
	}
	name, field, _ := splitPoolPath(call[0].Path)
	want := poolNamed(target, name)
	var cur *armcontainerservice.ManagedClusterAgentPoolProfile
	for _, ap := range mc.Properties.AgentPoolProfiles {
		if ap != nil && ptr.Deref(ap.Name, "") == name {
			cur = ap
		}
	}
	switch {
	case want == nil && cur == nil:
		return "", nil // already gone
	case want == nil: // removed from the spec
		p, err := s.cs.AgentPools.BeginDelete(ctx, spec.ResourceGroup, spec.ClusterName, name, &armcontainerservice.AgentPoolsClientBeginDeleteOptions{IfMatch: cur.ETag})
		return token(opPoolDelete, p, err)
	case field == "" || cur == nil: // added to the spec
		body := armcontainerservice.AgentPool{Properties: poolProperties(s.cs.SubscriptionID, spec, *want)}
		p, err := s.cs.AgentPools.BeginCreateOrUpdate(ctx, spec.ResourceGroup, spec.ClusterName, name, body,
			&armcontainerservice.AgentPoolsClientBeginCreateOrUpdateOptions{IfNoneMatch: to.Ptr("*")})
		return token(opPool, p, err)
	}
	p, err := s.cs.AgentPools.BeginCreateOrUpdate(ctx, spec.ResourceGroup, spec.ClusterName, name, updatePool(cur, *want, fieldsOf(paths)),
		&armcontainerservice.AgentPoolsClientBeginCreateOrUpdateOptions{IfMatch: cur.ETag})
	return token(opPool, p, err)
}

// resumable is the part of the SDK's poller Apply keeps.
type resumable interface{ ResumeToken() (string, error) }

// token returns "KIND:resume token" of an operation that was started. A
// refusal because Azure is busy (409) or the resource changed since this
// pass read it (412) is engine.ErrWaiting: the next pass reads it again.
func token[P resumable](kind string, p P, err error) (string, error) {
	var re *azcore.ResponseError
	if errors.As(err, &re) && (re.StatusCode == http.StatusConflict || re.StatusCode == http.StatusPreconditionFailed) {
		return "", fmt.Errorf("%w: %s", engine.ErrWaiting, re.ErrorCode)
	}
	if err != nil {
		return "", err
	}
	t, err := p.ResumeToken()
	if err != nil {
		return "", nil // finished at once: its outcome shows upstream
	}
	return kind + ":" + t, nil
}

// Outcome resumes the SDK's poller of a pending update's operation and
// asks Azure how it ended: "" when it succeeded, else the error.
func (s *conn) Outcome(ctx context.Context, p hostedv1.PendingUpdate) (string, error) {
	kind, tok, _ := strings.Cut(p.UpdateID, ":")
	spec := s.c.Spec
	var err error
	switch kind {
	case opTags:
		err = settle(ctx, func() (poller[armcontainerservice.ManagedClustersClientUpdateTagsResponse], error) {
			return s.cs.ManagedClusters.BeginUpdateTags(ctx, spec.ResourceGroup, spec.ClusterName, armcontainerservice.TagsObject{},
				&armcontainerservice.ManagedClustersClientBeginUpdateTagsOptions{ResumeToken: tok})
		})
	case opCluster:
		err = settle(ctx, func() (poller[armcontainerservice.ManagedClustersClientCreateOrUpdateResponse], error) {
			return s.cs.ManagedClusters.BeginCreateOrUpdate(ctx, spec.ResourceGroup, spec.ClusterName, armcontainerservice.ManagedCluster{},
				&armcontainerservice.ManagedClustersClientBeginCreateOrUpdateOptions{ResumeToken: tok})
		})
	case opPool, opPoolDelete:
		name, _, _ := splitPoolPath(p.Path)
		if kind == opPool {
			err = settle(ctx, func() (poller[armcontainerservice.AgentPoolsClientCreateOrUpdateResponse], error) {
				return s.cs.AgentPools.BeginCreateOrUpdate(ctx, spec.ResourceGroup, spec.ClusterName, name, armcontainerservice.AgentPool{},
					&armcontainerservice.AgentPoolsClientBeginCreateOrUpdateOptions{ResumeToken: tok})
			})
		} else {
			err = settle(ctx, func() (poller[armcontainerservice.AgentPoolsClientDeleteResponse], error) {
				return s.cs.AgentPools.BeginDelete(ctx, spec.ResourceGroup, spec.ClusterName, name,
					&armcontainerservice.AgentPoolsClientBeginDeleteOptions{ResumeToken: tok})
			})
		}
	default:
		return fmt.Sprintf("unknown operation %q", p.UpdateID), nil
	}
	if err != nil {
		var re *azcore.ResponseError
		if errors.As(err, &re) {
			return fmt.Sprintf("AKS operation ended %s (%s)", re.ErrorCode, firstLine(err.Error())), nil
		}
		return fmt.Sprintf("AKS operation: %v", err), nil
	}
	return "", nil
}

// poller is the part of the SDK's runtime.Poller Outcome uses.
type poller[T any] interface {
	Poll(ctx context.Context) (*http.Response, error)
	Done() bool
	Result(ctx context.Context) (T, error)
}

// settle resumes an operation's poller, polls it once and returns its
// error, nil when it succeeded (or still runs: Azure showed the resource
// idle, so its outcome is upstream's).
func settle[T any, P poller[T]](ctx context.Context, resume func() (P, error)) error {
	p, err := resume()
	if err != nil {
		return err
	}
	if !p.Done() {
		if _, err := p.Poll(ctx); err != nil {
			return err
		}
	}
	if !p.Done() {
		return nil
	}
	_, err = p.Result(ctx)
	return err
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "Message:") || strings.HasPrefix(l, "\"message\"") {
			return l
		}
	}
	s, _, _ = strings.Cut(s, "\n")
	return s
}
