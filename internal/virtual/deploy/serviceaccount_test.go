package deploy

import (
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
)

func TestParseServiceAccount(t *testing.T) {
	for _, c := range []struct {
		ref, ns, name, err string
	}{
		{ref: "dev", ns: "kube-system", name: "dev"},
		{ref: "team/dev", ns: "team", name: "dev"},
		{ref: "team/", err: `name ""`},
		{ref: "/dev", err: `namespace ""`},
		{ref: "Team/dev", err: `namespace "Team"`},
		{ref: "a/b/c", err: `name "b/c"`},
	} {
		ns, name, err := ParseServiceAccount(c.ref)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "--service-account")):
			t.Errorf("ParseServiceAccount(%q): error %v, want one naming --service-account and %s", c.ref, err, c.err)
		case c.err == "" && (err != nil || ns != c.ns || name != c.name):
			t.Errorf("ParseServiceAccount(%q) = %q, %q, %v; want %q, %q", c.ref, ns, name, err, c.ns, c.name)
		}
	}
}

func TestServiceAccountBindingName(t *testing.T) {
	if got := ServiceAccountBindingName("dev", "team"); got != "vcluster-sa-dev-team" {
		t.Errorf("got %q, want vCluster's vcluster-sa-dev-team", got)
	}
	long := ServiceAccountBindingName(strings.Repeat("a", 60), "team")
	if len(long) > 63 || !strings.HasPrefix(long, "vcluster-sa-") {
		t.Errorf("a long name: %q (%d characters)", long, len(long))
	}
}

func TestWithToken(t *testing.T) {
	kc := []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://10.0.0.1:443", certificate-authority-data: Q0E=}}]
users: [{name: u, user: {client-certificate-data: Q0VSVA==, client-key-data: S0VZ}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`)
	out, err := WithToken(kc, "tok")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	u := cfg.AuthInfos["u"]
	if u == nil || u.Token != "tok" || len(u.ClientCertificateData) > 0 || len(u.ClientKeyData) > 0 {
		t.Errorf("user u: %+v, want only the token", u)
	}
	if c := cfg.Clusters["c"]; c == nil || c.Server != "https://10.0.0.1:443" || string(c.CertificateAuthorityData) != "CA" || cfg.CurrentContext != "x" {
		t.Errorf("the cluster or context changed:\n%s", out)
	}
}
