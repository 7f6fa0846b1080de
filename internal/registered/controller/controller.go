// Package controller is the management controller of registered clusters
// (Rancher's cluster import,
// https://rancher.com/docs/rancher/v2.x/en/cluster-provisioning/imported-clusters/):
// it keeps each Cluster's registration token (rotating it), turns a connected
// agent into phase Active with conditions Connected (a ping through the
// tunnel every 15 seconds) and Ready (/readyz), creates the Default and
// System projects, and on deletion disconnects the cluster, leaving its nodes
// and workloads alone.
package controller

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/registered/tunnel"
)

// Finalizer holds back a registered Cluster's deletion until it is
// disconnected.
const Finalizer = "management.clustersync.io/disconnect"

// DefaultPing is how often a connected cluster is pinged through its
// tunnel (Rancher's 15 seconds).
const DefaultPing = 15 * time.Second

// Reconciler is the registered-cluster controller.
type Reconciler struct {
	// Client reads and writes the management cluster.
	Client client.Client
	// Tunnel holds the agents' tunnels.
	Tunnel *tunnel.Server
	// URL is the management server's external https URL (for the commands
	// in ClusterRegistrationToken status).
	URL string
	// Events records events on Clusters; may be nil.
	Events events.EventRecorder
	// AgentImage is the image of the cleanup Job that disconnects a
	// deleted cluster.
	AgentImage string
	// Ping is the ping period; 0 means DefaultPing.
	Ping time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	// marks remembers, per cluster, what its last downstream sync was made
	// for (syncMark).
	marks sync.Map
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Reconciler) ping() time.Duration {
	if r.Ping > 0 {
		return r.Ping
	}
	return DefaultPing
}

// Reconcile implements reconcile.Reconciler for Clusters with
// spec.importedConfig.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var c mgmtv1.Cluster
	if err := r.Client.Get(ctx, req.NamespacedName, &c); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if c.Spec.ImportedConfig == nil {
		return ctrl.Result{}, nil
	}
	if c.DeletionTimestamp != nil {
		return r.finalize(ctx, &c)
	}
	if controllerutil.AddFinalizer(&c, Finalizer) {
		if err := r.Client.Update(ctx, &c); err != nil {
			return ctrl.Result{}, err
		}
	}
	next, token, err := r.ensureToken(ctx, &c)
	if err != nil {
		return ctrl.Result{}, err
	}
	c.Status.Driver = mgmtv1.DriverImported
	c.Status.ObservedGeneration = c.Generation
	set := func(typ string, status metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&c.Status.Conditions, metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg, ObservedGeneration: c.Generation})
	}

	rt, reg, connected := r.Tunnel.Transport(c.Name)
	requeue := next
	if connected {
		requeue = min(requeue, r.ping())
		cfg := DownstreamConfig(reg, rt)
		p := look(ctx, cfg)
		now := metav1.NewTime(r.now())
		if c.Status.Agent == nil || c.Status.Agent.KubeSystemUID != reg.KubeSystemUID || c.Status.Agent.ConnectedSince == nil {
			c.Status.Agent = &mgmtv1.AgentStatus{ConnectedSince: &now}
		}
		a := c.Status.Agent
		a.KubeSystemUID, a.APIEndpoint, a.AgentVersion = reg.KubeSystemUID, reg.APIEndpoint, reg.Version
		set(mgmtv1.ConditionPending, metav1.ConditionTrue, "AgentConnected", "the agent registered the cluster")
		if p.pingErr != nil {
			set(mgmtv1.ConditionConnected, metav1.ConditionFalse, "PingFailed", "the tunnel is up but the API server did not answer: "+p.pingErr.Error())
		} else {
			a.LastPing = &now
			c.Status.Version = p.version
			a.Distribution = Distribution(p.version)
			set(mgmtv1.ConditionConnected, metav1.ConditionTrue, "Connected", "the API server answered through the tunnel")
		}
		switch {
		case p.pingErr != nil:
			set(mgmtv1.ConditionReady, metav1.ConditionFalse, "NotConnected", "waiting on condition Connected")
		case p.readyErr != nil:
			set(mgmtv1.ConditionReady, metav1.ConditionFalse, "NotReady", p.readyErr.Error())
		default:
			set(mgmtv1.ConditionReady, metav1.ConditionTrue, "Ready", "/readyz answered ok")
		}
		if p.pingErr == nil {
			c.Status.Phase = mgmtv1.PhaseActive
			mark := syncMark{generation: c.Generation, annotations: fmt.Sprint(c.Annotations), token: token, since: a.ConnectedSince.Time}
			if r.due(c.Name, mark, now.Time) || upgrading(&c) {
				if err := r.syncDownstream(ctx, &c, cfg, p.downstream, token, set); err != nil {
					return ctrl.Result{}, err
				}
				r.marks.Store(c.Name, mark.at(now.Time))
			}
			if err := r.projectMembership(ctx, &c, p.downstream); err != nil {
				return ctrl.Result{}, err
			}
		} else {
			c.Status.Phase = mgmtv1.PhaseUnavailable
		}
	} else {
		if c.Status.Agent == nil {
			c.Status.Phase = mgmtv1.PhasePending
			set(mgmtv1.ConditionPending, metav1.ConditionUnknown, "WaitingForAgent", "waiting for the agent to connect: apply the import manifest (see ClusterRegistrationToken "+c.Name+")")
			set(mgmtv1.ConditionConnected, metav1.ConditionFalse, "AgentNotConnected", "the agent has not connected yet")
		} else {
			c.Status.Phase = mgmtv1.PhaseUnavailable
			c.Status.Agent.ConnectedSince = nil
			set(mgmtv1.ConditionConnected, metav1.ConditionFalse, "Disconnected", "the agent's tunnel is down; it reconnects by itself when it can reach the server")
		}
		set(mgmtv1.ConditionReady, metav1.ConditionFalse, "NotConnected", "waiting on condition Connected")
	}
	if err := r.Client.Status().Update(ctx, &c); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: requeue}, nil
}

