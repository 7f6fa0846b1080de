package eks

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	"github.com/clustersync/clustersync/internal/hosted/engine"
	"github.com/clustersync/clustersync/internal/hosted/managed"
)

// Observe describes the cluster, its node groups and its EBS CSI driver
// add-on, deletes the managed launch template versions no node group uses
// any more, and builds the upstream (reading, as Management.Describe
// does). The cluster is busy while EKS is changing something: the
// cluster is UPDATING, an update is InProgress, or a node group is not
// ACTIVE (eks-operator#752: EKS stays ACTIVE for a while after an update
// starts, hence the ListUpdates check). Finished holds the updates seen
// finishing in this pass, by ID.
func (s *conn) Observe(ctx context.Context) (engine.Observation[eksv1.EKSClusterConfigSpec], error) {
	var obs engine.Observation[eksv1.EKSClusterConfigSpec]
	c, api := s.c, s.cs.EKS
	name := aws.String(c.Spec.DisplayName)
	cl, ngs, err := Describe(ctx, api, c.Spec.DisplayName)
	if err != nil {
		return obs, err
	}
	s.cl = cl
	obs.Busy = cl.Status != ekstypes.ClusterStatusActive
	for _, ng := range ngs {
		obs.Busy = obs.Busy || ng.Status != ekstypes.NodegroupStatusActive
	}
	var ids []string
	for pages := eks.NewListUpdatesPaginator(api, &eks.ListUpdatesInput{Name: name}); pages.HasMorePages(); {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return obs, fmt.Errorf("list updates of %s: %w", c.Spec.DisplayName, err)
		}
		ids = append(ids, page.UpdateIds...)
	}
	// Forget completed updates EKS no longer lists, so the list stays as
	// short as EKS's history.
	c.Status.CompletedUpdateIDs = slices.DeleteFunc(c.Status.CompletedUpdateIDs, func(id string) bool { return !slices.Contains(ids, id) })
	obs.Finished = map[string]string{}
	for _, id := range ids {
		if slices.Contains(c.Status.CompletedUpdateIDs, id) {
			continue
		}
		u, err := api.DescribeUpdate(ctx, &eks.DescribeUpdateInput{Name: name, UpdateId: aws.String(id)})
		if err != nil {
			return obs, fmt.Errorf("describe update %s: %w", id, err)
		}
		if u.Update.Status == ekstypes.UpdateStatusInProgress {
			obs.Busy = true
		} else {
			c.Status.CompletedUpdateIDs = append(c.Status.CompletedUpdateIDs, id)
			obs.Finished[id] = updateOutcome(u.Update)
		}
	}
	if err := s.r.cleanTemplateVersions(ctx, s.cs, c, ngs); err != nil {
		return obs, err
	}
	if obs.Busy {
		return obs, nil
	}
	obs.Upstream, err = reading(ctx, s.cs, c.Spec, c.Status, cl, ngs)
	return obs, err
}

// Outcome describes the EKS update of a pending push Observe did not see
// finish.
func (s *conn) Outcome(ctx context.Context, p hostedv1.PendingUpdate) (string, error) {
	in := &eks.DescribeUpdateInput{Name: aws.String(s.c.Spec.DisplayName), UpdateId: aws.String(p.UpdateID)}
	if ng, _, ok := splitNodegroupPath(p.Path); ok {
		in.NodegroupName = aws.String(ng) // EKS finds node group updates only so
	}
	out, err := s.cs.EKS.DescribeUpdate(ctx, in)
	if err != nil {
		return "", fmt.Errorf("describe update %s of %s: %w", p.UpdateID, p.Path, err)
	}
	return updateOutcome(out.Update), nil
}

// updateOutcome is "" for a Successful update, else why it did not take
// effect.
func updateOutcome(u *ekstypes.Update) string {
	if u.Status == ekstypes.UpdateStatusSuccessful {
		return ""
	}
	return fmt.Sprintf("EKS update %s ended %s%s", aws.ToString(u.Id), u.Status, updateErrors(u.Errors))
}

