package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/registered/registration"
)

// PlanGVR returns the system-upgrade-controller's Plan resource
// (upgrade.cattle.io/v1, plans).
func PlanGVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "upgrade.cattle.io", Version: "v1", Resource: "plans"}
}

// K3s node annotations (read-only launch configuration).
const (
	AnnotationNodeArgs = "k3s.io/node-args"
	AnnotationNodeEnv  = "k3s.io/node-env"
)

// Plans returns the two system-upgrade-controller Plans of an upgrade to
// cfg.KubernetesVersion of a distribution ("k3s" or "rke2"), as Rancher
// makes them (https://github.com/rancher/rancher/blob/main/pkg/controllers/management/k3sbasedupgrade/template.go):
// "<dist>-master-plan"
// for control-plane nodes (node-role.kubernetes.io/control-plane In
// [true]) at ServerConcurrency, and "<dist>-worker-plan" for the others at
// WorkerConcurrency, whose prepare step waits for the master plan. Both
// cordon the node, and drain it when cfg.Drain is set; namespace is where
// they go.
func Plans(dist, namespace string, cfg mgmtv1.K3sConfig) []*unstructured.Unstructured {
	image := "rancher/" + dist + "-upgrade"
	master, worker := dist+"-master-plan", dist+"-worker-plan"
	plan := func(name string, concurrency int32, op string, prepare bool) *unstructured.Unstructured {
		expr := map[string]any{"key": "node-role.kubernetes.io/control-plane", "operator": op}
		if op == "In" {
			expr["values"] = []any{"true"}
		}
		spec := map[string]any{
			"concurrency":        int64(max(concurrency, 1)),
			"version":            cfg.KubernetesVersion,
			"serviceAccountName": "system-upgrade",
			"cordon":             true,
			"nodeSelector":       map[string]any{"matchExpressions": []any{expr}},
			"tolerations":        []any{map[string]any{"operator": "Exists"}},
			"upgrade":            map[string]any{"image": image},
		}
		if prepare {
			spec["prepare"] = map[string]any{"image": image, "args": []any{"prepare", master}}
		}
		if d := cfg.Drain; d != nil {
			drain := map[string]any{"force": d.Force, "deleteEmptydirData": d.DeleteEmptyDirData, "ignoreDaemonSets": d.IgnoreDaemonSets == nil || *d.IgnoreDaemonSets}
			if d.TimeoutSeconds != nil {
				drain["timeout"] = fmt.Sprintf("%ds", *d.TimeoutSeconds)
			}
			if d.GracePeriodSeconds != nil {
				drain["gracePeriod"] = *d.GracePeriodSeconds
			}
			spec["drain"] = drain
		}
		u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
		u.SetAPIVersion("upgrade.cattle.io/v1")
		u.SetKind("Plan")
		u.SetName(name)
		u.SetNamespace(namespace)
		u.SetLabels(map[string]string{registration.LabelManagedBy: registration.ManagedByValue})
		return u
	}
	return []*unstructured.Unstructured{
		plan(master, cfg.ServerConcurrency, "In", false),
		plan(worker, cfg.WorkerConcurrency, "DoesNotExist", true),
	}
}

// K3sNodes reads each node's K3s launch arguments and environment from its
// annotations (nodes without them are left out).
func K3sNodes(ctx context.Context, kube kubernetes.Interface) ([]mgmtv1.K3sNode, error) {
	nodes, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []mgmtv1.K3sNode
	for _, n := range nodes.Items {
		args, env := n.Annotations[AnnotationNodeArgs], n.Annotations[AnnotationNodeEnv]
		if args == "" && env == "" {
			continue
		}
		kn := mgmtv1.K3sNode{Name: n.Name, Version: n.Status.NodeInfo.KubeletVersion,
			ControlPlane: n.Labels["node-role.kubernetes.io/control-plane"] == "true"}
		if args != "" {
			if err := json.Unmarshal([]byte(args), &kn.Args); err != nil {
				return nil, fmt.Errorf("node %s: annotation %s: %w", n.Name, AnnotationNodeArgs, err)
			}
		}
		if env != "" {
			if err := json.Unmarshal([]byte(env), &kn.Env); err != nil {
				return nil, fmt.Errorf("node %s: annotation %s: %w", n.Name, AnnotationNodeEnv, err)
			}
		}
		out = append(out, kn)
	}
	return out, nil
}

// upgrade carries out spec.k3sConfig on a connected cluster and sets
// condition Upgraded and status.k3s: refused for a cluster that is not
// K3s or RKE2; otherwise the two Plans are created or updated in the
// agent's namespace, and the condition is True once every node's kubelet
// runs the version.
func (r *Reconciler) upgrade(ctx context.Context, c *mgmtv1.Cluster, kube kubernetes.Interface, dyn dynamic.Interface) error {
	dist := ""
	if c.Status.Agent != nil {
		dist = c.Status.Agent.Distribution
	}
	set := func(status metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&c.Status.Conditions, metav1.Condition{Type: mgmtv1.ConditionUpgraded, Status: status, Reason: reason, Message: msg, ObservedGeneration: c.Generation})
	}
	if dist != "" {
		nodes, err := K3sNodes(ctx, kube)
		if err != nil {
			return err
		}
		if c.Status.K3s == nil {
			c.Status.K3s = &mgmtv1.K3sStatus{}
		}
		c.Status.K3s.Nodes = nodes
	}
	cfg := c.Spec.K3sConfig
	if cfg == nil {
		meta.RemoveStatusCondition(&c.Status.Conditions, mgmtv1.ConditionUpgraded)
		return nil
	}
	if dist == "" {
		set(metav1.ConditionFalse, "NotK3s", fmt.Sprintf("cluster %s runs Kubernetes %s, which is neither K3s nor RKE2: clustersync cannot upgrade it; upgrade it with the tools that installed it and remove spec.k3sConfig", c.Name, c.Status.Version))
		return nil
	}
	var names []string
	for _, p := range Plans(dist, registration.AgentNamespace, *cfg) {
		names = append(names, p.GetName())
		plans := dyn.Resource(PlanGVR()).Namespace(p.GetNamespace())
		cur, err := plans.Get(ctx, p.GetName(), metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			if _, err := plans.Create(ctx, p, metav1.CreateOptions{}); err != nil {
				if apierrors.IsNotFound(err) { // no Plan resource in the cluster
					set(metav1.ConditionFalse, "NoSystemUpgradeController", "the cluster has no upgrade.cattle.io/v1 Plan resource: install the system-upgrade-controller")
					return nil
				}
				return fmt.Errorf("create Plan %s: %w", p.GetName(), err)
			}
		case err != nil:
			return fmt.Errorf("Plan %s: %w", p.GetName(), err)
		default:
			p.SetResourceVersion(cur.GetResourceVersion())
			if _, err := plans.Update(ctx, p, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("update Plan %s: %w", p.GetName(), err)
			}
		}
	}
	c.Status.K3s.Plans = names
	behind := []string{}
	nodes, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, n := range nodes.Items {
		if n.Status.NodeInfo.KubeletVersion != cfg.KubernetesVersion {
			behind = append(behind, n.Name)
		}
	}
	slices.Sort(behind)
	if len(behind) > 0 {
		set(metav1.ConditionUnknown, "Upgrading", fmt.Sprintf("Plans %v created; nodes not yet at %s: %v", names, cfg.KubernetesVersion, behind))
	} else {
		set(metav1.ConditionTrue, "Upgraded", "every node runs "+cfg.KubernetesVersion)
	}
	return nil
}
