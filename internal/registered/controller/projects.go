package controller

import (
	"context"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/registered/registration"
)

// SystemNamespaces returns the namespaces the System project starts with,
// where they exist (Rancher's list, with clustersync-system for
// cattle-system).
func SystemNamespaces() []string {
	return []string{"kube-system", "kube-public", registration.AgentNamespace, "ingress-nginx"}
}

// ProjectName is the name of a cluster's project object:
// "<cluster>-default" or "<cluster>-system".
func ProjectName(cluster, project string) string { return cluster + "-" + project }

// ensureProjects keeps the Default and System projects of an Active
// cluster: the Project objects and the clustersync.io/project annotation
// on their starting namespaces (only where a namespace has none: a
// namespace a user moved stays moved).
func (r *Reconciler) ensureProjects(ctx context.Context, c *mgmtv1.Cluster, kube kubernetes.Interface) error {
	type proj struct {
		name, display string
		system        bool
		start         []string
	}
	projects := []proj{{"default", "Default", false, []string{"default"}}, {"system", "System", true, SystemNamespaces()}}
	for _, p := range projects {
		obj := &mgmtv1.Project{ObjectMeta: metav1.ObjectMeta{Name: ProjectName(c.Name, p.name)}}
		if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, obj, func() error {
			obj.Spec = mgmtv1.ProjectSpec{ClusterName: c.Name, DisplayName: p.display, System: p.system}
			return controllerutil.SetOwnerReference(c, obj, r.Client.Scheme())
		}); err != nil {
			return err
		}
		value := c.Name + ":" + ProjectName(c.Name, p.name)
		for _, ns := range p.start {
			err := annotateOnce(ctx, kube, ns, value)
			if err != nil && !apierrors.IsNotFound(err) {
				return err
			}
		}
	}
	return nil
}

// projectMembership sets each project's status.namespaces from the
// clustersync.io/project annotations downstream (one namespace list), so
// that a namespace moved or added by annotation shows at the next ping.
func (r *Reconciler) projectMembership(ctx context.Context, c *mgmtv1.Cluster, kube kubernetes.Interface) error {
	list, err := kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, p := range []string{"default", "system"} {
		value := c.Name + ":" + ProjectName(c.Name, p)
		var members []string
		for _, ns := range list.Items {
			if ns.Annotations[mgmtv1.ProjectAnnotation] == value {
				members = append(members, ns.Name)
			}
		}
		var obj mgmtv1.Project
		if err := r.Client.Get(ctx, types.NamespacedName{Name: ProjectName(c.Name, p)}, &obj); err != nil {
			return client.IgnoreNotFound(err) // made by the next downstream sync
		}
		if !slices.Equal(obj.Status.Namespaces, members) {
			obj.Status.Namespaces = members
			if err := r.Client.Status().Update(ctx, &obj); err != nil {
				return err
			}
		}
	}
	return nil
}

// annotateOnce sets the project annotation on namespace ns unless it has
// one already.
func annotateOnce(ctx context.Context, kube kubernetes.Interface, ns, value string) error {
	obj, err := kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if _, ok := obj.Annotations[mgmtv1.ProjectAnnotation]; ok {
		return nil
	}
	if obj.Annotations == nil {
		obj.Annotations = map[string]string{}
	}
	obj.Annotations[mgmtv1.ProjectAnnotation] = value
	_, err = kube.CoreV1().Namespaces().Update(ctx, obj, metav1.UpdateOptions{})
	return err
}

// deleteProjects removes the cluster's Project objects.
func (r *Reconciler) deleteProjects(ctx context.Context, cluster string) error {
	for _, p := range []string{"default", "system"} {
		obj := &mgmtv1.Project{ObjectMeta: metav1.ObjectMeta{Name: ProjectName(cluster, p)}}
		if err := r.Client.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return nil
}