// errPending means a change waits for something the operator generates
// (a CloudFormation stack): the pass ends without a failure and polls.
var errPending = engine.ErrWaiting

// Prepare takes a Kubernetes upgrade one minor version at a time, from
// the version EKS reports.
func (s *conn) Prepare(call []managed.Change, target *eksv1.EKSClusterConfigSpec) error {
	if call[0].Path != "kubernetesVersion" {
		return nil
	}
	next, err := NextVersion(aws.ToString(s.cl.Version), aws.ToString(s.c.Spec.KubernetesVersion))
	if err != nil {
		return fmt.Errorf("kubernetesVersion: %w", err)
	}
	target.KubernetesVersion = &next
	return nil
}

// Apply sends the EKS call for one call group, with target's values.
func (s *conn) Apply(ctx context.Context, call []managed.Change, up, target eksv1.EKSClusterConfigSpec) (string, error) {
	return s.r.apply(ctx, s.cs, s.c, s.cl, up, &target, call[0])
}

// ignored reports whether a pushed change has nothing to apply: a
// template field of a node group with a launch template of its own (it
// lives in the user's template, Rancher ignores it too), the instance
// type of a spot node group (its spotInstanceTypes are used), or
// ebsCSIDriver false (Rancher installs the add-on but never removes it).
func ignored(spec *eksv1.EKSClusterConfigSpec, ch managed.Change) bool {
	if ch.Path == "ebsCSIDriver" {
		return spec.EBSCSIDriver == nil || !*spec.EBSCSIDriver
	}
	ng, field := nodegroupOf(spec, ch.Path)
	switch {
	case ng == nil || !isTemplateField(field):
		return false
	case ng.LaunchTemplate != nil:
		return true
	}
	return field == "instanceType" && spot(ng)
}

// nodegroupOf returns the spec node group a change path names
// ("nodeGroups[NAME]" or "nodeGroups[NAME].field"), nil if it is not in
// the spec, and the field.
func nodegroupOf(spec *eksv1.EKSClusterConfigSpec, path string) (*eksv1.NodeGroup, string) {
	name, field, ok := splitNodegroupPath(path)
	if !ok || spec.NodeGroups == nil {
		return nil, field
	}
	for i := range *spec.NodeGroups {
		if (*spec.NodeGroups)[i].NodegroupName == name {
			return &(*spec.NodeGroups)[i], field
		}
	}
	return nil, field
}

// splitNodegroupPath splits a node group path ("nodeGroups[NAME]" or
// "nodeGroups[NAME].field") into the name and the field ("" for the whole
// node group); ok is false for a path of a cluster field.
func splitNodegroupPath(path string) (name, field string, ok bool) {
	return managed.SplitElementPath(path, "nodeGroups")
}

