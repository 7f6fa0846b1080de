package kubetoken

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// PathPattern is where the management server hands out kubeconfigs: POST
// /v1/clusters/NAME/kubeconfig?ttl=DURATION (a Go duration, e.g. 8h;
// default DefaultTTL, at most MaxTTL), authenticated with a credential of
// the management cluster (a bearer token, or a client certificate its API
// server accepts). The answer is the kubeconfig (YAML), its token's expiry
// in header ExpiresHeader; a refusal is a Kubernetes Status.
const PathPattern = "/v1/clusters/{cluster}/kubeconfig"

// ExpiresHeader carries the expiry of the token of a kubeconfig
// PathPattern answers with (RFC 3339).
const ExpiresHeader = "Clustersync-Token-Expires"

// Request asks the management server at serverURL (trusting caPEM; none:
// the system's roots) for a kubeconfig for cluster, valid for ttl (0: the
// server's default), sent with the credential of mgmt, the caller's
// configuration of the management cluster (a token, an exec plugin or a
// client certificate: client-go sends it). Errors name the server's
// refusal (its Status message and HTTP status).
func Request(ctx context.Context, mgmt *rest.Config, serverURL string, caPEM []byte, cluster string, ttl time.Duration) (kc []byte, expires time.Time, err error) {
	cfg := rest.CopyConfig(mgmt)
	cfg.Host, cfg.APIPath = serverURL, ""
	cfg.TLSClientConfig.CAData, cfg.TLSClientConfig.CAFile, cfg.TLSClientConfig.ServerName = caPEM, "", ""
	cfg.TLSClientConfig.Insecure = false
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, time.Time{}, err
	}
	u := strings.TrimSuffix(serverURL, "/") + strings.Replace(PathPattern, "{cluster}", url.PathEscape(cluster), 1)
	if ttl != 0 {
		u += "?ttl=" + url.QueryEscape(ttl.String())
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, nil)
	if err != nil {
		return nil, time.Time{}, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("the clustersync manager at %s: %w", serverURL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, time.Time{}, err
	}
	if resp.StatusCode != http.StatusOK {
		var st metav1.Status
		msg := strings.TrimSpace(string(body))
		if json.Unmarshal(body, &st) == nil && st.Message != "" {
			msg = st.Message
		}
		return nil, time.Time{}, fmt.Errorf("the clustersync manager at %s refused: %s (HTTP %d)", serverURL, msg, resp.StatusCode)
	}
	if !bytes.Contains(body, []byte("kind: Config")) {
		return nil, time.Time{}, fmt.Errorf("the clustersync manager at %s answered no kubeconfig", serverURL)
	}
	expires, _ = time.Parse(time.RFC3339, resp.Header.Get(ExpiresHeader))
	return body, expires, nil
}
