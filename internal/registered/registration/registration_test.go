package registration

import (
	"bytes"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func TestNewToken(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		tok, err := NewToken()
		if err != nil {
			t.Fatal(err)
		}
		if len(tok) != TokenLength || strings.Trim(tok, tokenAlphabet) != "" {
			t.Fatalf("token %q: want %d characters of [a-z0-9]", tok, TokenLength)
		}
		if seen[tok] {
			t.Fatalf("token %q twice", tok)
		}
		seen[tok] = true
	}
}

func TestTokensRotation(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	ttl, grace := 24*time.Hour, time.Hour
	var tk Tokens
	if !tk.Due(t0, ttl) {
		t.Error("no token: want due")
	}
	tk, err := Rotate(tk, t0, ttl, grace, "aaa")
	if err != nil {
		t.Fatal(err)
	}
	if tk.Previous != "" || !tk.CurrentExpires.Equal(t0.Add(ttl)) {
		t.Errorf("first rotation: %+v", tk)
	}
	// Due a tenth of the TTL before expiry.
	if tk.Due(t0.Add(21*time.Hour), ttl) || !tk.Due(t0.Add(22*time.Hour), ttl) {
		t.Error("due at the wrong time")
	}
	if got := tk.Next(t0, ttl); got != ttl-ttl/10 {
		t.Errorf("Next = %v, want %v", got, ttl-ttl/10)
	}
	t1 := t0.Add(22 * time.Hour)
	tk, err = Rotate(tk, t1, ttl, grace, "bbb")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		token string
		at    time.Time
		valid bool
	}{
		{"new token", "bbb", t1, true},
		{"old token in its grace period", "aaa", t1.Add(30 * time.Minute), true},
		// The old token expired at t0+24h: its grace ends at t0+25h = t1+3h,
		// later than t1+grace, so t1+grace bounds it.
		{"old token after the grace period", "aaa", t1.Add(grace), false},
		{"unknown token", "ccc", t1, false},
		{"empty token", "", t1, false},
		{"new token after expiry", "bbb", t1.Add(ttl), false},
	} {
		if got := tk.Valid(tc.token, tc.at); got != tc.valid {
			t.Errorf("%s: Valid = %v, want %v", tc.name, got, tc.valid)
		}
	}
	// A token rotated long after it expired does not come back as previous.
	late, err := Rotate(Tokens{Current: "old", CurrentExpires: t0}, t0.Add(2*grace), ttl, grace, "new")
	if err != nil || late.Previous != "" {
		t.Errorf("rotation after expiry kept %q (%v)", late.Previous, err)
	}
	if _, err := Rotate(tk, t1, 0, grace, "x"); err == nil {
		t.Error("zero TTL accepted")
	}
	if _, err := Rotate(tk, t1, ttl, grace, ""); err == nil {
		t.Error("empty token accepted")
	}
}

func TestImportPath(t *testing.T) {
	p := ImportPath("tok123", "edge-1")
	if p != "/v1/import/tok123_edge-1.yaml" {
		t.Fatalf("ImportPath = %q", p)
	}
	tok, cl, err := ParseImportPath(p)
	if err != nil || tok != "tok123" || cl != "edge-1" {
		t.Fatalf("ParseImportPath = %q %q %v", tok, cl, err)
	}
	for _, bad := range []string{"/v3/import/a_b.yaml", "/v1/import/a_b.yml", "/v1/import/ab.yaml", "/v1/import/_b.yaml", "/v1/import/a_.yaml", "/v1/import/a_B_C.yaml"} {
		if _, _, err := ParseImportPath(bad); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("ParseImportPath(%q): err %v, want one naming the path", bad, err)
		}
	}
}

