package access

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CredentialRef reads a credential Secret reference, "namespace:name", as
// Rancher writes them (spec.amazonCredentialSecret,
// spec.azureCredentialSecret, spec.googleCredentialSecret); field names
// the reference in the error.
func CredentialRef(field, ref string) (types.NamespacedName, error) {
	ns, name, ok := strings.Cut(ref, ":")
	if !ok || ns == "" || name == "" {
		return types.NamespacedName{}, fmt.Errorf("%s %q: want namespace:name", field, ref)
	}
	return types.NamespacedName{Namespace: ns, Name: name}, nil
}

// LoadCredential reads with k the data of the credential Secret ref
// (CredentialRef) names; errors name field or the Secret.
func LoadCredential(ctx context.Context, k client.Reader, field, ref string) (types.NamespacedName, map[string][]byte, error) {
	key, err := CredentialRef(field, ref)
	if err != nil {
		return key, nil, err
	}
	var s corev1.Secret
	if err := k.Get(ctx, key, &s); err != nil {
		return key, nil, fmt.Errorf("credential secret %s (%s): %w", key, field, err)
	}
	return key, s.Data, nil
}
