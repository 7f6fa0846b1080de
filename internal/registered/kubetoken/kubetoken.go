// Package kubetoken hands people access to the clusters the management
// server proxies (/k8s/clusters/NAME): short-lived kubeconfig tokens that
// carry the identity of the user they were issued to (as Rancher's
// kubeconfig tokens do,
// https://ranchermanager.docs.rancher.com/api/api-tokens), and the
// kubeconfig that uses one.
package kubetoken

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TokenPrefix starts every kubeconfig token, so that the proxy tells one
// from a token of the management cluster without asking anyone.
const TokenPrefix = "kubeconfig-"

// DefaultTTL is a kubeconfig token's life unless asked otherwise: 8
// hours, a working day. MaxTTL is the longest one issued: 30 days,
// Rancher's default kubeconfig-default-token-ttl-minutes (43200).
const (
	DefaultTTL = 8 * time.Hour
	MaxTTL     = 30 * 24 * time.Hour
)

// TokenSecretType is the type of the Secrets that record issued tokens:
// one each, in the namespace of Issuer.Namespace, named "kubeconfig-" and
// 40 hex digits of the token's SHA-256. The token itself is stored
// nowhere.
const TokenSecretType corev1.SecretType = "clustersync.io/kubeconfig-token"

// Labels and annotations of a token's Secret. Revoke every token of a
// cluster with `kubectl delete secret -n clustersync-global-data -l
// clustersync.io/cluster=NAME`.
const (
	TokenLabel         = "clustersync.io/kubeconfig-token"
	ClusterLabel       = "clustersync.io/cluster"
	UserAnnotation     = "clustersync.io/user"
	GroupsAnnotation   = "clustersync.io/groups" // a JSON list
	ExpiresAnnotation  = "clustersync.io/expires"
	UIDAnnotation      = "clustersync.io/uid"
	tokenSecretPrefix  = "kubeconfig-"
	tokenRandomBytes   = 32
	tokenHashHexDigits = 40
)

// User is the identity a token carries: the user name, groups and UID the
// management cluster's API server gave the person it was issued to.
type User struct {
	Name   string
	UID    string
	Groups []string
}

// ErrUnknownToken is Lookup's error for a token that was never issued or
// was revoked (its Secret deleted).
var ErrUnknownToken = errors.New("the kubeconfig token is unknown or was revoked")

// ExpiredError is Lookup's error for a token past its expiry.
type ExpiredError struct{ At time.Time }

func (e *ExpiredError) Error() string {
	return "the kubeconfig token expired at " + e.At.UTC().Format(time.RFC3339) + ": get a new kubeconfig (clustersync cluster kubeconfig NAME)"
}

