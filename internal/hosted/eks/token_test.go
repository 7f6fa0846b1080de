package eks_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/clustersync/clustersync/internal/hosted/eks"
)

var tokenSecret = map[string][]byte{
	eks.AccessKeyField: []byte("AKIAIOSFODNN7EXAMPLE"),
	eks.SecretKeyField: []byte("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
}

// decodeToken returns the presigned URL inside an IAM token.
func decodeToken(t *testing.T, tok string) *url.URL {
	t.Helper()
	rest, ok := strings.CutPrefix(tok, "k8s-aws-v1.")
	if !ok {
		t.Fatalf("token %q lacks the k8s-aws-v1. prefix", tok)
	}
	raw, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil {
		t.Fatalf("token payload is not unpadded base64url: %v", err)
	}
	u, err := url.Parse(string(raw))
	if err != nil {
		t.Fatalf("token payload %q is not a URL: %v", raw, err)
	}
	return u
}

func hmacSHA256(key []byte, data string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(data))
	return h.Sum(nil)
}

// sigV4 recomputes the SigV4 query signature of a presigned GET u, whose
// signed headers are host and x-k8s-aws-id (with value clusterName), from
// the secret key (AWS Signature Version 4 specification).
func sigV4(t *testing.T, u *url.URL, secretKey, clusterName string) string {
	t.Helper()
	q := u.Query()
	if got := q.Get("X-Amz-SignedHeaders"); got != "host;x-k8s-aws-id" {
		t.Fatalf("X-Amz-SignedHeaders = %q, want host;x-k8s-aws-id", got)
	}
	date := q.Get("X-Amz-Date")
	scope := strings.SplitN(q.Get("X-Amz-Credential"), "/", 2)[1] // DATE/REGION/sts/aws4_request
	q.Del("X-Amz-Signature")
	empty := sha256.Sum256(nil)
	canonical := strings.Join([]string{
		"GET",
		"/",
		strings.ReplaceAll(q.Encode(), "+", "%20"),
		"host:" + u.Host + "\n" + "x-k8s-aws-id:" + clusterName + "\n",
		"host;x-k8s-aws-id",
		hex.EncodeToString(empty[:]),
	}, "\n")
	sum := sha256.Sum256([]byte(canonical))
	toSign := "AWS4-HMAC-SHA256\n" + date + "\n" + scope + "\n" + hex.EncodeToString(sum[:])
	key := []byte("AWS4" + secretKey)
	for _, part := range strings.Split(scope, "/") {
		key = hmacSHA256(key, part)
	}
	return hex.EncodeToString(hmacSHA256(key, toSign))
}

// The token is an STS GetCallerIdentity URL presigned for the region whose
// signature covers the x-k8s-aws-id header set to the cluster name.
func TestIAMToken(t *testing.T) {
	tok, err := eks.IAMToken(context.Background(), "us-west-2", tokenSecret, "prod", "")
	if err != nil {
		t.Fatal(err)
	}
	u := decodeToken(t, tok)
	q := u.Query()
	if u.Scheme != "https" || u.Host != "sts.us-west-2.amazonaws.com" || (u.Path != "/" && u.Path != "") {
		t.Errorf("URL %s, want https://sts.us-west-2.amazonaws.com/", u)
	}
	if q.Get("Action") != "GetCallerIdentity" || q.Get("Version") != "2011-06-15" {
		t.Errorf("Action=%q Version=%q, want GetCallerIdentity 2011-06-15", q.Get("Action"), q.Get("Version"))
	}
	if q.Get("X-Amz-Algorithm") != "AWS4-HMAC-SHA256" || q.Get("X-Amz-Signature") == "" {
		t.Errorf("not a SigV4 presign: %s", u.RawQuery)
	}
	cred := q.Get("X-Amz-Credential")
	if !strings.HasPrefix(cred, "AKIAIOSFODNN7EXAMPLE/") || !strings.HasSuffix(cred, "/us-west-2/sts/aws4_request") {
		t.Errorf("X-Amz-Credential = %q, want the access key and scope us-west-2/sts", cred)
	}
	signed, err := time.Parse("20060102T150405Z", q.Get("X-Amz-Date"))
	if err != nil || time.Since(signed).Abs() > time.Minute {
		t.Errorf("X-Amz-Date = %q (%v), want now", q.Get("X-Amz-Date"), err)
	}
	secretKey := string(tokenSecret[eks.SecretKeyField])
	if got, want := q.Get("X-Amz-Signature"), sigV4(t, u, secretKey, "prod"); got != want {
		t.Errorf("signature %s does not verify with x-k8s-aws-id: prod (recomputed %s)", got, want)
	}
	if q.Get("X-Amz-Signature") == sigV4(t, u, secretKey, "other") {
		t.Error("signature also verifies for cluster other: the cluster name is not signed")
	}
}

// An STS endpoint override replaces the host but not the signing region.
func TestIAMTokenSTSEndpoint(t *testing.T) {
	tok, err := eks.IAMToken(context.Background(), "eu-central-1", tokenSecret, "prod", "http://127.0.0.1:4566")
	if err != nil {
		t.Fatal(err)
	}
	u := decodeToken(t, tok)
	if u.Host != "127.0.0.1:4566" || u.Scheme != "http" {
		t.Errorf("URL %s, want the override http://127.0.0.1:4566", u)
	}
	if cred := u.Query().Get("X-Amz-Credential"); !strings.HasSuffix(cred, "/eu-central-1/sts/aws4_request") {
		t.Errorf("X-Amz-Credential = %q, want scope eu-central-1/sts", cred)
	}
	if got, want := u.Query().Get("X-Amz-Signature"), sigV4(t, u, string(tokenSecret[eks.SecretKeyField]), "prod"); got != want {
		t.Errorf("signature %s does not verify (recomputed %s)", got, want)
	}
}

// A missing credential key, region or cluster name is an error naming it.
func TestIAMTokenErrors(t *testing.T) {
	ctx := context.Background()
	for _, key := range []string{eks.AccessKeyField, eks.SecretKeyField} {
		secret := map[string][]byte{}
		for k, v := range tokenSecret {
			if k != key {
				secret[k] = v
			}
		}
		if _, err := eks.IAMToken(ctx, "us-west-2", secret, "prod", ""); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("without %s: error %v, want one naming the key", key, err)
		}
	}
	if _, err := eks.IAMToken(ctx, "", tokenSecret, "prod", ""); err == nil || !strings.Contains(err.Error(), "region") {
		t.Errorf("without region: error %v", err)
	}
	if _, err := eks.IAMToken(ctx, "us-west-2", tokenSecret, "", ""); err == nil || !strings.Contains(err.Error(), "cluster name") {
		t.Errorf("without cluster name: error %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := eks.IAMToken(cancelled, "us-west-2", tokenSecret, "prod", ""); err == nil {
		t.Error("cancelled context: no error")
	}
}