func TestCommands(t *testing.T) {
	apply, insecure := Commands("https://mgmt.example.com:8443/", "tok", "edge")
	if apply != "kubectl apply -f https://mgmt.example.com:8443/v1/import/tok_edge.yaml" {
		t.Errorf("apply = %q", apply)
	}
	if insecure != "curl --insecure -sfL https://mgmt.example.com:8443/v1/import/tok_edge.yaml | kubectl apply -f -" {
		t.Errorf("insecure = %q", insecure)
	}
	if got := CAChecksum([]byte("x")); got != "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881" {
		t.Errorf("CAChecksum = %s", got)
	}
}

func options() ManifestOptions {
	return ManifestOptions{ServerURL: "https://mgmt.example.com", CAChecksum: CAChecksum([]byte("ca")), Token: "tok", Cluster: "edge", Image: "ghcr.io/clustersync/clustersync:v0.1.0"}
}

func TestManifest(t *testing.T) {
	m, err := Manifest(options())
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Manifest(options())
	if !bytes.Equal(m, again) {
		t.Error("two renderings differ: the manifest must be deterministic")
	}
	docs := strings.Split(string(m), "---\n")
	var kinds []string
	for _, d := range docs {
		var u unstructured.Unstructured
		if err := yaml.Unmarshal([]byte(d), &u.Object); err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, u.GetKind()+"/"+u.GetName())
		if l := u.GetLabels(); l[LabelManagedBy] != ManagedByValue || l[LabelCluster] != "edge" || l[LabelName] != AgentName {
			t.Errorf("%s/%s labels %v", u.GetKind(), u.GetName(), l)
		}
		switch u.GetKind() {
		case "Deployment":
			var dep appsv1.Deployment
			if err := yaml.Unmarshal([]byte(d), &dep); err != nil {
				t.Fatal(err)
			}
			c := dep.Spec.Template.Spec.Containers[0]
			env := map[string]corev1.EnvVar{}
			for _, e := range c.Env {
				env[e.Name] = e
			}
			if env[EnvServer].Value != "https://mgmt.example.com" || env[EnvCAChecksum].Value != CAChecksum([]byte("ca")) || env[EnvCluster].Value != "edge" ||
				env[EnvToken].ValueFrom == nil || env[EnvToken].ValueFrom.SecretKeyRef.Name != CredentialsSecret {
				t.Errorf("agent env %+v", c.Env)
			}
			if dep.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType || dep.Spec.Template.Spec.ServiceAccountName != AgentName {
				t.Errorf("deployment strategy %s, service account %s", dep.Spec.Strategy.Type, dep.Spec.Template.Spec.ServiceAccountName)
			}
		case "Secret":
			var s corev1.Secret
			if err := yaml.Unmarshal([]byte(d), &s); err != nil {
				t.Fatal(err)
			}
			if string(s.Data["token"]) != "tok" || string(s.Data["url"]) != "https://mgmt.example.com" || len(s.StringData) != 0 {
				t.Errorf("secret data %v stringData %v", s.Data, s.StringData)
			}
		}
	}
	want := "Namespace/clustersync-system ServiceAccount/clustersync-agent ClusterRole/clustersync-agent ClusterRoleBinding/clustersync-agent Secret/clustersync-agent-credentials Deployment/clustersync-agent"
	if strings.Join(kinds, " ") != want {
		t.Errorf("objects %v, want %s", kinds, want)
	}
}

func TestManifestValidation(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*ManifestOptions)
		want   string
	}{
		{"no server", func(o *ManifestOptions) { o.ServerURL = "" }, "server URL is required"},
		{"http server", func(o *ManifestOptions) { o.ServerURL = "http://mgmt" }, "want https"},
		{"short checksum", func(o *ManifestOptions) { o.CAChecksum = "abc" }, "CA checksum"},
		{"no token", func(o *ManifestOptions) { o.Token = "" }, "token is required"},
		{"no cluster", func(o *ManifestOptions) { o.Cluster = "" }, "cluster is required"},
		{"no image", func(o *ManifestOptions) { o.Image = "" }, "image is required"},
	} {
		o := options()
		tc.mutate(&o)
		if _, err := Manifest(o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.want)
		}
	}
}
