// Package controller is the management controller of the clusters that
// have the clustersync agent (Rancher's cluster import,
// https://rancher.com/docs/rancher/v2.x/en/cluster-provisioning/imported-clusters/):
// registered clusters, and hosted (EKS, AKS, GKE) clusters once their
// cloud reports them provisioned, into which it installs the agent itself
// (docs/design/hosted-agent.md). It keeps each Cluster's registration
// token (rotating it), pings a connected agent through its tunnel every 15
// seconds (a registered cluster's phase Active and conditions Connected
// and Ready, a hosted cluster's condition AgentConnected), creates the
// Default and System projects, keeps members, capabilities and K3s
// upgrades, and on deletion disconnects the cluster, leaving its nodes and
// workloads alone.
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
	"github.com/clustersync/clustersync/internal/hosted/management"
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
	// AgentImage is the agent's image: the agent installed in hosted
	// clusters and the cleanup Job that disconnects a deleted cluster.
	AgentImage string
	// Ping is the ping period; 0 means DefaultPing.
	Ping time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	// Hosted sees a Cluster through its cloud (manager.Hosted); nil means
	// registered clusters only.
	Hosted func(*mgmtv1.Cluster) (management.View, bool)
	// CAPEM is the management server's CA (PEM): its checksum goes into
	// the agent's manifest applied to hosted clusters.
	CAPEM []byte

	// marks remembers, per cluster, what its last downstream sync was made
	// for (syncMark).
	marks sync.Map
	// installs remembers, per hosted cluster, what the agent's manifest
	// was last applied with (installMark).
	installs sync.Map
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

// setFunc sets one condition of the Cluster being reconciled.
type setFunc func(typ string, status metav1.ConditionStatus, reason, msg string)

// Reconcile implements reconcile.Reconciler for the Clusters that have an
// agent: registered clusters (spec.importedConfig) and hosted clusters
// once their cloud reports them provisioned (docs/design/hosted-agent.md).
// For a hosted cluster it writes only the fields the agent reports
// (status.agent, status.capabilities, status.k3s, conditions
// AgentConnected and CapabilitiesValid); the hosted management controller
// owns its phase and its other conditions. Both update the status with
// its resourceVersion, so neither loses the other's change.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var c mgmtv1.Cluster
	if err := r.Client.Get(ctx, req.NamespacedName, &c); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	var hosted management.View // nil for a registered cluster
	if c.Spec.ImportedConfig == nil {
		v, ok := r.hosted(&c)
		if !ok {
			return ctrl.Result{}, nil
		}
		hosted = v
	}
	if c.DeletionTimestamp != nil {
		return r.finalize(ctx, &c, hosted)
	}
	if hosted != nil {
		if !c.AgentWanted() {
			return ctrl.Result{}, r.removeAgent(ctx, &c)
		}
		if !meta.IsStatusConditionTrue(c.Status.Conditions, mgmtv1.ConditionProvisioned) && !controllerutil.ContainsFinalizer(&c, Finalizer) {
			return ctrl.Result{}, nil // not in the cloud yet; woken when it is
		}
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
	if hosted == nil {
		c.Status.Driver = mgmtv1.DriverImported
		c.Status.ObservedGeneration = c.Generation
	}
	var set setFunc = func(typ string, status metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&c.Status.Conditions, metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg, ObservedGeneration: c.Generation})
	}

	rt, reg, connected := r.Tunnel.Transport(c.Name)
	requeue := next
	if connected {
		requeue = min(requeue, r.ping())
		cfg := DownstreamConfig(reg, rt)
		p := look(ctx, cfg)
		now := metav1.NewTime(r.now())
		firstPing := c.Status.Agent == nil || c.Status.Agent.LastPing == nil
		if c.Status.Agent == nil || c.Status.Agent.KubeSystemUID != reg.KubeSystemUID || c.Status.Agent.ConnectedSince == nil {
			c.Status.Agent = &mgmtv1.AgentStatus{ConnectedSince: &now}
		}
		a := c.Status.Agent
		a.KubeSystemUID, a.APIEndpoint, a.AgentVersion = reg.KubeSystemUID, reg.APIEndpoint, reg.Version
		if p.pingErr == nil {
			a.LastPing = &now
			a.Distribution = Distribution(p.version)
		}
		if hosted == nil {
			registeredConnected(&c, p, set)
		} else {
			r.hostedConnected(ctx, &c, p, firstPing, set)
		}
		if p.pingErr == nil {
			mark := syncMark{generation: c.Generation, annotations: fmt.Sprint(c.Annotations), token: token, since: a.ConnectedSince.Time}
			if r.due(c.Name, mark, now.Time) || upgrading(&c) {
				if hosted != nil {
					// The agent's own objects, through its tunnel: a
					// new agent image or token reaches the cluster.
					if err := r.applyAgent(ctx, cfg, c.Name, token); err != nil {
						return ctrl.Result{}, err
					}
				}
				if err := r.syncDownstream(ctx, &c, cfg, p.downstream, token, set); err != nil {
					return ctrl.Result{}, err
				}
				r.marks.Store(c.Name, mark.at(now.Time))
			}
			if err := r.projectMembership(ctx, &c, p.downstream); err != nil {
				return ctrl.Result{}, err
			}
		}
	} else {
		if c.Status.Agent != nil {
			c.Status.Agent.ConnectedSince = nil
		}
		if hosted == nil {
			registeredDown(&c, set)
		} else {
			requeue = min(requeue, r.hostedAgentDown(ctx, &c, token, set))
		}
	}
	if err := r.Client.Status().Update(ctx, &c); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: requeue}, nil
}

