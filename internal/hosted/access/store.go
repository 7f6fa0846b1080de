package access

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// Keys of the management-side Secret StoreToken writes, the ones a
// kubeconfig's cluster and user need.
const (
	// TokenKey holds the bearer token.
	TokenKey = "token"
	// CAKey holds the cluster's CA certificates, PEM.
	CAKey = "ca.crt"
	// EndpointKey holds the API server URL.
	EndpointKey = "endpoint"
)

// Credentials are what it takes to reach a managed cluster's API server
// with a long-lived token.
type Credentials struct {
	// Endpoint is the API server's https URL (status.apiEndpoint).
	Endpoint string
	// CAData is the cluster's CA certificates, PEM or base64-encoded PEM
	// (status.caCert); LoadToken returns PEM.
	CAData []byte
	// Token is the bearer token, from EnsureServiceAccountToken.
	Token string
}

// StaticToken is a TokenSource that always returns token, for a
// service-account token from EnsureServiceAccountToken or LoadToken.
func StaticToken(token string) TokenSource {
	return func(context.Context) (string, error) { return token, nil }
}

// StoreToken writes creds to the Opaque Secret key in the management
// cluster, under TokenKey, CAKey (as PEM) and EndpointKey, labelled
// ManagedByLabel=ManagedByValue, creating it or replacing the data of the
// one StoreToken created before; it sends nothing when the Secret already
// holds creds. When owner is not nil the Secret gets an owner reference to
// it (not a controller reference), found through c's scheme, so it goes
// with its owner (Rancher keeps the token Secret of a cluster in
// cluster.Status.ServiceAccountTokenSecret, Rancher's EKS driver, https://github.com/rancher/eks-operator).
//
// Errors: creds with an invalid Endpoint or CAData (naming
// status.apiEndpoint or status.caCert) or an empty Token; a Secret of that
// name without the label, which is not ours and is left alone (the error
// names it); an owner in another namespace; API errors, which wrap the
// apierrors status (a concurrent change gives IsConflict or IsAlreadyExists:
// call again).
func StoreToken(ctx context.Context, c client.Client, key types.NamespacedName, owner client.Object, creds Credentials) error {
	if err := checkEndpoint(creds.Endpoint); err != nil {
		return err
	}
	ca, err := CAPEM(creds.CAData)
	if err != nil {
		return err
	}
	if creds.Token == "" {
		return fmt.Errorf("Secret %s: empty token", key)
	}
	data := map[string][]byte{TokenKey: []byte(creds.Token), CAKey: ca, EndpointKey: []byte(creds.Endpoint)}

	secret := &corev1.Secret{}
	err = c.Get(ctx, key, secret)
	if apierrors.IsNotFound(err) {
		secret = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace, Labels: map[string]string{ManagedByLabel: ManagedByValue}},
			Type:       corev1.SecretTypeOpaque,
			Data:       data,
		}
		if err := setOwner(c, owner, secret); err != nil {
			return err
		}
		if err := c.Create(ctx, secret); err != nil {
			return fmt.Errorf("create Secret %s: %w", key, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("get Secret %s: %w", key, err)
	}
	if secret.Labels[ManagedByLabel] != ManagedByValue {
		return fmt.Errorf("Secret %s exists without label %s=%s: not clustersync's, not overwriting it", key, ManagedByLabel, ManagedByValue)
	}
	before := secret.DeepCopy()
	secret.Data = data
	if err := setOwner(c, owner, secret); err != nil {
		return err
	}
	if equality.Semantic.DeepEqual(before, secret) {
		return nil
	}
	if err := c.Update(ctx, secret); err != nil {
		return fmt.Errorf("update Secret %s: %w", key, err)
	}
	return nil
}

// setOwner adds an owner reference to owner, if any.
func setOwner(c client.Client, owner client.Object, secret *corev1.Secret) error {
	if owner == nil {
		return nil
	}
	if err := controllerutil.SetOwnerReference(owner, secret, c.Scheme()); err != nil {
		return fmt.Errorf("Secret %s/%s: owner %s: %w", secret.Namespace, secret.Name, owner.GetName(), err)
	}
	return nil
}

// LoadToken reads back the Secret StoreToken wrote at key. Errors: API
// errors (a missing Secret gives apierrors.IsNotFound); a Secret without
// the ManagedByLabel label, or without one of the three keys, naming the
// Secret and the key.
func LoadToken(ctx context.Context, c client.Reader, key types.NamespacedName) (Credentials, error) {
	secret := &corev1.Secret{}
	if err := c.Get(ctx, key, secret); err != nil {
		return Credentials{}, fmt.Errorf("get Secret %s: %w", key, err)
	}
	if secret.Labels[ManagedByLabel] != ManagedByValue {
		return Credentials{}, fmt.Errorf("Secret %s has no label %s=%s: not written by StoreToken", key, ManagedByLabel, ManagedByValue)
	}
	var errs []error
	for _, k := range []string{TokenKey, CAKey, EndpointKey} {
		if len(secret.Data[k]) == 0 {
			errs = append(errs, fmt.Errorf("Secret %s: key %s is missing or empty", key, k))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Credentials{}, err
	}
	return Credentials{Endpoint: string(secret.Data[EndpointKey]), CAData: secret.Data[CAKey], Token: string(secret.Data[TokenKey])}, nil
}
