package controlplane

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"strings"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// AnnotationExportedFrom is the annotation of an exported kubeconfig
// Secret naming the host namespace of the virtual cluster it belongs to,
// so that a Secret in another namespace is known as this one's (its
// vcluster.loft.sh/managed-by label names the virtual cluster).
const AnnotationExportedFrom = "clustersync.io/host-namespace"

// tokenLifetime is how long a service account token of an exported
// kubeconfig is asked for (vCluster asks for 10 years,
// pkg/util/serviceaccount of https://github.com/loft-sh/vcluster); one is
// replaced a day before it ends, or as soon as it no longer authenticates.
const tokenLifetime = 10 * 365 * 24 * time.Hour

// ExportedKubeconfig is the kubeconfig of Secret s of virtual cluster name:
// context, cluster and user s.Context (default name), server s.Server
// (default server), the CA unless s.Insecure, and token when not "" (the
// service account's), else the admin client certificate and key.
func ExportedKubeconfig(s config.KubeconfigSecret, name, server string, ca, cert, key []byte, token string) *clientcmdapi.Config {
	ctxName := s.Context
	if ctxName == "" {
		ctxName = name
	}
	if s.Server != "" {
		server = s.Server
	}
	cfg := clientcmdapi.NewConfig()
	cluster := &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	if s.Insecure {
		cluster = &clientcmdapi.Cluster{Server: server, InsecureSkipTLSVerify: true}
	}
	cfg.Clusters[ctxName] = cluster
	user := &clientcmdapi.AuthInfo{ClientCertificateData: cert, ClientKeyData: key}
	if token != "" {
		user = &clientcmdapi.AuthInfo{Token: token}
	}
	cfg.AuthInfos[ctxName] = user
	cfg.Contexts[ctxName] = &clientcmdapi.Context{Cluster: ctxName, AuthInfo: ctxName}
	cfg.CurrentContext = ctxName
	return cfg
}

// Exporter writes the kubeconfig Secrets of exportKubeConfig
// (config.ExportKubeConfig.KubeconfigSecrets) of a pod control plane and
// keeps them current.
type Exporter struct {
	// Pod is the control plane: its name, host namespace and data folder
	// (the admin certificate in its pki folder).
	Pod PodOptions
	// Secrets are the Secrets to write.
	Secrets []config.KubeconfigSecret
	// Host writes the Secrets; Virtual makes the service accounts'
	// tokens.
	Host, Virtual kubernetes.Interface
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Run exports every Secret every 10 s until ctx ends, the first time 10 s
// after it starts (the caller exports once before), so that a Secret
// deleted or changed by someone, or a token that stopped authenticating
// (its service account deleted), is written anew within seconds; a
// failure is logged and tried again at the next round.
func (e Exporter) Run(ctx context.Context, log logr.Logger) error {
	_ = wait.PollUntilContextCancel(ctx, 10*time.Second, false, func(ctx context.Context) (bool, error) {
		if err := e.Export(ctx); err != nil && ctx.Err() == nil {
			log.Error(err, "exporting the kubeconfig Secrets (exportKubeConfig)")
		}
		return false, nil
	})
	return nil
}

// Export writes each Secret once: created when missing, updated when its
// kubeconfig differs. A Secret of the name that another virtual cluster or
// someone else owns is left alone and reported. Errors name the Secret.
func (e Exporter) Export(ctx context.Context) error {
	l := Layout{Dir: e.Pod.Dir}
	files := map[string][]byte{}
	for _, f := range []string{"ca.crt", "admin.crt", "admin.key"} {
		data, err := os.ReadFile(l.PKI(f))
		if err != nil {
			return err
		}
		files[f] = data
	}
	var errs []error
	for _, s := range e.Secrets {
		if err := e.export(ctx, s, files); err != nil {
			errs = append(errs, fmt.Errorf("host secret %s/%s: %w", s.Namespace, s.Name, err))
		}
	}
	return errors.Join(errs...)
}

func (e Exporter) export(ctx context.Context, s config.KubeconfigSecret, files map[string][]byte) error {
	secrets := e.Host.CoreV1().Secrets(s.Namespace)
	got, err := secrets.Get(ctx, s.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		got = nil
	case err != nil:
		return err
	case got.Labels[translate.LabelManagedBy] != e.Pod.Name ||
		s.Namespace != e.Pod.Namespace && got.Annotations[AnnotationExportedFrom] != e.Pod.Namespace:
		return fmt.Errorf("exists and is not virtual cluster %s's (label %s, annotation %s); rename or remove it",
			e.Pod.Name, translate.LabelManagedBy, AnnotationExportedFrom)
	}
	var token string
	if sa := s.ServiceAccount; sa.Name != "" {
		if got != nil {
			token = string(got.Data["token"])
		}
		if token, err = e.serviceAccountToken(ctx, sa, token); err != nil {
			return err
		}
	}
	kc, err := clientcmd.Write(*ExportedKubeconfig(s, e.Pod.Name, ServiceURL(e.Pod.Name, e.Pod.Namespace),
		files["ca.crt"], files["admin.crt"], files["admin.key"], token))
	if err != nil {
		return err
	}
	data := map[string][]byte{"config": kc}
	if !s.Insecure {
		data["certificate-authority"] = files["ca.crt"]
	}
	if token != "" {
		data["token"] = []byte(token)
	} else {
		data["client-certificate"], data["client-key"] = files["admin.crt"], files["admin.key"]
	}
	want := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace,
		Labels:      map[string]string{translate.LabelManagedBy: e.Pod.Name},
		Annotations: map[string]string{AnnotationExportedFrom: e.Pod.Namespace}}, Data: data}
	if got == nil {
		_, err = secrets.Create(ctx, want, metav1.CreateOptions{})
		return err
	}
	if maps.EqualFunc(got.Data, data, bytes.Equal) && got.Annotations[AnnotationExportedFrom] == e.Pod.Namespace {
		return nil
	}
	got.Data = data
	if got.Annotations == nil {
		got.Annotations = map[string]string{}
	}
	got.Annotations[AnnotationExportedFrom] = e.Pod.Namespace
	_, err = secrets.Update(ctx, got, metav1.UpdateOptions{})
	return err
}

