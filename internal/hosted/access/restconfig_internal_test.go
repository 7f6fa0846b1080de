package access

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"
)

// testCA returns the PEM of a fresh self-signed CA certificate.
func testCA(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "test-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// PEM and base64-encoded PEM (with or without line breaks) give the same
// CA data.
func TestCAPEM(t *testing.T) {
	ca := testCA(t)
	b64 := base64.StdEncoding.EncodeToString(ca)
	wrapped := b64[:20] + "\n" + b64[20:] + "\n"
	for name, in := range map[string][]byte{"pem": ca, "base64": []byte(b64), "base64 wrapped": []byte(wrapped)} {
		got, err := CAPEM(in)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if string(got) != string(ca) {
			t.Errorf("%s: got\n%s\nwant\n%s", name, got, ca)
		}
	}
}

// An endpoint or CA RESTConfig cannot use is an error naming the status
// field it comes from.
func TestRESTConfigErrors(t *testing.T) {
	ca := testCA(t)
	tok := StaticToken("t")
	for _, endpoint := range []string{"", "cluster.example.com", "http://cluster.example.com", "https://", "https://user@cluster.example.com", "https://cluster.example.com/?a=b", "https://%zz"} {
		if _, err := RESTConfig(endpoint, ca, tok); err == nil || !strings.Contains(err.Error(), "status.apiEndpoint") {
			t.Errorf("endpoint %q: error %v, want one naming status.apiEndpoint", endpoint, err)
		}
	}
	notCert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("garbage")})
	for name, data := range map[string][]byte{
		"empty":          nil,
		"not base64":     []byte("!!! not a certificate !!!"),
		"base64 not PEM": []byte(base64.StdEncoding.EncodeToString([]byte("hello"))),
		"bad cert":       notCert,
		"key only":       pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("x")}),
	} {
		if _, err := RESTConfig("https://cluster.example.com", data, tok); err == nil || !strings.Contains(err.Error(), "status.caCert") {
			t.Errorf("CA %s: error %v, want one naming status.caCert", name, err)
		}
	}
	if _, err := RESTConfig("https://cluster.example.com", ca, nil); err == nil {
		t.Error("nil token source: no error")
	}
	cfg, err := RESTConfig("https://cluster.example.com:443/prefix", []byte(base64.StdEncoding.EncodeToString(ca)), tok)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://cluster.example.com:443/prefix" || string(cfg.CAData) != string(ca) || cfg.WrapTransport == nil {
		t.Errorf("config host %q, CA %q, wrap %v", cfg.Host, cfg.CAData, cfg.WrapTransport != nil)
	}
}

// A token is reused until it is TokenMaxAge old, and fetched again after;
// a dropped token is fetched again at once; errors and empty tokens are not
// cached.
func TestTokenCacheAge(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	calls := 0
	var fail error
	c := &tokenCache{
		source: func(context.Context) (string, error) {
			calls++
			if fail != nil {
				return "", fail
			}
			return "token-" + string(rune('0'+calls)), nil
		},
		maxAge: TokenMaxAge,
		now:    func() time.Time { return now },
	}
	get := func(want string, wantCalls int) {
		t.Helper()
		got, err := c.get(context.Background())
		if err != nil || got != want || calls != wantCalls {
			t.Fatalf("get = %q, %v after %d source calls; want %q after %d", got, err, calls, want, wantCalls)
		}
	}
	get("token-1", 1)
	now = now.Add(TokenMaxAge - time.Second)
	get("token-1", 1)
	now = now.Add(time.Second)
	get("token-2", 2)
	c.drop("token-1") // not the cached one: no effect
	get("token-2", 2)
	c.drop("token-2")
	get("token-3", 3)

	c.drop("token-3")
	fail = context.DeadlineExceeded
	if _, err := c.get(context.Background()); err != fail {
		t.Fatalf("get with a failing source: %v", err)
	}
	fail = nil
	get("token-5", 5)

	c.drop("token-5")
	c.source = StaticToken("")
	if _, err := c.get(context.Background()); err == nil {
		t.Fatal("empty token: no error")
	}
}
