package eks

import (
	"context"
	"errors"
	"fmt"
	"time"

	awsv1 "github.com/aws/aws-sdk-go/aws"
	credentialsv1 "github.com/aws/aws-sdk-go/aws/credentials"
	"github.com/aws/aws-sdk-go/aws/endpoints"
	"github.com/aws/aws-sdk-go/aws/session"
	stsv1 "github.com/aws/aws-sdk-go/service/sts"
	"sigs.k8s.io/aws-iam-authenticator/pkg/token"
)

// IAMTokenLifetime is how long an IAM token is accepted after it was made:
// EKS (through aws-iam-authenticator) rejects a presigned GetCallerIdentity
// URL 15 minutes after its X-Amz-Date, whatever its X-Amz-Expires says
// (sigs.k8s.io/aws-iam-authenticator/pkg/token, presignedURLExpiration).
const IAMTokenLifetime = 15 * time.Minute

// IAMToken returns a bearer token for the Kubernetes API of EKS cluster
// clusterName in region, the way `aws-iam-authenticator token` and Rancher
// make it (Rancher's EKS driver, https://github.com/rancher/eks-operator, "AWS IAM
// Authenticator"): "k8s-aws-v1." followed by the unpadded base64url of an STS
// GetCallerIdentity URL presigned with SigV4 whose signed headers include
// x-k8s-aws-id: clusterName. The token is accepted for IAMTokenLifetime.
//
// The credentials are the static access key pair of the credential Secret's
// data, keys AccessKeyField and SecretKeyField; a missing or empty key is an
// error naming it. stsEndpoint, when not empty, replaces the regional STS
// endpoint https://sts.REGION.amazonaws.com in the URL (an emulator); the
// region stays in the signature's credential scope.
//
// Making a token is local (a signature over the request, no network call),
// so it works offline; ctx is only checked for cancellation. The token is
// made by sigs.k8s.io/aws-iam-authenticator/pkg/token's GetWithSTS, whose
// latest release the Go module proxy serves (v0.6.30) still takes an
// aws-sdk-go (v1) STS client, hence the v1 session here; it loads no shared
// AWS config files.
func IAMToken(ctx context.Context, region string, secret map[string][]byte, clusterName, stsEndpoint string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if region == "" {
		return "", errors.New("IAM token: region is required")
	}
	if clusterName == "" {
		return "", errors.New("IAM token: cluster name is required")
	}
	for _, key := range []string{AccessKeyField, SecretKeyField} {
		if len(secret[key]) == 0 {
			return "", fmt.Errorf("IAM token: credential secret: key %s is missing or empty", key)
		}
	}
	cfg := &awsv1.Config{
		Region:              awsv1.String(region),
		Credentials:         credentialsv1.NewStaticCredentials(string(secret[AccessKeyField]), string(secret[SecretKeyField]), ""),
		STSRegionalEndpoint: endpoints.RegionalSTSEndpoint,
	}
	if stsEndpoint != "" {
		cfg.Endpoint = awsv1.String(stsEndpoint)
	}
	sess, err := session.NewSessionWithOptions(session.Options{Config: *cfg, SharedConfigState: session.SharedConfigDisable})
	if err != nil {
		return "", fmt.Errorf("IAM token: AWS session: %w", err)
	}
	gen, err := token.NewGenerator(false, false)
	if err != nil {
		return "", fmt.Errorf("IAM token: %w", err)
	}
	tok, err := gen.GetWithSTS(clusterName, stsv1.New(sess))
	if err != nil {
		return "", fmt.Errorf("IAM token: presign STS GetCallerIdentity: %w", err)
	}
	return tok.Token, nil
}