// hosted sees c through its cloud (Reconciler.Hosted).
func (r *Reconciler) hosted(c *mgmtv1.Cluster) (management.View, bool) {
	if r.Hosted == nil {
		return nil, false
	}
	return r.Hosted(c)
}

// registeredConnected sets the phase and conditions of a registered
// cluster whose agent's tunnel is up, from what p found through it.
func registeredConnected(c *mgmtv1.Cluster, p probe, set setFunc) {
	set(mgmtv1.ConditionPending, metav1.ConditionTrue, "AgentConnected", "the agent registered the cluster")
	switch {
	case p.pingErr != nil:
		set(mgmtv1.ConditionConnected, metav1.ConditionFalse, "PingFailed", "the tunnel is up but the API server did not answer: "+p.pingErr.Error())
		set(mgmtv1.ConditionReady, metav1.ConditionFalse, "NotConnected", "waiting on condition Connected")
		c.Status.Phase = mgmtv1.PhaseUnavailable
		return
	case p.readyErr != nil:
		set(mgmtv1.ConditionReady, metav1.ConditionFalse, "NotReady", p.readyErr.Error())
	default:
		set(mgmtv1.ConditionReady, metav1.ConditionTrue, "Ready", "/readyz answered ok")
	}
	c.Status.Version = p.version
	set(mgmtv1.ConditionConnected, metav1.ConditionTrue, "Connected", "the API server answered through the tunnel")
	c.Status.Phase = mgmtv1.PhaseActive
}

// registeredDown sets the phase and conditions of a registered cluster
// whose agent is not connected: Pending before it ever was, else
// Unavailable.
func registeredDown(c *mgmtv1.Cluster, set setFunc) {
	if c.Status.Agent == nil {
		c.Status.Phase = mgmtv1.PhasePending
		set(mgmtv1.ConditionPending, metav1.ConditionUnknown, "WaitingForAgent", "waiting for the agent to connect: apply the import manifest (see ClusterRegistrationToken "+c.Name+")")
		set(mgmtv1.ConditionConnected, metav1.ConditionFalse, "AgentNotConnected", "the agent has not connected yet")
	} else {
		c.Status.Phase = mgmtv1.PhaseUnavailable
		set(mgmtv1.ConditionConnected, metav1.ConditionFalse, "Disconnected", "the agent's tunnel is down; it reconnects by itself when it can reach the server")
	}
	set(mgmtv1.ConditionReady, metav1.ConditionFalse, "NotConnected", "waiting on condition Connected")
}

// hostedConnected sets condition AgentConnected of a hosted cluster whose
// agent's tunnel is up, and records its turning True in event
// AgentConnected: at the agent's first ping (firstPing), how long after
// the cluster was provisioned that was.
func (r *Reconciler) hostedConnected(ctx context.Context, c *mgmtv1.Cluster, p probe, firstPing bool, set setFunc) {
	if p.pingErr != nil {
		set(mgmtv1.ConditionAgentConnected, metav1.ConditionFalse, "PingFailed", "the tunnel is up but the API server did not answer: "+p.pingErr.Error())
		return
	}
	wasUp := meta.IsStatusConditionTrue(c.Status.Conditions, mgmtv1.ConditionAgentConnected)
	set(mgmtv1.ConditionAgentConnected, metav1.ConditionTrue, "Connected", "the agent's tunnel is up and the API server answered through it")
	if wasUp {
		return
	}
	msg := "the agent dialed in again"
	if firstPing {
		msg = "the agent dialed in"
		if prov := meta.FindStatusCondition(c.Status.Conditions, mgmtv1.ConditionProvisioned); prov != nil && prov.Status == metav1.ConditionTrue {
			after := r.now().Sub(prov.LastTransitionTime.Time).Round(100 * time.Millisecond)
			msg = fmt.Sprintf("the agent dialed in %s after the cluster was provisioned", after)
			ctrl.LoggerFrom(ctx).Info("agent connected", "cluster", c.Name, "afterProvisioned", after.String())
		}
	}
	r.event(c, corev1.EventTypeNormal, "AgentConnected", "%s", msg)
}

