package access_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/clustersync/clustersync/internal/hosted/access"
	"github.com/clustersync/clustersync/internal/hosted/hostedtest"
)

// env is a real kube-apiserver with kube-controller-manager; the tests use
// it both as "the downstream cluster" and as the management cluster.
var env *hostedtest.Env

func TestMain(m *testing.M) {
	os.Exit(hostedtest.Main(m, &env))
}

// namespace makes a namespace named after the test.
func namespace(t *testing.T) string {
	t.Helper()
	hostedtest.Require(t, env)
	return env.Namespace(t)
}

// endpointAndCA are the API server's URL and its CA, base64-encoded PEM as
// EKS reports it.
func endpointAndCA(t *testing.T) (string, []byte) {
	t.Helper()
	endpoint, ca := env.APIServer(t)
	return endpoint, []byte(base64.StdEncoding.EncodeToString(ca))
}

// downstream is a client for the API server built by RESTConfig from its
// endpoint, its base64 CA and tokens.
func downstream(t *testing.T, tokens access.TokenSource) kubernetes.Interface {
	t.Helper()
	endpoint, ca := endpointAndCA(t)
	cfg, err := access.RESTConfig(endpoint, ca, tokens)
	if err != nil {
		t.Fatal(err)
	}
	return kubernetes.NewForConfigOrDie(cfg)
}

// whoAmI is the user the API server sees behind k.
func whoAmI(ctx context.Context, k kubernetes.Interface) (string, error) {
	r, err := k.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return r.Status.UserInfo.Username, nil
}

