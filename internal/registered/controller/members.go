package controller

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/registered/registration"
	"github.com/clustersync/clustersync/internal/registered/server"
)

// LabelMember marks the downstream ClusterRoleBindings of members.
const LabelMember = "clustersync.io/member"

// ClusterRoleFor is the downstream ClusterRole a member role is bound to:
// cluster-owner → cluster-admin, cluster-member → edit, read-only → view
// (Kubernetes' default roles).
func ClusterRoleFor(role string) string {
	switch role {
	case mgmtv1.RoleClusterOwner:
		return "cluster-admin"
	case mgmtv1.RoleClusterMember:
		return "edit"
	}
	return "view"
}

// MemberBinding is the downstream ClusterRoleBinding of member m: named
// clustersync-member-<hash of kind, name and role>, its subject the user
// or group the proxy impersonates.
func MemberBinding(cluster string, m mgmtv1.ClusterMember) *rbacv1.ClusterRoleBinding {
	sum := sha256.Sum256([]byte(m.Kind + "\x00" + m.Name + "\x00" + m.Role))
	subject := rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: server.MemberUsername(m)}
	if m.Kind == "Group" {
		subject.Kind = rbacv1.GroupKind
	}
	return &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "clustersync-member-" + hex.EncodeToString(sum[:])[:16], Labels: map[string]string{
			registration.LabelManagedBy: registration.ManagedByValue, registration.LabelCluster: cluster, LabelMember: "true"}},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ClusterRoleFor(m.Role)},
		Subjects: []rbacv1.Subject{subject},
	}
}

// ensureMembers keeps one downstream ClusterRoleBinding per member of
// Cluster.Members (spec.members and spec.importedConfig.members) and
// deletes the member bindings of members that were removed.
func ensureMembers(ctx context.Context, kube kubernetes.Interface, c *mgmtv1.Cluster) error {
	want := map[string]bool{}
	for _, m := range c.Members() {
		b := MemberBinding(c.Name, m)
		want[b.Name] = true
		if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("member %s %s: ClusterRoleBinding %s: %w", m.Kind, m.Name, b.Name, err)
		}
	}
	list, err := kube.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{LabelSelector: LabelMember + "=true"})
	if err != nil {
		return err
	}
	for _, b := range list.Items {
		if !want[b.Name] {
			if err := kube.RbacV1().ClusterRoleBindings().Delete(ctx, b.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
		}
	}
	return nil
}
