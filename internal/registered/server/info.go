package server

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// InfoNamespace and InfoName name the ConfigMap where the management
// server says where people reach it: key url (its external https URL) and
// key ca.crt (the CA to trust it with, PEM). Every authenticated user of
// the management cluster may read it (Role and RoleBinding InfoName), as
// kubeadm's kube-public/cluster-info.
const (
	InfoNamespace = "kube-public"
	InfoName      = "clustersync-manager"
)

// Info is what the ConfigMap InfoNamespace/InfoName holds.
type Info struct {
	// URL is the management server's external https URL.
	URL string
	// CAPEM is the CA that signed its serving certificate.
	CAPEM []byte
}

// PublishInfo writes in into ConfigMap InfoNamespace/InfoName (creating
// or updating it) and lets every authenticated user read it.
func PublishInfo(ctx context.Context, kube kubernetes.Interface, in Info) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: InfoName, Namespace: InfoNamespace},
		Data: map[string]string{"url": in.URL, "ca.crt": string(in.CAPEM)}}
	cms := kube.CoreV1().ConfigMaps(InfoNamespace)
	if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
		_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		if err != nil {
			return fmt.Errorf("ConfigMap %s/%s: %w", InfoNamespace, InfoName, err)
		}
	} else if err != nil {
		return fmt.Errorf("ConfigMap %s/%s: %w", InfoNamespace, InfoName, err)
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: InfoName, Namespace: InfoNamespace},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{InfoName}, Verbs: []string{"get"}}}}
	if _, err := kube.RbacV1().Roles(InfoNamespace).Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("Role %s/%s: %w", InfoNamespace, InfoName, err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: InfoName, Namespace: InfoNamespace},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: InfoName},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "system:authenticated"}}}
	if _, err := kube.RbacV1().RoleBindings(InfoNamespace).Create(ctx, rb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("RoleBinding %s/%s: %w", InfoNamespace, InfoName, err)
	}
	return nil
}

// ErrNoInfo is ReadInfo's error when no management server has published
// where it is.
var ErrNoInfo = errors.New("no clustersync manager has said where it is (ConfigMap " + InfoNamespace + "/" + InfoName + "): is the manager running with registered clusters on? Or give its URL")

// ReadInfo reads ConfigMap InfoNamespace/InfoName. Errors: ErrNoInfo, and
// the API server's.
func ReadInfo(ctx context.Context, kube kubernetes.Interface) (Info, error) {
	cm, err := kube.CoreV1().ConfigMaps(InfoNamespace).Get(ctx, InfoName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return Info{}, ErrNoInfo
	case err != nil:
		return Info{}, err
	case cm.Data["url"] == "":
		return Info{}, ErrNoInfo
	}
	return Info{URL: cm.Data["url"], CAPEM: []byte(cm.Data["ca.crt"])}, nil
}
