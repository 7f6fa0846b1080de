package controller

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/access"
	"github.com/clustersync/clustersync/internal/hosted/management"
	"github.com/clustersync/clustersync/internal/registered/registration"
)

// FieldManager is the server-side apply field manager of the agent's
// objects the manager applies to hosted clusters.
const FieldManager = "clustersync-manager"

// Reinstall is how often the agent's manifest is applied again to a hosted
// cluster whose agent has not dialed in (an agent Deployment someone
// deleted comes back).
const Reinstall = time.Minute

// Reasons of condition AgentConnected (hosted clusters).
const (
	// ReasonAgentWaitingForAccess: the manager has not reached the
	// cluster's API server yet (condition Connected), so it cannot install
	// the agent.
	ReasonAgentWaitingForAccess = "WaitingForAccess"
	// ReasonAgentInstalled: the manager applied the agent's manifest and
	// waits for the agent to dial in.
	ReasonAgentInstalled = "Installed"
	// ReasonAgentInstallFailed: applying the manifest failed; the message
	// says why.
	ReasonAgentInstallFailed = "InstallFailed"
	// ReasonAgentRegistrationRequired: the API endpoint is private, the
	// manager cannot install the agent; someone inside the network runs
	// the registration command.
	ReasonAgentRegistrationRequired = "RegistrationRequired"
	// ReasonAgentDisabled: annotation clustersync.io/agent is "false".
	ReasonAgentDisabled = "AgentDisabled"
)

// installMark is what the agent's manifest was last applied with.
type installMark struct {
	token, image string
	at           time.Time
}

// hostedAgentDown handles a hosted cluster whose agent is not connected:
// it installs the agent when the manager reaches the API server itself
// (again when the token or the image changed, or after Reinstall), and
// says in condition AgentConnected what it waits for. It returns when to
// look again.
func (r *Reconciler) hostedAgentDown(ctx context.Context, c *mgmtv1.Cluster, token string, set setFunc) time.Duration {
	connected := meta.FindStatusCondition(c.Status.Conditions, mgmtv1.ConditionConnected)
	switch {
	case connected != nil && connected.Status == metav1.ConditionFalse && connected.Reason == management.ReasonTunnelRequired:
		set(mgmtv1.ConditionAgentConnected, metav1.ConditionFalse, ReasonAgentRegistrationRequired,
			"the API endpoint is private and the manager cannot reach it: run the registration command (`clustersync cluster show "+c.Name+
				"`, or ClusterRegistrationToken "+hostedv1.Namespace+"/"+c.Name+") from inside the cluster's network")
		return r.ping() * 4
	case connected == nil || connected.Status != metav1.ConditionTrue || connected.Reason == management.ReasonAgentConnected || c.Status.ServiceAccountTokenSecret == "":
		set(mgmtv1.ConditionAgentConnected, metav1.ConditionFalse, ReasonAgentWaitingForAccess,
			"waiting for the manager to reach the cluster's API server (condition Connected) to install the agent")
		return r.ping() * 4
	}
	// Also when the manifest was applied a moment ago: the agent may have
	// connected since and gone again, and the condition must not stay True.
	installed := func(next time.Duration) time.Duration {
		set(mgmtv1.ConditionAgentConnected, metav1.ConditionFalse, ReasonAgentInstalled,
			fmt.Sprintf("the manager applied the agent (Deployment %s/%s, image %s); waiting for it to dial in", registration.AgentNamespace, registration.AgentName, r.AgentImage))
		return next
	}
	mark := installMark{token: token, image: r.AgentImage, at: r.now()}
	if v, ok := r.installs.Load(c.Name); ok {
		last := v.(installMark)
		if last.token == mark.token && last.image == mark.image && mark.at.Sub(last.at) < Reinstall {
			return installed(Reinstall - mark.at.Sub(last.at))
		}
	}
	cfg, err := r.direct(ctx, c)
	if err == nil {
		err = r.applyAgent(ctx, cfg, c.Name, token)
	}
	if err != nil {
		set(mgmtv1.ConditionAgentConnected, metav1.ConditionFalse, ReasonAgentInstallFailed, err.Error())
		return r.ping() * 4
	}
	r.installs.Store(c.Name, mark)
	return installed(Reinstall)
}

