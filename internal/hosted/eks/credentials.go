package eks

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"k8s.io/apimachinery/pkg/types"
)

// Keys of the credential Secret, as Rancher names them
// (shared/reference/003_b18b8972191c3f9a.txt, "AWS Credential Secret Format").
const (
	AccessKeyField = "amazonec2credentialConfig-accessKey"
	SecretKeyField = "amazonec2credentialConfig-secretKey"
)

// ParseCredentialRef reads spec.amazonCredentialSecret, "namespace:name".
func ParseCredentialRef(ref string) (types.NamespacedName, error) {
	ns, name, ok := strings.Cut(ref, ":")
	if !ok || ns == "" || name == "" {
		return types.NamespacedName{}, fmt.Errorf("spec.amazonCredentialSecret %q: want namespace:name", ref)
	}
	return types.NamespacedName{Namespace: ns, Name: name}, nil
}

// ClientFactory makes the EKS client for a region from the credential
// Secret's data. Production uses NewClient; tests point it at the emulator.
type ClientFactory func(ctx context.Context, region string, secret map[string][]byte) (API, error)

// NewClientFactory returns a ClientFactory that builds aws-sdk-go-v2 EKS
// clients with the Secret's static credentials; endpoint, when not empty,
// replaces the AWS endpoint (an emulator, a proxy).
func NewClientFactory(endpoint string) ClientFactory {
	return func(_ context.Context, region string, secret map[string][]byte) (API, error) {
		ak, sk := string(secret[AccessKeyField]), string(secret[SecretKeyField])
		if ak == "" || sk == "" {
			return nil, fmt.Errorf("credential secret: keys %s and %s are required", AccessKeyField, SecretKeyField)
		}
		cfg := aws.Config{Region: region, Credentials: credentials.NewStaticCredentialsProvider(ak, sk, "")}
		return eks.NewFromConfig(cfg, func(o *eks.Options) {
			if endpoint != "" {
				o.BaseEndpoint = aws.String(endpoint)
			}
		}), nil
	}
}
