package controller

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/registered/registration"
	"github.com/clustersync/clustersync/internal/registered/server"
)

// TokenTTL and TokenGrace are a Cluster's token lifetime and grace period
// (spec.importedConfig, defaults registration.DefaultTTL and
// DefaultGrace).
func TokenTTL(c *mgmtv1.Cluster) (ttl, grace time.Duration) {
	ttl, grace = registration.DefaultTTL, registration.DefaultGrace
	if ic := c.Spec.ImportedConfig; ic != nil {
		if ic.TokenTTLSeconds != nil {
			ttl = time.Duration(*ic.TokenTTLSeconds) * time.Second
		}
		if ic.TokenGraceSeconds != nil {
			grace = time.Duration(*ic.TokenGraceSeconds) * time.Second
		}
	}
	return ttl, grace
}

// ensureToken keeps the Cluster's ClusterRegistrationToken (namespace
// server.TokenNamespace, named after the cluster, owned by it): created
// with a fresh token, rotated when due (the previous one stays valid for
// the grace period), with the manifest URL and both commands in its
// status. It returns when the next rotation is due and the current token.
func (r *Reconciler) ensureToken(ctx context.Context, c *mgmtv1.Cluster) (time.Duration, string, error) {
	crt := &mgmtv1.ClusterRegistrationToken{ObjectMeta: metav1.ObjectMeta{Name: c.Name, Namespace: server.TokenNamespace}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, crt, func() error {
		crt.Spec.ClusterName = c.Name
		return controllerutil.SetControllerReference(c, crt, r.Client.Scheme())
	}); err != nil {
		return 0, "", err
	}
	ttl, grace := TokenTTL(c)
	now := r.now()
	tokens := server.Tokens(crt.Status)
	if tokens.Due(now, ttl) {
		fresh, err := registration.NewToken()
		if err != nil {
			return 0, "", err
		}
		if tokens, err = registration.Rotate(tokens, now, ttl, grace, fresh); err != nil {
			return 0, "", err
		}
	}
	st := mgmtv1.ClusterRegistrationTokenStatus{Token: tokens.Current, PreviousToken: tokens.Previous,
		ExpiresAt: &metav1.Time{Time: tokens.CurrentExpires}}
	if tokens.Previous != "" {
		st.PreviousValidUntil = &metav1.Time{Time: tokens.PreviousValidUntil}
	}
	st.ManifestURL = registration.ManifestURL(r.URL, tokens.Current, c.Name)
	st.Command, st.InsecureCommand = registration.Commands(r.URL, tokens.Current, c.Name)
	if st.Token != crt.Status.Token || st.ManifestURL != crt.Status.ManifestURL {
		crt.Status = st
		if err := r.Client.Status().Update(ctx, crt); err != nil {
			return 0, "", err
		}
	}
	return max(tokens.Next(now, ttl), time.Second), tokens.Current, nil
}

// syncAgentToken writes token into the agent's credentials Secret of a
// connected cluster after a rotation, so that the agent reconnects with a
// valid token once the previous one's grace period is over. A missing
// Secret is left missing.
func syncAgentToken(ctx context.Context, kube kubernetes.Interface, token string) error {
	secrets := kube.CoreV1().Secrets(registration.AgentNamespace)
	s, err := secrets.Get(ctx, registration.CredentialsSecret, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if string(s.Data["token"]) == token {
		return nil
	}
	if s.Data == nil {
		s.Data = map[string][]byte{}
	}
	s.Data["token"] = []byte(token)
	_, err = secrets.Update(ctx, s, metav1.UpdateOptions{})
	return err
}

// deleteToken removes the cluster's ClusterRegistrationToken.
func (r *Reconciler) deleteToken(ctx context.Context, cluster string) error {
	var crt mgmtv1.ClusterRegistrationToken
	err := r.Client.Get(ctx, types.NamespacedName{Namespace: server.TokenNamespace, Name: cluster}, &crt)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return client.IgnoreNotFound(r.Client.Delete(ctx, &crt))
}