// apply sends the EKS call for one change, ch, with the values of target
// (managed.Target: upstream with the values being pushed, the version
// being the next minor one): a call that sets several fields sends
// upstream's value for those not being pushed.
// It returns the ID of the EKS update the call started, "" for calls that
// start none.
func (r *Provider) apply(ctx context.Context, cs *Clients, c *eksv1.EKSClusterConfig, cl *ekstypes.Cluster, up eksv1.EKSClusterConfigSpec, target *eksv1.EKSClusterConfigSpec, ch managed.Change) (string, error) {
	api := cs.EKS
	name := cl.Name
	switch path := ch.Path; {
	case path == "kubernetesVersion":
		out, err := api.UpdateClusterVersion(ctx, &eks.UpdateClusterVersionInput{Name: name, Version: target.KubernetesVersion})
		if err != nil {
			return "", wrap("upgrade to "+aws.ToString(target.KubernetesVersion), err)
		}
		return idOf(out.Update), nil
	case path == "publicAccess" || path == "privateAccess":
		out, err := api.UpdateClusterConfig(ctx, &eks.UpdateClusterConfigInput{Name: name,
			ResourcesVpcConfig: &ekstypes.VpcConfigRequest{EndpointPublicAccess: target.PublicAccess, EndpointPrivateAccess: target.PrivateAccess}})
		if err != nil {
			return "", wrap("endpoint access", err)
		}
		return idOf(out.Update), nil
	case path == "publicAccessSources":
		out, err := api.UpdateClusterConfig(ctx, &eks.UpdateClusterConfigInput{Name: name,
			ResourcesVpcConfig: &ekstypes.VpcConfigRequest{PublicAccessCidrs: deref(target.PublicAccessSources)}})
		if err != nil {
			return "", wrap("public access sources", err)
		}
		return idOf(out.Update), nil
	case path == "tags":
		return "", r.tags(ctx, api, cl.Arn, deref(target.Tags), deref(up.Tags))
	case path == "loggingTypes":
		out, err := api.UpdateClusterConfig(ctx, &eks.UpdateClusterConfigInput{Name: name, Logging: loggingUpdate(deref(target.LoggingTypes))})
		if err != nil {
			return "", wrap("logging", err)
		}
		return idOf(out.Update), nil
	case path == "ebsCSIDriver":
		return "", installEBSCSIDriver(ctx, api, aws.ToString(name))
	case strings.HasPrefix(path, "nodeGroups["):
		return r.nodegroup(ctx, cs, c, cl, up, target, ch)
	}
	return "", fmt.Errorf("changing %s is not implemented yet", ch.Path)
}

// idOf returns the ID of the update an Update* call started.
func idOf(u *ekstypes.Update) string {
	if u == nil {
		return ""
	}
	return aws.ToString(u.Id)
}

// nodegroup creates, deletes or reconfigures one node group, with target's
// values; it returns the ID of the EKS update it started, if any.
func (r *Provider) nodegroup(ctx context.Context, cs *Clients, c *eksv1.EKSClusterConfig, cl *ekstypes.Cluster, up eksv1.EKSClusterConfigSpec, target *eksv1.EKSClusterConfigSpec, ch managed.Change) (string, error) {
	api := cs.EKS
	ngName, _, _ := splitNodegroupPath(ch.Path)
	ng, field := nodegroupOf(target, ch.Path)
	switch {
	case ng == nil: // removed from the spec
		_, err := api.DeleteNodegroup(ctx, &eks.DeleteNodegroupInput{ClusterName: cl.Name, NodegroupName: aws.String(ngName)})
		if err != nil {
			return "", wrap("delete node group "+ngName, err)
		}
		// Its managed template version goes once the node group is gone.
		if v, ok := c.Status.ManagedLaunchTemplateVersions[ngName]; ok {
			delete(c.Status.ManagedLaunchTemplateVersions, ngName)
			c.Status.TemplateVersionsToDelete = append(c.Status.TemplateVersionsToDelete, v)
		}
		return "", nil
	case field == "": // added to the spec
		done, err := r.createNodegroup(ctx, cs, c, cl, ng)
		if err == nil && !done {
			return "", errPending
		}
		return "", err
	case isTemplateField(field): // a new version of the managed launch template
		var base templateFields
		if up.NodeGroups != nil {
			for i := range *up.NodeGroups {
				if u := &(*up.NodeGroups)[i]; u.NodegroupName == ngName {
					base = base.over(u)
				}
			}
		}
		lt, err := r.templateVersion(ctx, cs, c, ng, base)
		if err != nil {
			return "", err
		}
		out, err := api.UpdateNodegroupVersion(ctx, &eks.UpdateNodegroupVersionInput{ClusterName: cl.Name, NodegroupName: aws.String(ngName), LaunchTemplate: lt})
		if err != nil {
			return "", wrap("node group "+ngName+" launch template version "+aws.ToString(lt.Version), err)
		}
		return idOf(out.Update), nil
	case field == "launchTemplate": // another version of the user's template
		out, err := api.UpdateNodegroupVersion(ctx, &eks.UpdateNodegroupVersionInput{ClusterName: cl.Name, NodegroupName: aws.String(ngName), LaunchTemplate: userTemplate(ng.LaunchTemplate)})
		if err != nil {
			return "", wrap("node group "+ngName+" launch template", err)
		}
		return idOf(out.Update), nil
	case field == "version":
		out, err := api.UpdateNodegroupVersion(ctx, &eks.UpdateNodegroupVersionInput{ClusterName: cl.Name, NodegroupName: aws.String(ngName), Version: ng.Version})
		if err != nil {
			return "", wrap("node group "+ngName+" version", err)
		}
		return idOf(out.Update), nil
	case field == "desiredSize" || field == "minSize" || field == "maxSize" || field == "labels":
		in := &eks.UpdateNodegroupConfigInput{ClusterName: cl.Name, NodegroupName: aws.String(ngName)}
		if field == "labels" {
			old, _ := ch.Old.(map[string]string)
			in.Labels = labelsUpdate(deref(ng.Labels), old)
		} else {
			in.ScalingConfig = &ekstypes.NodegroupScalingConfig{DesiredSize: int32Ptr(ng.DesiredSize), MinSize: int32Ptr(ng.MinSize), MaxSize: int32Ptr(ng.MaxSize)}
		}
		out, err := api.UpdateNodegroupConfig(ctx, in)
		if err != nil {
			return "", wrap("node group "+ngName+" "+field, err)
		}
		return idOf(out.Update), nil
	}
	return "", fmt.Errorf("changing %s is not implemented yet", ch.Path)
}

