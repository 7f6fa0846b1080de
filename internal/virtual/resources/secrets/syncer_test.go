package secrets

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestHostType(t *testing.T) {
	tests := []struct {
		in, want corev1.SecretType
	}{
		{corev1.SecretTypeServiceAccountToken, corev1.SecretTypeOpaque},
		{corev1.SecretTypeOpaque, corev1.SecretTypeOpaque},
		{corev1.SecretTypeTLS, corev1.SecretTypeTLS},
		{corev1.SecretTypeDockerConfigJson, corev1.SecretTypeDockerConfigJson},
		{corev1.SecretTypeBasicAuth, corev1.SecretTypeBasicAuth},
		{"", ""},
		{"example.com/custom", "example.com/custom"},
	}
	for _, tt := range tests {
		if got := HostType(tt.in); got != tt.want {
			t.Errorf("HostType(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