// Issuer issues and looks up kubeconfig tokens, recording each in a
// Secret of Namespace written with the management server's identity.
type Issuer struct {
	// Client writes the tokens' Secrets and reads them, from a cache
	// when it has one.
	Client client.Client
	// Reader reads a token's Secret Client did not find (a cache that
	// has not seen it yet); nil: Client's answer is final.
	Reader client.Reader
	// Namespace holds them.
	Namespace string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

func (is *Issuer) now() time.Time {
	if is.Now != nil {
		return is.Now()
	}
	return time.Now()
}

// TTL checks a requested life: 0 means DefaultTTL; a negative one or one
// above MaxTTL is an error naming the limit.
func TTL(ttl time.Duration) (time.Duration, error) {
	switch {
	case ttl == 0:
		return DefaultTTL, nil
	case ttl < 0:
		return 0, fmt.Errorf("ttl %s: want a positive duration", ttl)
	case ttl > MaxTTL:
		return 0, fmt.Errorf("ttl %s: at most %s (30 days)", ttl, MaxTTL)
	}
	return ttl, nil
}

// ParseTTL reads a requested life as a Go duration ("8h"; "" is 0, the
// default) and checks it with TTL's rules; the error names the value.
func ParseTTL(v string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err == nil {
		_, err = TTL(d)
	}
	if err != nil {
		return 0, fmt.Errorf("ttl %q: %w", v, err)
	}
	return d, nil
}

// secretName is the name of the Secret of token.
func secretName(token string) string {
	sum := sha256.Sum256([]byte(token))
	return tokenSecretPrefix + hex.EncodeToString(sum[:])[:tokenHashHexDigits]
}

// Issue makes a token for user on cluster, valid for ttl (TTL's rules),
// and records it, owned by owner when it has a UID (the Cluster: deleting
// it deletes its tokens). The caller has checked that user is a member of
// cluster: the proxy checks it again on every request.
func (is *Issuer) Issue(ctx context.Context, u User, cluster string, owner metav1.OwnerReference, ttl time.Duration) (token string, expires time.Time, err error) {
	if ttl, err = TTL(ttl); err != nil {
		return "", time.Time{}, err
	}
	b := make([]byte, tokenRandomBytes)
	if _, err := rand.Read(b); err != nil {
		return "", time.Time{}, err
	}
	token = TokenPrefix + base64.RawURLEncoding.EncodeToString(b)
	expires = is.now().Add(ttl).UTC().Truncate(time.Second)
	groups, err := json.Marshal(u.Groups)
	if err != nil {
		return "", time.Time{}, err
	}
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: secretName(token), Namespace: is.Namespace,
			Labels: map[string]string{TokenLabel: "true", ClusterLabel: cluster},
			Annotations: map[string]string{UserAnnotation: u.Name, UIDAnnotation: u.UID, GroupsAnnotation: string(groups),
				ExpiresAnnotation: expires.Format(time.RFC3339)}},
		Type: TokenSecretType,
	}
	if owner.UID != "" {
		sec.OwnerReferences = []metav1.OwnerReference{owner}
	}
	if err := is.Client.Create(ctx, sec); err != nil {
		return "", time.Time{}, fmt.Errorf("record the kubeconfig token in namespace %s: %w", is.Namespace, err)
	}
	return token, expires, nil
}

// Lookup returns the user and cluster of token. Errors: ErrUnknownToken,
// *ExpiredError, a malformed record, and the API server's.
func (is *Issuer) Lookup(ctx context.Context, token string) (u User, cluster string, err error) {
	if !strings.HasPrefix(token, TokenPrefix) {
		return User{}, "", ErrUnknownToken
	}
	var sec corev1.Secret
	key := types.NamespacedName{Namespace: is.Namespace, Name: secretName(token)}
	err = is.Client.Get(ctx, key, &sec)
	if apierrors.IsNotFound(err) && is.Reader != nil {
		err = is.Reader.Get(ctx, key, &sec)
	}
	switch {
	case apierrors.IsNotFound(err):
		return User{}, "", ErrUnknownToken
	case err != nil:
		return User{}, "", err
	}
	if sec.Type != TokenSecretType {
		return User{}, "", ErrUnknownToken
	}
	expires, err := time.Parse(time.RFC3339, sec.Annotations[ExpiresAnnotation])
	if err != nil {
		return User{}, "", fmt.Errorf("Secret %s/%s: annotation %s: %w", sec.Namespace, sec.Name, ExpiresAnnotation, err)
	}
	if !is.now().Before(expires) {
		return User{}, "", &ExpiredError{At: expires}
	}
	u = User{Name: sec.Annotations[UserAnnotation], UID: sec.Annotations[UIDAnnotation]}
	if err := json.Unmarshal([]byte(sec.Annotations[GroupsAnnotation]), &u.Groups); err != nil {
		return User{}, "", fmt.Errorf("Secret %s/%s: annotation %s: %w", sec.Namespace, sec.Name, GroupsAnnotation, err)
	}
	return u, sec.Labels[ClusterLabel], nil
}

// Kubeconfig is a kubeconfig for cluster at server (the management
// server's proxy URL of the cluster), trusting caPEM, with token: one
// cluster, user and context, all named after the cluster, current.
func Kubeconfig(server string, caPEM []byte, cluster, token string) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[cluster] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[cluster] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[cluster] = &clientcmdapi.Context{Cluster: cluster, AuthInfo: cluster}
	cfg.CurrentContext = cluster
	return clientcmd.Write(*cfg)
}
