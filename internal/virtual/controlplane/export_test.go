package controlplane

import (
	"encoding/base64"
	"fmt"
	"testing"
	"time"

	"github.com/clustersync/clustersync/internal/virtual/config"
)

func TestExportedKubeconfig(t *testing.T) {
	ca, cert, key := []byte("ca"), []byte("cert"), []byte("key")
	tests := []struct {
		name                 string
		s                    config.KubeconfigSecret
		token                string
		ctx, server          string
		insecure, hasCA, tok bool
	}{
		{"defaults: admin certificate, the Service's address", config.KubeconfigSecret{}, "", "vc1", "https://vc1.ns1.svc:443", false, true, false},
		{"context and server", config.KubeconfigSecret{KubeconfigProperties: config.KubeconfigProperties{Context: "team-a", Server: "https://a.example.com"}},
			"", "team-a", "https://a.example.com", false, true, false},
		{"insecure, a token", config.KubeconfigSecret{KubeconfigProperties: config.KubeconfigProperties{Insecure: true}},
			"tok", "vc1", "https://vc1.ns1.svc:443", true, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kc := ExportedKubeconfig(tt.s, "vc1", ServiceURL("vc1", "ns1"), ca, cert, key, tt.token)
			c, u := kc.Clusters[tt.ctx], kc.AuthInfos[tt.ctx]
			if kc.CurrentContext != tt.ctx || c == nil || u == nil || kc.Contexts[tt.ctx] == nil {
				t.Fatalf("kubeconfig %+v: want context %s", kc, tt.ctx)
			}
			if c.Server != tt.server || c.InsecureSkipTLSVerify != tt.insecure || (len(c.CertificateAuthorityData) > 0) != tt.hasCA {
				t.Errorf("cluster %+v", c)
			}
			if (u.Token != "") != tt.tok || (len(u.ClientCertificateData) > 0) == tt.tok {
				t.Errorf("user %+v", u)
			}
		})
	}
}

func TestTokenLasts(t *testing.T) {
	now := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	jwt := func(exp time.Time) string {
		payload := base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, `{"exp":%d}`, exp.Unix()))
		return "e30." + payload + ".sig"
	}
	e := Exporter{Now: func() time.Time { return now }}
	for _, tt := range []struct {
		token string
		want  bool
	}{
		{jwt(now.Add(365 * 24 * time.Hour)), true},
		{jwt(now.Add(time.Hour)), false},
		{"not-a-jwt", false},
		{"a.!!!.c", false},
	} {
		if got := e.tokenLasts(tt.token); got != tt.want {
			t.Errorf("tokenLasts(%q) = %v, want %v", tt.token, got, tt.want)
		}
	}
}
