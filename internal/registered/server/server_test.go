package server_test

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/hostedtest"
	"github.com/clustersync/clustersync/internal/pki"
	"github.com/clustersync/clustersync/internal/registered/registration"
	"github.com/clustersync/clustersync/internal/registered/server"
	"github.com/clustersync/clustersync/internal/registered/tunnel"
)

var env *hostedtest.Env

func TestMain(m *testing.M) { os.Exit(hostedtest.Main(m, &env)) }

func TestMemberRole(t *testing.T) {
	c := &mgmtv1.Cluster{Spec: mgmtv1.ClusterSpec{ImportedConfig: &mgmtv1.ImportedConfig{Members: []mgmtv1.ClusterMember{
		{Kind: "User", Name: "alice", Role: mgmtv1.RoleReadOnly},
		{Kind: "Group", Name: "admins", Role: mgmtv1.RoleClusterOwner},
		{Kind: "ServiceAccount", Name: "team:ci", Role: mgmtv1.RoleClusterMember},
	}}}}
	for _, tc := range []struct {
		user   string
		groups []string
		want   string
	}{
		{"alice", nil, mgmtv1.RoleReadOnly},
		{"alice", []string{"admins"}, mgmtv1.RoleClusterOwner}, // the strongest role wins
		{"system:serviceaccount:team:ci", nil, mgmtv1.RoleClusterMember},
		{"team:ci", nil, ""},
		{"bob", []string{"devs"}, ""},
	} {
		if got := server.MemberRole(c, tc.user, tc.groups); got != tc.want {
			t.Errorf("MemberRole(%s, %v) = %q, want %q", tc.user, tc.groups, got, tc.want)
		}
	}
	// spec.members, of any driver, read with importedConfig.members.
	c.Spec.Members = []mgmtv1.ClusterMember{{Kind: "User", Name: "bob", Role: mgmtv1.RoleClusterMember}, {Kind: "User", Name: "alice", Role: mgmtv1.RoleClusterOwner}}
	for user, want := range map[string]string{"bob": mgmtv1.RoleClusterMember, "alice": mgmtv1.RoleClusterOwner} {
		if got := server.MemberRole(c, user, nil); got != want {
			t.Errorf("with spec.members: MemberRole(%s) = %q, want %q", user, got, want)
		}
	}
	hosted := &mgmtv1.Cluster{Spec: mgmtv1.ClusterSpec{EKSConfig: &eksv1.EKSClusterConfigSpec{}, Members: c.Spec.Members}}
	if got := server.MemberRole(hosted, "bob", nil); got != mgmtv1.RoleClusterMember {
		t.Errorf("an EKS cluster's member: MemberRole(bob) = %q, want %s", got, mgmtv1.RoleClusterMember)
	}
}

// A rotated token keeps working for its grace period, then is refused;
// the import endpoint serves the current token's manifest to any valid
// token and 404 to the rest.
func TestTokenRotationGrace(t *testing.T) {
	hostedtest.Require(t, env)
	ctx := context.Background()
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: server.TokenNamespace}}); err != nil {
		t.Fatal(err)
	}
	c := &mgmtv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "rot"}, Spec: mgmtv1.ClusterSpec{DisplayName: "rot", ImportedConfig: &mgmtv1.ImportedConfig{}}}
	if err := env.Client.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	tokens, err := registration.Rotate(registration.Tokens{}, t0, 24*time.Hour, time.Hour, "first")
	if err != nil {
		t.Fatal(err)
	}
	rotatedAt := t0.Add(22 * time.Hour)
	if tokens, err = registration.Rotate(tokens, rotatedAt, 24*time.Hour, time.Hour, "second"); err != nil {
		t.Fatal(err)
	}
	crt := &mgmtv1.ClusterRegistrationToken{ObjectMeta: metav1.ObjectMeta{Name: "rot", Namespace: server.TokenNamespace}, Spec: mgmtv1.ClusterRegistrationTokenSpec{ClusterName: "rot"}}
	if err := env.Client.Create(ctx, crt); err != nil {
		t.Fatal(err)
	}
	crt.Status = mgmtv1.ClusterRegistrationTokenStatus{Token: tokens.Current, ExpiresAt: &metav1.Time{Time: tokens.CurrentExpires},
		PreviousToken: tokens.Previous, PreviousValidUntil: &metav1.Time{Time: tokens.PreviousValidUntil}}
	if err := env.Client.Status().Update(ctx, crt); err != nil {
		t.Fatal(err)
	}
	ca, err := pki.NewCA("test")
	if err != nil {
		t.Fatal(err)
	}
	now := rotatedAt
	s := &server.Server{Client: env.Client, URL: "https://mgmt.example.com", CAPEM: ca.CertPEM(), AgentImage: "img", Now: func() time.Time { return now }}
	s.Tunnel = tunnel.NewServer(s.Authorize, tunnel.ServerOptions{CACertPEM: ca.CertPEM()})
	reg := tunnel.Registration{Cluster: "rot", APIEndpoint: "https://x", Token: "t", CACert: []byte("c"), KubeSystemUID: "uid-rot"}
	get := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code, rec.Body.String()
	}

	for _, tc := range []struct {
		name  string
		at    time.Time
		token string
		ok    bool
	}{
		{"current", rotatedAt, "second", true},
		{"previous in its grace period", rotatedAt.Add(59 * time.Minute), "first", true},
		{"previous after its grace period", rotatedAt.Add(61 * time.Minute), "first", false},
		{"unknown", rotatedAt, "third", false},
	} {
		now = tc.at
		err := s.Authorize(ctx, tc.token, reg)
		if (err == nil) != tc.ok {
			t.Errorf("%s: Authorize = %v, want ok %v", tc.name, err, tc.ok)
		}
		code, body := get(registration.ImportPath(tc.token, "rot"))
		if tc.ok && (code != http.StatusOK || !strings.Contains(body, base64.StdEncoding.EncodeToString([]byte("second")))) {
			t.Errorf("%s: import manifest %d, want 200 with the current token", tc.name, code)
		}
		if !tc.ok && code != http.StatusNotFound {
			t.Errorf("%s: import manifest %d, want 404", tc.name, code)
		}
	}
	now = rotatedAt
	if err := s.Authorize(ctx, "second", tunnel.Registration{Cluster: "nope", KubeSystemUID: "u"}); err == nil || !strings.Contains(err.Error(), "not registered") {
		t.Errorf("unknown cluster: %v", err)
	}
	if err := s.Authorize(ctx, "second", reg); errors.Is(err, tunnel.ErrForbidden) || err != nil {
		t.Errorf("registered cluster refused: %v", err)
	}
}
