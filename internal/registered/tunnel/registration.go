package tunnel

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Handshake headers of the connect request.
const (
	// HeaderCluster names the Cluster on the management side.
	HeaderCluster = "X-Clustersync-Cluster"
	// HeaderRegistration carries the Registration: base64url (no padding)
	// of its JSON.
	HeaderRegistration = "X-Clustersync-Registration"
)

// Registration is what the agent tells the server about its cluster when
// it connects.
type Registration struct {
	// Cluster is the Cluster's name on the management side.
	Cluster string `json:"cluster"`
	// APIEndpoint is the downstream API server URL as the agent reaches it,
	// e.g. https://10.96.0.1:443.
	APIEndpoint string `json:"apiEndpoint"`
	// Token is a bearer token of the agent's service account for that API.
	Token string `json:"token"`
	// CACert is the downstream cluster's CA certificate, PEM.
	CACert []byte `json:"caCert"`
	// KubeSystemUID is the UID of the kube-system namespace: the cluster's
	// identity.
	KubeSystemUID string `json:"kubeSystemUID"`
	// Version is the agent's version.
	Version string `json:"version,omitempty"`
}

// EncodeRegistration sets the handshake headers for reg and the
// registration token on h.
func EncodeRegistration(h http.Header, registrationToken string, reg Registration) error {
	b, err := json.Marshal(reg)
	if err != nil {
		return err
	}
	h.Set("Authorization", "Bearer "+registrationToken)
	h.Set(HeaderCluster, reg.Cluster)
	h.Set(HeaderRegistration, base64.RawURLEncoding.EncodeToString(b))
	return nil
}

// DecodeRegistration reads the registration token and the Registration
// from a connect request's headers. Errors name the header or the field
// that is missing or malformed.
func DecodeRegistration(h http.Header) (registrationToken string, reg Registration, err error) {
	registrationToken, ok := strings.CutPrefix(h.Get("Authorization"), "Bearer ")
	if !ok || registrationToken == "" {
		return "", reg, errors.New("header Authorization: want Bearer <registration token>")
	}
	raw := h.Get(HeaderRegistration)
	if raw == "" {
		return "", reg, fmt.Errorf("header %s is missing", HeaderRegistration)
	}
	b, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil {
		return "", reg, fmt.Errorf("header %s: %w", HeaderRegistration, err)
	}
	if err := json.Unmarshal(b, &reg); err != nil {
		return "", reg, fmt.Errorf("header %s: %w", HeaderRegistration, err)
	}
	if c := h.Get(HeaderCluster); c == "" || c != reg.Cluster {
		return "", reg, fmt.Errorf("header %s %q does not match the registration's cluster %q", HeaderCluster, c, reg.Cluster)
	}
	for _, f := range []struct{ name, v string }{{"apiEndpoint", reg.APIEndpoint}, {"token", reg.Token}, {"kubeSystemUID", reg.KubeSystemUID}, {"caCert", string(reg.CACert)}} {
		if f.v == "" {
			return "", reg, fmt.Errorf("header %s: field %s is empty", HeaderRegistration, f.name)
		}
	}
	return registrationToken, reg, nil
}
