package deploy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// DefaultServiceAccountNamespace is the namespace of a --service-account
// given without one, as `vcluster connect --service-account` takes it.
const DefaultServiceAccountNamespace = "kube-system"

// DefaultTokenExpiration is the life of a service account token when
// --token-expiration is not given: 10 years, vCluster's "eternal"
// (pkg/util/serviceaccount in https://github.com/loft-sh/vcluster). The
// virtual API server may shorten it (--service-account-max-token-expiration).
const DefaultTokenExpiration = 10 * 365 * 24 * time.Hour

// ErrServiceAccountMissing is wrapped by ServiceAccountKubeconfig's error
// when the service account does not exist and no cluster role was given.
var ErrServiceAccountMissing = errors.New("the service account does not exist")

// ServiceAccountOptions are `virtual connect`'s --service-account,
// --cluster-role and --token-expiration.
type ServiceAccountOptions struct {
	// Ref is NAMESPACE/NAME or NAME (in DefaultServiceAccountNamespace).
	Ref string
	// ClusterRole, when set, creates the service account if it is missing
	// and binds it to this ClusterRole with ClusterRoleBinding
	// ServiceAccountBindingName.
	ClusterRole string
	// Expiration is the token's requested life; 0 means
	// DefaultTokenExpiration.
	Expiration time.Duration
}

// ParseServiceAccount splits ref, NAMESPACE/NAME or NAME (then in
// DefaultServiceAccountNamespace); the error names what is wrong with it.
func ParseServiceAccount(ref string) (namespace, name string, err error) {
	namespace, name = DefaultServiceAccountNamespace, ref
	if ns, n, ok := strings.Cut(ref, "/"); ok {
		namespace, name = ns, n
	}
	if errs := validation.IsDNS1123Label(namespace); len(errs) > 0 {
		return "", "", fmt.Errorf("--service-account %q: namespace %q: %s (want NAMESPACE/NAME or NAME)", ref, namespace, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return "", "", fmt.Errorf("--service-account %q: name %q: %s (want NAMESPACE/NAME or NAME)", ref, name, strings.Join(errs, "; "))
	}
	return namespace, name, nil
}

// ServiceAccountBindingName is the ClusterRoleBinding --cluster-role makes
// for service account name of namespace: vcluster-sa-NAME-NAMESPACE, as
// vCluster names it (shortened with a hash past 63 characters).
func ServiceAccountBindingName(name, namespace string) string {
	return translate.SafeConcatName("vcluster", "sa", name, namespace)
}

// ServiceAccountKubeconfig returns kc, a virtual cluster's one-context
// kubeconfig, with its user's client certificate replaced by a token of a
// service account of the virtual cluster (virtual, a client of it made
// from kc), as `vcluster connect --service-account` does. With
// o.ClusterRole the account is created when missing and bound to the role;
// a binding of that name to another role is replaced, and out says so.
// Errors: a malformed o.Ref, a missing namespace, a missing account without
// o.ClusterRole, and what the API server refuses.
func ServiceAccountKubeconfig(ctx context.Context, out io.Writer, virtual kubernetes.Interface, kc []byte, o ServiceAccountOptions) ([]byte, error) {
	ns, name, err := ParseServiceAccount(o.Ref)
	if err != nil {
		return nil, err
	}
	if _, err := virtual.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
		return nil, fmt.Errorf("--service-account %s/%s: namespace %s of the virtual cluster: %w", ns, name, ns, err)
	}
	_, err = virtual.CoreV1().ServiceAccounts(ns).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err) && o.ClusterRole == "":
		return nil, fmt.Errorf("--service-account %s/%s does not exist in the virtual cluster (%w): create it, or add --cluster-role ROLE to have it created and bound", ns, name, ErrServiceAccountMissing)
	case apierrors.IsNotFound(err):
		if _, err := virtual.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}, metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("create service account %s/%s: %w", ns, name, err)
		}
		fmt.Fprintf(out, "Created service account %s/%s in the virtual cluster.\n", ns, name)
	case err != nil:
		return nil, fmt.Errorf("--service-account %s/%s: %w", ns, name, err)
	}
	if o.ClusterRole != "" {
		if err := bindServiceAccount(ctx, out, virtual, ns, name, o.ClusterRole); err != nil {
			return nil, err
		}
	}
	seconds := int64(max(o.Expiration, 0).Seconds())
	if seconds == 0 {
		seconds = int64(DefaultTokenExpiration.Seconds())
	}
	// vCluster's audiences.
	audiences := []string{"https://kubernetes.default.svc.cluster.local", "https://kubernetes.default.svc", "https://kubernetes.default"}
	tr, err := virtual.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{Audiences: audiences, ExpirationSeconds: &seconds}}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("a token for service account %s/%s: %w", ns, name, err)
	}
	fmt.Fprintf(out, "The kubeconfig authenticates as service account %s/%s with a token valid until %s.\n", ns, name, tr.Status.ExpirationTimestamp.UTC().Format(time.RFC3339))
	return WithToken(kc, tr.Status.Token)
}

// bindServiceAccount binds service account ns/name to ClusterRole role
// with ClusterRoleBinding ServiceAccountBindingName. A binding of that
// name to another role is deleted and made anew (a roleRef cannot
// change), and out says which role it had.
func bindServiceAccount(ctx context.Context, out io.Writer, virtual kubernetes.Interface, ns, name, role string) error {
	crbs := virtual.RbacV1().ClusterRoleBindings()
	want := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: ServiceAccountBindingName(name, ns)},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns}},
	}
	have, err := crbs.Get(ctx, want.Name, metav1.GetOptions{})
	switch {
	case err == nil && have.RoleRef == want.RoleRef:
		return nil
	case err == nil:
		if err := crbs.Delete(ctx, want.Name, metav1.DeleteOptions{}); err != nil {
			return fmt.Errorf("replace ClusterRoleBinding %s: %w", want.Name, err)
		}
		fmt.Fprintf(out, "ClusterRoleBinding %s bound %s %s; it now binds ClusterRole %s.\n", want.Name, have.RoleRef.Kind, have.RoleRef.Name, role)
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("ClusterRoleBinding %s: %w", want.Name, err)
	}
	if _, err := crbs.Create(ctx, want, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("bind service account %s/%s to ClusterRole %s: %w", ns, name, role, err)
	}
	fmt.Fprintf(out, "Bound service account %s/%s to ClusterRole %s (ClusterRoleBinding %s).\n", ns, name, role, want.Name)
	return nil
}

// WithToken returns kubeconfig kc with every user's credential replaced by
// bearer token token.
func WithToken(kc []byte, token string) ([]byte, error) {
	cfg, err := clientcmd.Load(kc)
	if err != nil {
		return nil, err
	}
	for name := range cfg.AuthInfos {
		cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token}
	}
	return clientcmd.Write(*cfg)
}
