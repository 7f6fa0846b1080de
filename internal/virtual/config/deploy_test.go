package config

import (
	"strings"
	"testing"
)

func TestParseManifests(t *testing.T) {
	tests := []struct {
		name, in string
		kinds    []string
		err      string
	}{
		{"empty", "", nil, ""},
		{"separators only", "---\n---\n", nil, ""},
		{"two documents", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n# comment\napiVersion: v1\nkind: Namespace\nmetadata: {name: b}\n", []string{"ConfigMap", "Namespace"}, ""},
		{"separator with comment", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n--- # next\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n", []string{"ConfigMap", "ConfigMap"}, ""},
		{"no kind", "apiVersion: v1\nmetadata: {name: a}\n", nil, "document 1: no kind"},
		{"no apiVersion", "---\nkind: ConfigMap\nmetadata: {name: a}\n", nil, "document 2: no apiVersion"},
		{"no name", "apiVersion: v1\nkind: ConfigMap\n", nil, "document 1 (ConfigMap): no metadata.name"},
		{"list", "apiVersion: v1\nkind: List\nitems: []\nmetadata: {name: a}\n", nil, "kind List: write each item as a document"},
		{"not YAML", "a: [\n", nil, "document 1:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := ParseManifests(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			for _, o := range objs {
				kinds = append(kinds, o.GetKind())
			}
			if strings.Join(kinds, ",") != strings.Join(tt.kinds, ",") {
				t.Errorf("kinds = %v, want %v", kinds, tt.kinds)
			}
		})
	}
}

func TestDeployManifests(t *testing.T) {
	c, err := Parse([]byte(`
networking:
  advanced:
    clusterDomain: corp.local
experimental:
  deploy:
    vcluster:
      manifests: |
        apiVersion: v1
        kind: Namespace
        metadata:
          name: platform
      manifestsTemplate: |
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: {{ .Release.Name }}-info
          namespace: platform
        data:
          namespace: {{ .Release.Namespace }}
          domain: {{ .Values.networking.advanced.clusterDomain }}
`))
	if err != nil {
		t.Fatal(err)
	}
	text, err := c.DeployManifests("team-a", "vc-team-a")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := ParseManifests(text)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 || objs[1].GetName() != "team-a-info" {
		t.Fatalf("objects = %v", objs)
	}
	data := objs[1].Object["data"].(map[string]any)
	if data["namespace"] != "vc-team-a" || data["domain"] != "corp.local" {
		t.Errorf("rendered data = %v", data)
	}

	// A template that renders to what does not parse, or fails to execute.
	for _, tt := range []struct{ tmpl, want string }{
		{"kind: ConfigMap\nmetadata: {name: x}\n", "experimental.deploy.vcluster.manifestsTemplate: document 2: no apiVersion"},
		{"{{ .Release.Name.Nope }}", "experimental.deploy.vcluster.manifestsTemplate: template: manifestsTemplate:1:11: executing"},
	} {
		c := Default()
		c.Experimental.Deploy.VCluster.ManifestsTemplate = tt.tmpl
		if _, err := c.DeployManifests("a", "b"); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("template %q: err = %v, want %q", tt.tmpl, err, tt.want)
		}
	}
}

func TestValidateDeploy(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"bad manifests", "manifests: 'kind: X'", "experimental.deploy.vcluster.manifests: document 1: no apiVersion"},
		{"bad template", "manifestsTemplate: '{{ .Values'", "experimental.deploy.vcluster.manifestsTemplate: template: :1: unclosed action"},
		{"no chart", "helm: [{}]", "experimental.deploy.vcluster.helm[0].chart.name: required (or bundle"},
		{"no repo", "helm: [{chart: {name: a}}]", "experimental.deploy.vcluster.helm[0].chart.repo: required"},
		{"bad repo", "helm: [{chart: {name: a, repo: 'ftp://x/y'}}]", `experimental.deploy.vcluster.helm[0].chart.repo: "ftp://x/y": want an http:// or https://`},
		{"bad bundle", "helm: [{bundle: '!!', release: {name: a}}]", "experimental.deploy.vcluster.helm[0].bundle: not base64"},
		{"bundle without name", "helm: [{bundle: 'AAAA'}]", "experimental.deploy.vcluster.helm[0].release.name: required when chart.name is empty"},
		{"bad release name", "helm: [{chart: {name: A_b, repo: 'https://x'}}]", `experimental.deploy.vcluster.helm[0].release.name: "A_b": a release name is a DNS subdomain`},
		{"bad namespace", "helm: [{chart: {name: a, repo: 'https://x'}, release: {namespace: 'No'}}]", `experimental.deploy.vcluster.helm[0].release.namespace: "No"`},
		{"same release", "helm: [{chart: {name: a, repo: 'https://x'}}, {chart: {name: b, repo: 'oci://r/c'}, release: {name: a, namespace: default}}]", "experimental.deploy.vcluster.helm[1].release: release default/a is also that of experimental.deploy.vcluster.helm[0]"},
		{"bad timeout", "helm: [{chart: {name: a, repo: 'https://x'}, timeout: soon}]", `experimental.deploy.vcluster.helm[0].timeout: "soon": want a positive Go duration`},
		{"bad values", "helm: [{chart: {name: a, repo: 'https://x'}, values: '[1]'}]", "experimental.deploy.vcluster.helm[0].values: not a YAML object"},
		{"unknown key", "helm: [{chart: {name: a, repo: 'https://x', url: y}}]", "experimental.deploy.vcluster.helm[0].chart.url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := "experimental:\n  deploy:\n    vcluster:\n      " + tt.yaml + "\n"
			_, err := Parse([]byte(in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
	c, err := Parse([]byte("experimental:\n  deploy:\n    vcluster:\n      helm:\n      - chart: {name: nginx, repo: 'oci://registry.example/charts', version: 1.2.3}\n        timeout: 5m\n        values: 'replicas: 2'\n"))
	if err != nil {
		t.Fatal(err)
	}
	h := c.Experimental.Deploy.VCluster.Helm[0]
	if h.ReleaseName() != "nginx" || h.ReleaseNamespace() != "default" || h.TimeoutDuration().String() != "5m0s" {
		t.Errorf("release %s/%s timeout %s", h.ReleaseNamespace(), h.ReleaseName(), h.TimeoutDuration())
	}
	if (DeployHelm{}).TimeoutDuration() != DefaultDeployTimeout {
		t.Errorf("default timeout %s", (DeployHelm{}).TimeoutDuration())
	}
}
