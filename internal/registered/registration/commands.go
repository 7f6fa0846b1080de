package registration

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// CAChecksum is the lowercase hex SHA-256 of the exact bytes of the
// server's CA certificate PEM, as the agent computes it
// (CATTLE_CA_CHECKSUM in Rancher).
func CAChecksum(caPEM []byte) string {
	sum := sha256.Sum256(caPEM)
	return hex.EncodeToString(sum[:])
}

// ManifestURL is the import manifest's URL on the server at serverURL.
func ManifestURL(serverURL, token, cluster string) string {
	return strings.TrimSuffix(serverURL, "/") + ImportPath(token, cluster)
}

// Commands are the two ways to apply the manifest Rancher shows: apply
// (kubectl apply -f <url>) and, for a server whose certificate kubectl
// does not trust, insecure (curl --insecure -sfL <url> | kubectl apply -f -).
func Commands(serverURL, token, cluster string) (apply, insecure string) {
	u := ManifestURL(serverURL, token, cluster)
	return "kubectl apply -f " + u, "curl --insecure -sfL " + u + " | kubectl apply -f -"
}