// finalize disconnects the cluster: the ClusterRegistrationToken goes (so
// the agent cannot reconnect), the agent's objects are removed downstream
// when the cluster can be reached (through the tunnel, or for a hosted
// cluster with the service-account token), and the Cluster is let go.
// Nodes and workloads are never touched. A hosted cluster clustersync
// created is deleted in the cloud, agent and all: nothing is done
// downstream.
func (r *Reconciler) finalize(ctx context.Context, c *mgmtv1.Cluster, hosted management.View) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(c, Finalizer) {
		return ctrl.Result{}, nil
	}
	if err := r.deleteToken(ctx, c.Name); err != nil {
		return ctrl.Result{}, err
	}
	if hosted == nil || hosted.Imported() && hadAgent(c) {
		if err := r.cleanup(ctx, c, hosted != nil); err != nil {
			return ctrl.Result{}, err
		}
	}
	if err := r.deleteProjects(ctx, c.Name); err != nil {
		return ctrl.Result{}, err
	}
	r.marks.Delete(c.Name)
	r.installs.Delete(c.Name)
	controllerutil.RemoveFinalizer(c, Finalizer)
	return ctrl.Result{}, r.Client.Update(ctx, c)
}

// cleanup creates the cleanup Job in the cluster (disconnect), through
// the agent's tunnel when it is up, else, for a hosted cluster, with the
// service-account token; when neither reaches the cluster it records a
// warning saying how to clean up by hand.
func (r *Reconciler) cleanup(ctx context.Context, c *mgmtv1.Cluster, hosted bool) error {
	var cfg *rest.Config
	why := "the agent is not connected"
	if rt, reg, ok := r.Tunnel.Transport(c.Name); ok {
		cfg = DownstreamConfig(reg, rt)
	} else if hosted && meta.IsStatusConditionTrue(c.Status.Conditions, mgmtv1.ConditionConnected) {
		var err error
		if cfg, err = r.direct(ctx, c); err != nil {
			why += " and the manager's own access failed (" + err.Error() + ")"
		}
	}
	if cfg == nil {
		r.event(c, corev1.EventTypeWarning, "DisconnectedOffline", "%s: its objects stay in the cluster; remove them with `clustersync agent cleanup --kubeconfig <cluster>`", why)
		return nil
	}
	if err := r.disconnect(ctx, c, cfg); err != nil {
		return fmt.Errorf("disconnect %s: %w", c.Name, err)
	}
	return nil
}

// hadAgent reports whether hosted cluster c may have the agent's objects:
// the manager reported on its agent (condition AgentConnected) and did
// not remove it since.
func hadAgent(c *mgmtv1.Cluster) bool {
	cond := meta.FindStatusCondition(c.Status.Conditions, mgmtv1.ConditionAgentConnected)
	return cond != nil && cond.Reason != ReasonAgentDisabled
}

// removeAgent handles a hosted cluster whose annotation
// clustersync.io/agent is "false": its registration token goes, the agent
// it had is removed (cleanup), and condition AgentConnected says so; once
// that is done nothing more happens until the annotation changes.
func (r *Reconciler) removeAgent(ctx context.Context, c *mgmtv1.Cluster) error {
	if !hadAgent(c) {
		return nil // never had one, or removed already
	}
	if err := r.deleteToken(ctx, c.Name); err != nil {
		return err
	}
	if err := r.cleanup(ctx, c, true); err != nil {
		return err
	}
	r.marks.Delete(c.Name)
	r.installs.Delete(c.Name)
	c.Status.Agent, c.Status.Capabilities = nil, nil
	meta.SetStatusCondition(&c.Status.Conditions, metav1.Condition{Type: mgmtv1.ConditionAgentConnected, Status: metav1.ConditionFalse,
		Reason: ReasonAgentDisabled, ObservedGeneration: c.Generation,
		Message: "annotation " + mgmtv1.AnnotationAgent + " is \"false\": the agent was removed (cleanup Job) and is not installed"})
	meta.RemoveStatusCondition(&c.Status.Conditions, mgmtv1.ConditionCapabilitiesValid)
	return r.Client.Status().Update(ctx, c)
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
	set setFunc) error {
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
