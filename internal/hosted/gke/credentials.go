package gke

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"cloud.google.com/go/auth"
	"cloud.google.com/go/auth/credentials"
	container "cloud.google.com/go/container/apiv1"
	"google.golang.org/api/option"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gkev1 "github.com/clustersync/clustersync/api/gke/v1"
	"github.com/clustersync/clustersync/internal/hosted/access"
)

// AuthEncodedJSONField is the key of the credential Secret that holds the
// service account's JSON key, as Rancher names it
// (https://github.com/rancher/gke-operator, pkg/gke/client.go).
const AuthEncodedJSONField = "googlecredentialConfig-authEncodedJson"

// CloudPlatformScope is the OAuth scope of the tokens clustersync asks
// for: GKE's API and the clusters' Kubernetes API servers accept it.
const CloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform"

// Clients is one credential's connection to GKE: the REST client of
// cloud.google.com/go/container/apiv1 and the credentials it signs with,
// whose token is also the bearer token of the clusters' API servers.
type Clients struct {
	// Clusters is the GKE API client (its REST transport).
	Clusters *container.ClusterManagerClient
	// Credentials are the credential Secret's.
	Credentials *auth.Credentials
}

// ClientsFactory makes a Client from the credential Secret's data.
type ClientsFactory func(ctx context.Context, secret map[string][]byte) (*Clients, error)

// CredentialFunc returns the credentials of the credential Secret's data.
type CredentialFunc func(ctx context.Context, secret map[string][]byte) (*auth.Credentials, error)

// ServiceAccountCredentials are the credentials of Rancher's Secret: the
// service-account JSON key under AuthEncodedJSONField (cloud.google.com/go/auth,
// scope CloudPlatformScope). Only a key of type service_account is
// accepted. Errors name the key.
func ServiceAccountCredentials(_ context.Context, secret map[string][]byte) (*auth.Credentials, error) {
	raw := secret[AuthEncodedJSONField]
	if len(raw) == 0 {
		return nil, fmt.Errorf("credential secret: key %s (a service account's JSON key) is required", AuthEncodedJSONField)
	}
	creds, err := credentials.NewCredentialsFromJSON(credentials.ServiceAccount, raw, &credentials.DetectOptions{Scopes: []string{CloudPlatformScope}})
	if err != nil {
		return nil, fmt.Errorf("credential secret: key %s: %w", AuthEncodedJSONField, err)
	}
	return creds, nil
}

// StaticCredentials are credentials whose token is always token, for an
// emulator (`clustersync dev gke`) and tests: Google's token service is
// never asked. Never use them with Google.
func StaticCredentials(token string) CredentialFunc {
	return func(context.Context, map[string][]byte) (*auth.Credentials, error) {
		return auth.NewCredentials(&auth.CredentialsOptions{TokenProvider: staticToken(token)}), nil
	}
}

// staticToken is a token provider whose token does not expire.
type staticToken string

// Token implements auth.TokenProvider.
func (t staticToken) Token(context.Context) (*auth.Token, error) {
	return &auth.Token{Value: string(t), Type: "Bearer", Expiry: time.Now().Add(24 * time.Hour)}, nil
}

// NewClientsFactory returns a ClientsFactory building the REST client of
// cloud.google.com/go/container/apiv1. endpoint "" means Google's
// (https://container.googleapis.com); otherwise every call goes to that
// base URL (an emulator such as `clustersync dev gke`; plain HTTP is
// allowed). creds nil means ServiceAccountCredentials. opts are added to
// the client's options (e.g. option.WithUserAgent). The client uses the
// library's own retries (503 and 504 on reads). A client is made once per
// distinct Secret content and kept (its connections and its token are
// reused by every pass and every cluster of that credential); it is never
// closed.
func NewClientsFactory(endpoint string, creds CredentialFunc, opts ...option.ClientOption) ClientsFactory {
	if creds == nil {
		creds = ServiceAccountCredentials
	}
	var (
		mu    sync.Mutex
		cache = map[[sha256.Size]byte]*Clients{}
	)
	return func(ctx context.Context, secret map[string][]byte) (*Clients, error) {
		key := secretKey(secret)
		mu.Lock()
		defer mu.Unlock()
		if c, ok := cache[key]; ok {
			return c, nil
		}
		c, err := creds(ctx, secret)
		if err != nil {
			return nil, err
		}
		all := append([]option.ClientOption{option.WithAuthCredentials(c)}, opts...)
		if endpoint != "" {
			all = append(all, option.WithEndpoint(strings.TrimSuffix(endpoint, "/")+"/"))
		}
		// The REST client: its requests are plain HTTP/JSON, which an
		// emulator can serve and a proxy can pass.
		cm, err := container.NewClusterManagerRESTClient(ctx, all...)
		if err != nil {
			return nil, fmt.Errorf("GKE client: %w", err)
		}
		cache[key] = &Clients{Clusters: cm, Credentials: c}
		return cache[key], nil
	}
}

// secretKey is a digest of a Secret's data, keys sorted.
func secretKey(secret map[string][]byte) [sha256.Size]byte {
	h := sha256.New()
	for _, k := range slices.Sorted(maps.Keys(secret)) {
		fmt.Fprintf(h, "%d:%s%d:", len(k), k, len(secret[k]))
		h.Write(secret[k])
	}
	var out [sha256.Size]byte
	copy(out[:], h.Sum(nil))
	return out
}

// LoadClients reads the credential Secret spec.googleCredentialSecret
// names with k and makes the client with newClient.
// Errors name the field or the Secret.
func LoadClients(ctx context.Context, k client.Reader, newClient ClientsFactory, spec gkev1.GKEClusterConfigSpec) (*Clients, error) {
	if newClient == nil {
		return nil, errors.New("no GKE client: the reconciler's NewClients is not set (gke.NewClientsFactory)")
	}
	ref, data, err := access.LoadCredential(ctx, k, "spec.googleCredentialSecret", spec.GoogleCredentialSecret)
	if err != nil {
		return nil, err
	}
	c, err := newClient(ctx, data)
	if err != nil {
		return nil, fmt.Errorf("credential secret %s: %w", ref, err)
	}
	return c, nil
}