// A config from RESTConfig reaches the API server through its TLS with the
// base64 CA and authenticates with the token source's token, fetched once
// for several requests.
func TestRESTConfigAuthenticates(t *testing.T) {
	ns := namespace(t)
	token := env.AdminToken(t, ns)
	var calls atomic.Int32
	k := downstream(t, func(context.Context) (string, error) {
		calls.Add(1)
		return token, nil
	})
	ctx := context.Background()
	for range 3 {
		user, err := whoAmI(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		if want := "system:serviceaccount:" + ns + ":admin"; user != want {
			t.Fatalf("user %q, want %q", user, want)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("token source called %d times for 3 requests within TokenMaxAge, want 1", n)
	}
}

// A token the API server rejects (401) is not used again: the next request
// fetches a new one.
func TestRESTConfigRefetchesAfterUnauthorized(t *testing.T) {
	ns := namespace(t)
	token := env.AdminToken(t, ns)
	var calls atomic.Int32
	k := downstream(t, func(context.Context) (string, error) {
		if calls.Add(1) == 1 {
			return "not-a-valid-token", nil
		}
		return token, nil
	})
	ctx := context.Background()
	if _, err := whoAmI(ctx, k); !apierrors.IsUnauthorized(err) {
		t.Fatalf("first request with a bad token: %v, want 401 Unauthorized", err)
	}
	if _, err := whoAmI(ctx, k); err != nil {
		t.Fatalf("second request: %v", err)
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("token source called %d times, want 2", n)
	}
}

// A token source's error fails the call and can be found in its error.
func TestTokenSourceErrorSurfaces(t *testing.T) {
	hostedtest.Require(t, env)
	errNoCredentials := errors.New("no cloud credentials")
	k := downstream(t, func(context.Context) (string, error) { return "", errNoCredentials })
	_, err := k.CoreV1().Namespaces().Get(context.Background(), "default", metav1.GetOptions{})
	if !errors.Is(err, errNoCredentials) {
		t.Fatalf("error %v, want one wrapping the token source's", err)
	}
}

// EnsureServiceAccountToken creates the service account, its cluster-admin
// binding and its token Secret in the downstream cluster, waits for the
// token controller, and returns a token that authenticates as the service
// account with cluster-admin rights; a second call returns the same token
// and creates nothing more.
func TestEnsureServiceAccountToken(t *testing.T) {
	ns := namespace(t)
	admin := env.AdminToken(t, ns)
	k := downstream(t, access.StaticToken(admin))
	ctx := context.Background()
	t.Cleanup(func() {
		_ = env.Kube.CoreV1().ServiceAccounts(access.ServiceAccountNamespace).Delete(ctx, access.ServiceAccountName, metav1.DeleteOptions{})
		_ = env.Kube.CoreV1().Secrets(access.ServiceAccountNamespace).Delete(ctx, access.TokenSecretName, metav1.DeleteOptions{})
		_ = env.Kube.RbacV1().ClusterRoleBindings().Delete(ctx, access.ClusterRoleBindingName, metav1.DeleteOptions{})
	})

	token, err := access.EnsureServiceAccountToken(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	sa := downstream(t, access.StaticToken(token))
	user, err := whoAmI(ctx, sa)
	if err != nil {
		t.Fatal(err)
	}
	if want := "system:serviceaccount:kube-system:clustersync"; user != want {
		t.Errorf("token authenticates as %q, want %q", user, want)
	}
	if _, err := sa.RbacV1().ClusterRoles().List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("the token cannot list cluster roles: %v", err)
	}

	again, err := access.EnsureServiceAccountToken(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	if again != token {
		t.Error("second call returned another token")
	}
	crb, err := env.Kube.RbacV1().ClusterRoleBindings().Get(ctx, access.ClusterRoleBindingName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(crb.Subjects) != 1 || crb.RoleRef.Name != "cluster-admin" || crb.Labels[access.ManagedByLabel] != access.ManagedByValue {
		t.Errorf("ClusterRoleBinding subjects %v, role %v, labels %v", crb.Subjects, crb.RoleRef, crb.Labels)
	}
	secret, err := env.Kube.CoreV1().Secrets(access.ServiceAccountNamespace).Get(ctx, access.TokenSecretName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if secret.Type != corev1.SecretTypeServiceAccountToken || secret.Annotations[corev1.ServiceAccountNameKey] != access.ServiceAccountName {
		t.Errorf("token Secret type %s, annotations %v", secret.Type, secret.Annotations)
	}
}

// StoreToken writes the management-side Secret, owned by the given object;
// a second identical call changes nothing; a new token updates it;
// LoadToken reads it back into a working config; a Secret not labelled as
// ours is refused and left alone.
func TestStoreToken(t *testing.T) {
	ns := namespace(t)
	ctx := context.Background()
	endpoint, ca := endpointAndCA(t)
	token := env.AdminToken(t, ns)
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cluster", Namespace: ns}}
	if err := env.Client.Create(ctx, owner); err != nil {
		t.Fatal(err)
	}
	key := types.NamespacedName{Namespace: ns, Name: "cluster-token"}
	creds := access.Credentials{Endpoint: endpoint, CAData: ca, Token: "first"}
	if err := access.StoreToken(ctx, env.Client, key, owner, creds); err != nil {
		t.Fatal(err)
	}
	got, err := env.Kube.CoreV1().Secrets(ns).Get(ctx, key.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pem, _ := base64.StdEncoding.DecodeString(string(ca))
	if string(got.Data[access.TokenKey]) != "first" || string(got.Data[access.EndpointKey]) != endpoint || strings.TrimSpace(string(got.Data[access.CAKey])) != strings.TrimSpace(string(pem)) {
		t.Errorf("Secret data %q", got.Data)
	}
	if got.Labels[access.ManagedByLabel] != access.ManagedByValue || len(got.OwnerReferences) != 1 || got.OwnerReferences[0].UID != owner.UID {
		t.Errorf("Secret labels %v, owners %v", got.Labels, got.OwnerReferences)
	}

	if err := access.StoreToken(ctx, env.Client, key, owner, creds); err != nil {
		t.Fatal(err)
	}
	same, _ := env.Kube.CoreV1().Secrets(ns).Get(ctx, key.Name, metav1.GetOptions{})
	if same.ResourceVersion != got.ResourceVersion {
		t.Error("storing the same credentials again updated the Secret")
	}

	creds.Token = token
	if err := access.StoreToken(ctx, env.Client, key, owner, creds); err != nil {
		t.Fatal(err)
	}
	loaded, err := access.LoadToken(ctx, env.Client, key)
	if err != nil {
		t.Fatal(err)
	}
	if loaded.Token != token || loaded.Endpoint != endpoint {
		t.Errorf("LoadToken = %+v", loaded)
	}
	cfg, err := access.RESTConfig(loaded.Endpoint, loaded.CAData, access.StaticToken(loaded.Token))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := whoAmI(ctx, kubernetes.NewForConfigOrDie(cfg)); err != nil {
		t.Errorf("config from the stored Secret: %v", err)
	}

	foreign := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "foreign", Namespace: ns}, StringData: map[string]string{"token": "theirs"}}
	if err := env.Client.Create(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	err = access.StoreToken(ctx, env.Client, types.NamespacedName{Namespace: ns, Name: "foreign"}, nil, creds)
	if err == nil || !strings.Contains(err.Error(), ns+"/foreign") {
		t.Fatalf("storing over a foreign Secret: error %v, want one naming %s/foreign", err, ns)
	}
	kept, _ := env.Kube.CoreV1().Secrets(ns).Get(ctx, "foreign", metav1.GetOptions{})
	if string(kept.Data["token"]) != "theirs" || kept.ResourceVersion != foreign.ResourceVersion {
		t.Errorf("the foreign Secret changed: %q", kept.Data)
	}
	if _, err := access.LoadToken(ctx, env.Client, types.NamespacedName{Namespace: ns, Name: "foreign"}); err == nil {
		t.Error("LoadToken read a foreign Secret")
	}
}

// CountNodes counts the Node objects of the downstream cluster.
func TestCountNodes(t *testing.T) {
	ns := namespace(t)
	k := downstream(t, access.StaticToken(env.AdminToken(t, ns)))
	ctx := context.Background()
	before, err := access.CountNodes(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		name := fmt.Sprintf("%s-node-%d", ns, i)
		if _, err := env.Kube.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = env.Kube.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	}
	after, err := access.CountNodes(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	if after != before+3 {
		t.Errorf("CountNodes = %d after creating 3 nodes, was %d", after, before)
	}
}
