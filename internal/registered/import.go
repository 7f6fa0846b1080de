// Package registered holds what the CLI needs to register a cluster:
// creating the Cluster with spec.importedConfig and waiting for its
// registration token and commands. The pieces live in the subpackages:
// registration (pure logic), tunnel, server, controller and agent.
package registered

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/registered/server"
)

// ParseMember reads a --member value: "[KIND:]NAME=ROLE" with KIND user
// (the default), group or sa ("sa:NAMESPACE:NAME"), and ROLE
// cluster-owner, cluster-member or read-only. Errors quote the value.
func ParseMember(v string) (mgmtv1.ClusterMember, error) {
	who, role, ok := strings.Cut(v, "=")
	if !ok || who == "" {
		return mgmtv1.ClusterMember{}, fmt.Errorf("--member %q: want [user:|group:|sa:]NAME=ROLE", v)
	}
	switch role {
	case mgmtv1.RoleClusterOwner, mgmtv1.RoleClusterMember, mgmtv1.RoleReadOnly:
	default:
		return mgmtv1.ClusterMember{}, fmt.Errorf("--member %q: role %q: want cluster-owner, cluster-member or read-only", v, role)
	}
	m := mgmtv1.ClusterMember{Kind: "User", Name: who, Role: role}
	switch kind, name, found := strings.Cut(who, ":"); {
	case found && kind == "user":
		m.Name = name
	case found && kind == "group":
		m.Kind, m.Name = "Group", name
	case found && kind == "sa":
		if ns, n, ok := strings.Cut(name, ":"); !ok || ns == "" || n == "" {
			return mgmtv1.ClusterMember{}, fmt.Errorf("--member %q: want sa:NAMESPACE:NAME", v)
		}
		m.Kind, m.Name = "ServiceAccount", name
	}
	if m.Name == "" {
		return mgmtv1.ClusterMember{}, fmt.Errorf("--member %q: empty name", v)
	}
	return m, nil
}

// Cluster is registered cluster name with members, as Import creates it
// (spec.importedConfig; the display name is the name).
func Cluster(name string, members []mgmtv1.ClusterMember) *mgmtv1.Cluster {
	return &mgmtv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: mgmtv1.ClusterSpec{DisplayName: name, Members: members, ImportedConfig: &mgmtv1.ImportedConfig{}}}
}

// Import creates Cluster name as a registered cluster with members (or
// finds the one an earlier import created) and waits up to timeout for the
// management server to issue its registration token, which it returns with
// the manifest URL and commands in its status. Errors: a Cluster of that
// name that is not a registered cluster (naming its driver); a timeout
// (saying the manager must run with registered clusters on); API errors.
func Import(ctx context.Context, c client.Client, name string, members []mgmtv1.ClusterMember, timeout time.Duration) (*mgmtv1.ClusterRegistrationToken, error) {
	cl := Cluster(name, members)
	err := c.Create(ctx, cl)
	if apierrors.IsAlreadyExists(err) {
		if err := c.Get(ctx, types.NamespacedName{Name: name}, cl); err != nil {
			return nil, err
		}
		if cl.Spec.ImportedConfig == nil {
			return nil, fmt.Errorf("cluster %s exists and is not a registered cluster (driver %q); choose another name", name, cl.Status.Driver)
		}
	} else if err != nil {
		return nil, fmt.Errorf("create cluster %s: %w", name, err)
	}
	var crt mgmtv1.ClusterRegistrationToken
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, types.NamespacedName{Namespace: server.TokenNamespace, Name: name}, &crt)
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil && crt.Status.Command != "", err
	})
	if err != nil {
		return nil, fmt.Errorf("cluster %s: no registration token after %s: is `clustersync manager` running with --serve-addr? (%w)", name, timeout, err)
	}
	return &crt, nil
}
