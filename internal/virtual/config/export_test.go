package config

import (
	"reflect"
	"strings"
	"testing"
)

// KubeconfigSecrets: vc-NAME first, then secret or each additional
// Secret, names and namespaces defaulting as vCluster's.
func TestKubeconfigSecrets(t *testing.T) {
	sa := ExportServiceAccount{Name: "ci", ClusterRole: "view"}
	tests := []struct {
		name string
		e    ExportKubeConfig
		want []KubeconfigSecret
	}{
		{"default", ExportKubeConfig{}, []KubeconfigSecret{{Name: "vc-a", Namespace: "ns"}}},
		{"top-level properties", ExportKubeConfig{Context: "team-a", Server: "https://a.example.com"},
			[]KubeconfigSecret{{Name: "vc-a", Namespace: "ns", KubeconfigProperties: KubeconfigProperties{Context: "team-a", Server: "https://a.example.com"}}}},
		{"secret: the same properties elsewhere", ExportKubeConfig{Context: "c", Secret: SecretReference{Namespace: "ci"}},
			[]KubeconfigSecret{{Name: "vc-a", Namespace: "ns", KubeconfigProperties: KubeconfigProperties{Context: "c"}},
				{Name: "vc-a", Namespace: "ci", KubeconfigProperties: KubeconfigProperties{Context: "c"}}}},
		{"additional secrets, their own properties", ExportKubeConfig{Context: "c", AdditionalSecrets: []AdditionalKubeconfigSecret{
			{Name: "ci-kubeconfig", ServiceAccount: sa}, {Namespace: "argo", Insecure: true}}},
			[]KubeconfigSecret{{Name: "vc-a", Namespace: "ns", KubeconfigProperties: KubeconfigProperties{Context: "c"}},
				{Name: "ci-kubeconfig", Namespace: "ns", KubeconfigProperties: KubeconfigProperties{ServiceAccount: sa}},
				{Name: "vc-a", Namespace: "argo", KubeconfigProperties: KubeconfigProperties{Insecure: true}}}},
		{"an additional secret that is vc-NAME replaces it", ExportKubeConfig{AdditionalSecrets: []AdditionalKubeconfigSecret{
			{Name: "vc-a", Namespace: "ns", ServiceAccount: sa}}},
			[]KubeconfigSecret{{Name: "vc-a", Namespace: "ns", KubeconfigProperties: KubeconfigProperties{ServiceAccount: sa}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.e.KubeconfigSecrets("a", "ns"); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("KubeconfigSecrets:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestExportKubeConfigValidate(t *testing.T) {
	tests := []struct {
		file string
		want []string
	}{
		{"exportKubeConfig: {secret: {name: x}, additionalSecrets: [{name: y}]}", []string{"exportKubeConfig.secret: cannot be set beside additionalSecrets"}},
		{"exportKubeConfig: {additionalSecrets: [{context: x}]}", []string{"exportKubeConfig.additionalSecrets[0]: needs a name or a namespace"}},
		{"exportKubeConfig: {server: vc.example.com, serviceAccount: {clusterRole: view}}", []string{
			`exportKubeConfig.server: must be an https URL such as https://vc.example.com:443, got "vc.example.com"`,
			"exportKubeConfig.serviceAccount.name: required with serviceAccount.namespace or .clusterRole"}},
		{"exportKubeConfig: {additionalSecrets: [{namespace: Bad_NS}]}", []string{`exportKubeConfig.additionalSecrets[0].namespace: invalid namespace "Bad_NS"`}},
		{"exportKubeConfig: {additionalSecrets: [{namespace: ci, serviceAccount: {name: ci, clusterRole: view}}]}", nil},
	}
	for _, tt := range tests {
		_, err := Parse([]byte(tt.file))
		for _, w := range tt.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v\nwant %s", tt.file, err, w)
			}
		}
		if tt.want == nil && err != nil {
			t.Errorf("%s: %v", tt.file, err)
		}
	}
}