// tags sets the cluster's tags to want: tag what differs, untag what goes.
func (r *Provider) tags(ctx context.Context, api API, arn *string, want, have map[string]string) error {
	add := map[string]string{}
	for k, v := range want {
		if have[k] != v {
			add[k] = v
		}
	}
	var remove []string
	for _, k := range slices.Sorted(maps.Keys(have)) {
		if _, ok := want[k]; !ok {
			remove = append(remove, k)
		}
	}
	if len(add) > 0 {
		if _, err := api.TagResource(ctx, &eks.TagResourceInput{ResourceArn: arn, Tags: add}); err != nil {
			return wrap("tag cluster", err)
		}
	}
	if len(remove) > 0 {
		if _, err := api.UntagResource(ctx, &eks.UntagResourceInput{ResourceArn: arn, TagKeys: remove}); err != nil {
			return wrap("untag cluster", err)
		}
	}
	return nil
}

func labelsUpdate(want, have map[string]string) *ekstypes.UpdateLabelsPayload {
	p := &ekstypes.UpdateLabelsPayload{AddOrUpdateLabels: map[string]string{}}
	for k, v := range want {
		if have[k] != v {
			p.AddOrUpdateLabels[k] = v
		}
	}
	for _, k := range slices.Sorted(maps.Keys(have)) {
		if _, ok := want[k]; !ok {
			p.RemoveLabels = append(p.RemoveLabels, k)
		}
	}
	return p
}

// loggingUpdate enables the wanted log types and disables the others.
func loggingUpdate(want []string) *ekstypes.Logging {
	var on, off []ekstypes.LogType
	for _, t := range ekstypes.LogType("").Values() {
		if slices.Contains(want, string(t)) {
			on = append(on, t)
		} else {
			off = append(off, t)
		}
	}
	l := &ekstypes.Logging{}
	if len(on) > 0 {
		l.ClusterLogging = append(l.ClusterLogging, ekstypes.LogSetup{Enabled: aws.Bool(true), Types: on})
	}
	if len(off) > 0 {
		l.ClusterLogging = append(l.ClusterLogging, ekstypes.LogSetup{Enabled: aws.Bool(false), Types: off})
	}
	return l
}

// deref returns *p, or the zero value when p is nil.
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func wrap(what string, err error) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}