// finalize disconnects the cluster: the ClusterRegistrationToken goes (so
// the agent cannot reconnect), the agent's objects are removed downstream
// when the cluster is connected, and the Cluster is let go. Nodes and
// workloads are never touched.
func (r *Reconciler) finalize(ctx context.Context, c *mgmtv1.Cluster) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(c, Finalizer) {
		return ctrl.Result{}, nil
	}
	if err := r.deleteToken(ctx, c.Name); err != nil {
		return ctrl.Result{}, err
	}
	if rt, reg, ok := r.Tunnel.Transport(c.Name); ok {
		if err := r.disconnect(ctx, c, DownstreamConfig(reg, rt)); err != nil {
			return ctrl.Result{}, fmt.Errorf("disconnect %s: %w", c.Name, err)
		}
	} else {
		r.event(c, corev1.EventTypeWarning, "DisconnectedOffline", "the agent is not connected: its objects stay in the cluster; remove them with `clustersync agent cleanup --kubeconfig <cluster>`")
	}
	if err := r.deleteProjects(ctx, c.Name); err != nil {
		return ctrl.Result{}, err
	}
	r.marks.Delete(c.Name)
	controllerutil.RemoveFinalizer(c, Finalizer)
	return ctrl.Result{}, r.Client.Update(ctx, c)
}

// event records an event on c when a recorder is set.
func (r *Reconciler) event(c *mgmtv1.Cluster, typ, reason, format string, args ...any) {
	if r.Events != nil {
		r.Events.Eventf(c, nil, typ, reason, "Sync", format, args...)
	}
}

// FullSyncEvery bounds how long the downstream side of a connected cluster
// (member bindings, the agent's token, capabilities, K3s) goes without
// being looked at; it is also looked at whenever the spec, the annotations,
// the token or the connection change, and at every ping during an upgrade.
// Projects follow their namespaces at every ping.
const FullSyncEvery = 5 * time.Minute

// syncMark is what the last downstream sync of a cluster was made for.
type syncMark struct {
	generation  int64
	annotations string
	token       string
	since       time.Time
	done        time.Time
}

func (m syncMark) at(t time.Time) syncMark { m.done = t; return m }

// due reports whether cluster's downstream side needs a sync for mark.
func (r *Reconciler) due(cluster string, mark syncMark, now time.Time) bool {
	v, ok := r.marks.Load(cluster)
	if !ok {
		return true
	}
	last := v.(syncMark)
	return last.generation != mark.generation || last.annotations != mark.annotations || last.token != mark.token ||
		!last.since.Equal(mark.since) || now.Sub(last.done) >= FullSyncEvery
}

// upgrading reports whether a K3s upgrade is asked for and not done.
func upgrading(c *mgmtv1.Cluster) bool {
	return c.Spec.K3sConfig != nil && !meta.IsStatusConditionTrue(c.Status.Conditions, mgmtv1.ConditionUpgraded)
}

// syncDownstream keeps the downstream side of a connected cluster: the
// projects and their starting namespaces, member bindings, the agent's token, capabilities and condition
// CapabilitiesValid, and the K3s upgrade.
func (r *Reconciler) syncDownstream(ctx context.Context, c *mgmtv1.Cluster, cfg *rest.Config, kube kubernetes.Interface, token string,
	set func(typ string, status metav1.ConditionStatus, reason, msg string)) error {
	if err := r.ensureProjects(ctx, c, kube); err != nil {
		return err
	}
	if err := ensureMembers(ctx, kube, c); err != nil {
		return err
	}
	if err := syncAgentToken(ctx, kube, token); err != nil {
		return err
	}
	detected, err := DetectCapabilities(ctx, kube)
	if err != nil {
		return err
	}
	caps, problems := ApplyCapabilityAnnotations(c.Annotations, detected)
	c.Status.Capabilities = &caps
	if len(problems) > 0 {
		set(mgmtv1.ConditionCapabilitiesValid, metav1.ConditionFalse, "BadAnnotation", strings.Join(problems, "; "))
	} else {
		set(mgmtv1.ConditionCapabilitiesValid, metav1.ConditionTrue, "Valid", "detected, with the capability annotations applied")
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	return r.upgrade(ctx, c, kube, dyn)
}