// serviceAccountToken returns current when it still authenticates as
// service account sa of the virtual cluster and lasts more than a day,
// else a new token of it (tokenLifetime), after making sure the service
// account exists (created when a clusterRole is given, as vCluster does)
// and is bound to sa.ClusterRole (ClusterRoleBinding
// vcluster-sa-NAME-NAMESPACE, vCluster's name).
func (e Exporter) serviceAccountToken(ctx context.Context, sa config.ExportServiceAccount, current string) (string, error) {
	ns := sa.Namespace
	if ns == "" {
		ns = "kube-system"
	}
	user := "system:serviceaccount:" + ns + ":" + sa.Name
	if current != "" && e.tokenLasts(current) {
		r, err := e.Virtual.AuthenticationV1().TokenReviews().Create(ctx,
			&authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: current}}, metav1.CreateOptions{})
		if err == nil && r.Status.Authenticated && r.Status.User.Username == user {
			if err := e.bindClusterRole(ctx, sa, ns); err != nil {
				return "", err
			}
			return current, nil
		}
	}
	sas := e.Virtual.CoreV1().ServiceAccounts(ns)
	if _, err := sas.Get(ctx, sa.Name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		if sa.ClusterRole == "" {
			return "", fmt.Errorf("service account %s/%s of the virtual cluster does not exist; create it, or set serviceAccount.clusterRole and the syncer creates it", ns, sa.Name)
		}
		if _, err := sas.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa.Name, Namespace: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return "", fmt.Errorf("create service account %s/%s in the virtual cluster: %w", ns, sa.Name, err)
		}
	} else if err != nil {
		return "", err
	}
	if err := e.bindClusterRole(ctx, sa, ns); err != nil {
		return "", err
	}
	seconds := int64(tokenLifetime / time.Second)
	tr, err := sas.CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds}}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("token of service account %s/%s of the virtual cluster: %w", ns, sa.Name, err)
	}
	return tr.Status.Token, nil
}

// bindClusterRole makes ClusterRoleBinding vcluster-sa-NAME-NAMESPACE bind
// sa.ClusterRole to the service account, when a cluster role is given.
func (e Exporter) bindClusterRole(ctx context.Context, sa config.ExportServiceAccount, ns string) error {
	if sa.ClusterRole == "" {
		return nil
	}
	name := translate.SafeConcatName("vcluster", "sa", sa.Name, ns)
	want := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: sa.ClusterRole},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: ns}}}
	crbs := e.Virtual.RbacV1().ClusterRoleBindings()
	got, err := crbs.Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = crbs.Create(ctx, want, metav1.CreateOptions{})
	case err == nil && got.RoleRef != want.RoleRef:
		// The role of a binding cannot change: replace it.
		if err = crbs.Delete(ctx, name, metav1.DeleteOptions{}); err == nil {
			_, err = crbs.Create(ctx, want, metav1.CreateOptions{})
		}
	}
	if err != nil {
		return fmt.Errorf("cluster role binding %s in the virtual cluster: %w", name, err)
	}
	return nil
}

// tokenLasts tells whether the JWT token ends more than a day from now
// (its exp claim, read unverified: the API server checks the rest).
func (e Exporter) tokenLasts(token string) bool {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return false
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return false
	}
	var claims struct {
		Exp int64 `json:"exp"`
	}
	if json.Unmarshal(payload, &claims) != nil || claims.Exp == 0 {
		return false
	}
	now := time.Now
	if e.Now != nil {
		now = e.Now
	}
	return time.Unix(claims.Exp, 0).After(now().Add(24 * time.Hour))
}
