package access

import (
	"context"
	"fmt"
	"slices"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// What EnsureServiceAccountToken creates in the managed cluster: a service
// account, its binding to the built-in cluster-admin ClusterRole, and a
// Secret of type kubernetes.io/service-account-token for it, which
// kube-controller-manager's token controller fills. Rancher does the same
// for hosted clusters (Rancher's EKS driver, https://github.com/rancher/eks-operator, "Service
// Account Token Generation"; rancher/rancher pkg/serviceaccounttoken).
const (
	ServiceAccountNamespace = "kube-system"
	ServiceAccountName      = "clustersync"
	ClusterRoleBindingName  = "clustersync"
	TokenSecretName         = "clustersync-token"
)

// ManagedByLabel and ManagedByValue mark the objects clustersync created and
// may change, here and in the managed cluster (the
// app.kubernetes.io/managed-by recommended label).
const (
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedByValue = "clustersync"
)

// TokenWait bounds how long EnsureServiceAccountToken waits for the token
// controller when ctx has no earlier deadline.
const TokenWait = 2 * time.Minute

// EnsureServiceAccountToken makes sure the managed cluster behind downstream
// has ServiceAccount kube-system/clustersync, ClusterRoleBinding clustersync
// that gives it cluster-admin, and Secret kube-system/clustersync-token of
// type kubernetes.io/service-account-token annotated with the service
// account's name, creating what is missing, and returns the Secret's
// data.token once the token controller has written it and the API server
// accepts it (a TokenReview through downstream says it authenticates as the
// service account; skipped when downstream may not create TokenReviews).
// Called again it returns the same token.
//
// It waits, polling with backoff (100 ms doubling up to 2 s), until ctx ends
// or TokenWait has passed; a Secret the token controller deleted (it does so
// when the service account was recreated) is created again. Errors: an API
// error naming the object; a ClusterRoleBinding clustersync with another
// role, or a Secret clustersync-token of another type or for another service
// account, which it does not change; a timeout naming the Secret and what
// it waited for, wrapping ctx's cause.
func EnsureServiceAccountToken(ctx context.Context, downstream kubernetes.Interface) (string, error) {
	labels := map[string]string{ManagedByLabel: ManagedByValue}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: ServiceAccountName, Namespace: ServiceAccountNamespace, Labels: labels}}
	if _, err := downstream.CoreV1().ServiceAccounts(ServiceAccountNamespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("create ServiceAccount %s/%s: %w", ServiceAccountNamespace, ServiceAccountName, err)
	}
	if err := ensureBinding(ctx, downstream, labels); err != nil {
		return "", err
	}

	ctx, cancel := context.WithTimeout(ctx, TokenWait)
	defer cancel()
	for delay := 100 * time.Millisecond; ; delay = min(2*delay, 2*time.Second) {
		token, err := readToken(ctx, downstream, labels)
		if err != nil {
			return "", err
		}
		waitingFor := "the token controller to write " + corev1.ServiceAccountTokenKey
		if token != "" {
			ok, err := accepted(ctx, downstream, token)
			if err != nil || ok {
				return token, err
			}
			waitingFor = "the API server to accept its token"
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return "", fmt.Errorf("Secret %s/%s: timed out waiting for %s: %w", ServiceAccountNamespace, TokenSecretName, waitingFor, context.Cause(ctx))
		case <-t.C:
		}
	}
}

// accepted tells whether the API server authenticates token as the
// service account, asking it with a TokenReview. A fresh token can be
// refused for a moment: the API server checks it against its cached copy of
// the Secret (k8s.io/kubernetes pkg/serviceaccount/legacy.go, "Token does
// not match server's copy"). When downstream may not create TokenReviews
// the token is taken as accepted.
func accepted(ctx context.Context, downstream kubernetes.Interface, token string) (bool, error) {
	review, err := downstream.AuthenticationV1().TokenReviews().Create(ctx,
		&authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	if apierrors.IsForbidden(err) {
		return true, nil
	}
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("timed out waiting for the API server to accept its token: %w", err)
		}
		return false, fmt.Errorf("Secret %s/%s: TokenReview: %w", ServiceAccountNamespace, TokenSecretName, err)
	}
	want := "system:serviceaccount:" + ServiceAccountNamespace + ":" + ServiceAccountName
	return review.Status.Authenticated && review.Status.User.Username == want, nil
}

// readToken returns the token of Secret clustersync-token, "" while the
// token controller has not written it, creating the Secret when it is
// missing.
func readToken(ctx context.Context, downstream kubernetes.Interface, labels map[string]string) (string, error) {
	secrets := downstream.CoreV1().Secrets(ServiceAccountNamespace)
	s, err := secrets.Get(ctx, TokenSecretName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		s, err = secrets.Create(ctx, tokenSecret(labels), metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return "", nil
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("timed out waiting for the token controller to write %s: %w", corev1.ServiceAccountTokenKey, err)
		}
		return "", fmt.Errorf("Secret %s/%s: %w", ServiceAccountNamespace, TokenSecretName, err)
	}
	if s.Type != corev1.SecretTypeServiceAccountToken || s.Annotations[corev1.ServiceAccountNameKey] != ServiceAccountName {
		return "", fmt.Errorf("Secret %s/%s exists with type %s for service account %q, want type %s for %q; not changing it",
			ServiceAccountNamespace, TokenSecretName, s.Type, s.Annotations[corev1.ServiceAccountNameKey], corev1.SecretTypeServiceAccountToken, ServiceAccountName)
	}
	return string(s.Data[corev1.ServiceAccountTokenKey]), nil
}

// ensureBinding creates ClusterRoleBinding clustersync, or adds the service
// account to its subjects when it exists with role cluster-admin.
func ensureBinding(ctx context.Context, downstream kubernetes.Interface, labels map[string]string) error {
	subject := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: ServiceAccountName, Namespace: ServiceAccountNamespace}
	role := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"}
	bindings := downstream.RbacV1().ClusterRoleBindings()
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: ClusterRoleBindingName, Labels: labels},
		Subjects:   []rbacv1.Subject{subject},
		RoleRef:    role,
	}
	_, err := bindings.Create(ctx, crb, metav1.CreateOptions{})
	if err == nil {
		return nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create ClusterRoleBinding %s: %w", ClusterRoleBindingName, err)
	}
	got, err := bindings.Get(ctx, ClusterRoleBindingName, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("ClusterRoleBinding %s: %w", ClusterRoleBindingName, err)
	}
	if got.RoleRef != role {
		return fmt.Errorf("ClusterRoleBinding %s exists with role %s %s, want ClusterRole cluster-admin; not changing it", ClusterRoleBindingName, got.RoleRef.Kind, got.RoleRef.Name)
	}
	if slices.Contains(got.Subjects, subject) {
		return nil
	}
	got.Subjects = append(got.Subjects, subject)
	if _, err := bindings.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update ClusterRoleBinding %s: %w", ClusterRoleBindingName, err)
	}
	return nil
}

// tokenSecret is the Secret the token controller fills for the service
// account.
func tokenSecret(labels map[string]string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:        TokenSecretName,
			Namespace:   ServiceAccountNamespace,
			Labels:      labels,
			Annotations: map[string]string{corev1.ServiceAccountNameKey: ServiceAccountName},
		},
		Type: corev1.SecretTypeServiceAccountToken,
	}
}