// RegistrationRequired reports whether hosted cluster c's agent must be
// installed by hand, from inside its network: the manager cannot reach
// its private endpoint (condition AgentConnected False, reason
// RegistrationRequired). `clustersync cluster show` and the dashboard
// then show the registration command.
func RegistrationRequired(c *mgmtv1.Cluster) bool {
	cond := meta.FindStatusCondition(c.Status.Conditions, mgmtv1.ConditionAgentConnected)
	return c.Spec.ImportedConfig == nil && cond != nil && cond.Status == metav1.ConditionFalse && cond.Reason == ReasonAgentRegistrationRequired
}

// direct is the configuration that reaches hosted cluster c's API server
// with the service-account token the management controller keeps
// (status.serviceAccountTokenSecret). Errors: no such Secret yet, or one
// that does not hold usable credentials (access.LoadToken).
func (r *Reconciler) direct(ctx context.Context, c *mgmtv1.Cluster) (*rest.Config, error) {
	if c.Status.ServiceAccountTokenSecret == "" {
		return nil, fmt.Errorf("cluster %s: no service-account token yet (status.serviceAccountTokenSecret)", c.Name)
	}
	creds, err := access.LoadToken(ctx, r.Client, types.NamespacedName{Namespace: hostedv1.Namespace, Name: c.Status.ServiceAccountTokenSecret})
	if err != nil {
		return nil, err
	}
	cfg, err := access.RESTConfig(creds.Endpoint, creds.CAData, access.StaticToken(creds.Token))
	if err != nil {
		return nil, err
	}
	cfg.Timeout = management.AccessTimeout
	return cfg, nil
}

// applyAgent applies the agent's manifest (registration.ManifestObjects,
// with the cluster's registration token, the manager's URL and CA
// checksum, and AgentImage) to the cluster cfg reaches, with server-side
// apply as FieldManager. An object of the same name that is not
// clustersync's (no label app.kubernetes.io/managed-by=clustersync) is
// left alone: the error names it, except for the namespace, which the
// agent shares with what is already there (and which the cleanup then
// keeps).
func (r *Reconciler) applyAgent(ctx context.Context, cfg *rest.Config, cluster, token string) error {
	objs, err := registration.ManifestObjects(registration.ManifestOptions{ServerURL: r.URL, CAChecksum: registration.CAChecksum(r.CAPEM),
		Token: token, Cluster: cluster, Image: r.AgentImage})
	if err != nil {
		return err
	}
	k, err := client.New(cfg, client.Options{})
	if err != nil {
		return err
	}
	for _, obj := range objs {
		raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return err
		}
		u := &unstructured.Unstructured{Object: raw}
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		unstructured.RemoveNestedField(u.Object, "status")
		what := u.GetKind() + " " + u.GetName()
		if u.GetNamespace() != "" {
			what = u.GetKind() + " " + u.GetNamespace() + "/" + u.GetName()
		}
		existing := &unstructured.Unstructured{}
		existing.SetGroupVersionKind(u.GroupVersionKind())
		err = k.Get(ctx, client.ObjectKeyFromObject(u), existing)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return fmt.Errorf("installing the agent: %s: %w", what, err)
		case existing.GetLabels()[registration.LabelManagedBy] != registration.ManagedByValue && u.GetKind() == "Namespace":
			continue
		case existing.GetLabels()[registration.LabelManagedBy] != registration.ManagedByValue:
			return fmt.Errorf("installing the agent: %s exists and is not clustersync's (no label %s=%s); it is left alone: remove it, or set annotation %s: \"false\" on Cluster %s",
				what, registration.LabelManagedBy, registration.ManagedByValue, mgmtv1.AnnotationAgent, cluster)
		}
		if err := k.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
			return fmt.Errorf("installing the agent: %s: %w", what, err)
		}
	}
	return nil
}
