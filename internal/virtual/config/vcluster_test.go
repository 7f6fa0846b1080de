package config

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// setPath sets the dotted path p in the document doc to v.
func setPath(doc map[string]any, p string, v any) {
	_ = unstructured.SetNestedField(doc, v, strings.Split(p, ".")...)
}

// Every vCluster release's own values.yaml — the file each `vcluster
// create` starts from — parses, and sets no key to other than its
// defaults, so the note is empty.
func TestVClusterReleaseValuesParse(t *testing.T) {
	k := vclusterKeys()
	if len(k.Releases) < 80 || k.Releases[0] != "v0.20.0" {
		t.Fatalf("vcluster-keys.json holds releases %v, want v0.20.0 on", k.Releases)
	}
	for _, r := range k.Releases {
		data, err := yaml.Marshal(k.Values(r))
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := Parse(data)
		if err != nil {
			t.Errorf("vCluster %s values.yaml:\n%v", r, err)
			continue
		}
		if msg := cfg.NoEffectMessage(); msg != "" {
			t.Errorf("vCluster %s values.yaml: %s", r, msg)
		}
		// Its control plane keys (VClusterDefaultMeansOurs, the image)
		// leave clustersync's defaults in place.
		got, want := cfg.ControlPlane.StatefulSet, Default().ControlPlane.StatefulSet
		if !reflect.DeepEqual(got.Image, want.Image) || !reflect.DeepEqual(got.Resources, want.Resources) ||
			!reflect.DeepEqual(got.Security, want.Security) || got.Probes != want.Probes || got.EnableServiceLinks != want.EnableServiceLinks {
			t.Errorf("vCluster %s values.yaml: image %+v, resources %+v, security %+v, probes %+v, service links %v; want clustersync's defaults",
				r, got.Image, got.Resources, got.Security, got.Probes, got.EnableServiceLinks)
		}
	}
}

// A key of VClusterDefaultMeansOurs set to a vCluster default gets
// clustersync's default; any other value (a part of the default, too) is
// the file's. vCluster's image is replaced whole, and noted when chosen.
func TestVClusterDefaultMeansOurs(t *testing.T) {
	def := Default().ControlPlane.StatefulSet
	tests := []struct {
		name, file string
		check      func(ControlPlaneStatefulSet) bool
		noted      []NoEffectKey
	}{
		{"vCluster 0.36's resources", "resources: {limits: {ephemeral-storage: 10Gi, memory: 4Gi}, requests: {ephemeral-storage: 1Gi, cpu: 200m, memory: 256Mi}}",
			func(s ControlPlaneStatefulSet) bool { return reflect.DeepEqual(s.Resources, def.Resources) }, nil},
		{"part of them is the file's", "resources: {limits: {memory: 4Gi}}",
			func(s ControlPlaneStatefulSet) bool { q := s.Resources.Limits["memory"]; return q.String() == "4Gi" }, nil},
		{"vCluster's container security context (root)", "security: {containerSecurityContext: {allowPrivilegeEscalation: false, runAsUser: 0, runAsGroup: 0}}",
			func(s ControlPlaneStatefulSet) bool { return s.Security.ContainerSecurityContext.RunAsUser == nil }, nil},
		{"another is the file's", "security: {containerSecurityContext: {runAsUser: 1000}}",
			func(s ControlPlaneStatefulSet) bool {
				u := s.Security.ContainerSecurityContext.RunAsUser
				return u != nil && *u == 1000
			}, nil},
		{"vCluster's probe timings", "probes: {startupProbe: {enabled: true, failureThreshold: 300, timeoutSeconds: 3, periodSeconds: 6}}",
			func(s ControlPlaneStatefulSet) bool { return s.Probes == def.Probes }, nil},
		{"a probe switched off", "probes: {livenessProbe: {enabled: false}}",
			func(s ControlPlaneStatefulSet) bool {
				return !s.Probes.LivenessProbe.Enabled && s.Probes.LivenessProbe.PeriodSeconds == 10
			}, nil},
		{"service links, vCluster's default", "enableServiceLinks: true",
			func(s ControlPlaneStatefulSet) bool { return !s.EnableServiceLinks }, nil},
		{"vCluster's image", "image: {registry: ghcr.io, repository: loft-sh/vcluster-pro, tag: \"\"}",
			func(s ControlPlaneStatefulSet) bool { return s.Image == def.Image }, nil},
		{"vCluster's OSS image, pinned", "image: {repository: loft-sh/vcluster-oss, tag: 0.36.1}",
			func(s ControlPlaneStatefulSet) bool { return s.Image == def.Image },
			[]NoEffectKey{{"controlPlane.statefulSet.image", ReasonOwnBinary}}},
		{"vCluster's image, its registry in the repository", "image: {registry: \"\", repository: ghcr.io/loft-sh/vcluster, tag: 0.36.1}",
			func(s ControlPlaneStatefulSet) bool { return s.Image == def.Image },
			[]NoEffectKey{{"controlPlane.statefulSet.image", ReasonOwnBinary}}},
		{"another image is the file's", "image: {registry: registry.example.com, repository: mirror/clustersync, tag: v1}",
			func(s ControlPlaneStatefulSet) bool {
				return s.Image.Registry == "registry.example.com" && s.Image.Tag == "v1"
			}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse([]byte("controlPlane:\n  statefulSet: {" + tt.file + "}\n"))
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(cfg.ControlPlane.StatefulSet) {
				t.Errorf("statefulSet %+v", cfg.ControlPlane.StatefulSet)
			}
			if got := cfg.NoEffect(); !slices.Equal(got, tt.noted) {
				t.Errorf("NoEffect %v, want %v", got, tt.noted)
			}
		})
	}
}

// sample is a value of JSON Schema type typ.
func sample(typ string) any {
	switch typ {
	case "boolean":
		return true
	case "integer":
		return json.Number("1")
	case "number":
		return json.Number("1.5")
	case "array":
		return []any{}
	case "object":
		return map[string]any{}
	}
	return "x"
}

// Every key of every vCluster release, set alone to a value of each type
// vCluster's schema allows it, is accepted: no "unknown key" and no type
// error at its path (a value may still be refused for what it says, e.g.
// an external etcd without an endpoint).
func TestVClusterEveryKeyAccepted(t *testing.T) {
	k := vclusterKeys()
	refused := 0
	for _, key := range k.Keys {
		types := key.Types
		if len(types) == 0 {
			types = []string{"string"}
		}
		for _, typ := range types {
			doc := map[string]any{}
			p := strings.ReplaceAll(key.Path, "*", "x")
			value := sample(typ)
			// A string key with a default takes one of its defaults
			// ("auto" of the true/false/"auto" switches).
			for _, d := range k.defaults[strings.ReplaceAll(key.Path, ".", sep)] {
				if str, ok := d.(string); ok && typ == "string" && str != "" {
					value = str
				}
			}
			setPath(doc, p, value)
			data, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Parse(data)
			for _, e := range fieldErrors(err) {
				if strings.Contains(e.Message, "unknown key") || strings.HasPrefix(e.Message, "expected ") {
					refused++
					t.Errorf("%s (%s, in %v) = %v: %v", key.Path, typ, key.In, value, e)
				}
			}
		}
	}
	t.Logf("%d keys of %d releases (%s to %s) tried, %d refused", len(k.Keys), len(k.Releases), k.Releases[0], k.Releases[len(k.Releases)-1], refused)
}

// fieldErrors is the FieldErrors err joins.
func fieldErrors(err error) []*FieldError {
	var out []*FieldError
	if multi, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range multi.Unwrap() {
			out = append(out, fieldErrors(e)...)
		}
		return out
	}
	var fe *FieldError
	if errors.As(err, &fe) {
		out = append(out, fe)
	}
	return out
}

// Keys clustersync's types lack are checked against vCluster's: a typo is
// refused with the key meant, a value of the wrong type with vCluster's
// types; a vCluster key is accepted and, set to other than vCluster's
// default, noted once (a map once, not each entry) with why.
func TestVClusterKeysCheckedAndNoted(t *testing.T) {
	tests := []struct {
		name, file string
		errs       []string      // each error's text, in order; none when nil
		noted      []NoEffectKey // when errs is nil
	}{
		{
			name: "a typo inside a section kept as written",
			file: "exportKubeConfig: {contxt: my-vcluster}\n",
			errs: []string{"exportKubeConfig.contxt: unknown key; did you mean context? (known: additionalSecrets, context, insecure, secret, server, serviceAccount)"},
		},
		{
			name: "a typo in a section of clustersync's types, among vCluster's keys",
			file: "controlPlane:\n  tlsRoot: {enabled: true}\n",
			errs: []string{"controlPlane.tlsRoot: unknown key; did you mean tlsRoute? (known: "},
		},
		{
			name: "a wrong type inside a section kept as written",
			file: "controlPlane: {coredns: {priorityClassName: 5}}\n",
			errs: []string{"controlPlane.coredns.priorityClassName: expected string, got number 5"},
		},
		{
			name: "a vCluster key of 0.3x beside clustersync's own",
			file: "controlPlane:\n  tlsRoute: {enabled: true}\n  statefulSet: {env: [{name: A, value: b}], args: [--x]}\n",
			noted: []NoEffectKey{
				{"controlPlane.statefulSet.args", ReasonOwnBinary},
				{"controlPlane.tlsRoute.enabled", ReasonNotYet},
			},
		},
		{
			name:  "a map is noted once",
			file:  "controlPlane:\n  tlsRoute: {labels: {a: b, c.example.com/d: e}}\n",
			noted: []NoEffectKey{{"controlPlane.tlsRoute.labels", ReasonNotYet}},
		},
		{
			name: "reasons",
			file: "platform: {apiKey: {secretName: key}}\ncontrolPlane:\n  distro: {k3s: {enabled: true}}\ntelemetry: {enabled: true}\n",
			noted: []NoEffectKey{
				{"controlPlane.distro.k3s.enabled", ReasonDistro},
				{"platform.apiKey.secretName", ReasonPlatform},
			},
		},
		{
			name: "an object clustersync passes on to Kubernetes is not noted",
			file: "policies:\n  resourceQuota:\n    scopeSelector: {matchExpressions: [{scopeName: PriorityClass, operator: Exists}]}\n",
		},
		{
			name: "vCluster's defaults and what clustersync does anyway are not noted",
			file: "controlPlane:\n  distro: {k8s: {enabled: true}}\n  ingress: {enabled: false, pathType: ImplementationSpecific}\ntelemetry: {enabled: false}\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tt.file))
			if tt.errs != nil {
				fes := fieldErrors(err)
				if len(fes) != len(tt.errs) {
					t.Fatalf("errors %v, want %d", err, len(tt.errs))
				}
				for i, want := range tt.errs {
					if !strings.HasPrefix(fes[i].Error(), want) {
						t.Errorf("error %d:\n got %s\nwant %s…", i, fes[i], want)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.NoEffect(); !slices.Equal(got, tt.noted) {
				t.Errorf("NoEffect:\n got %q\nwant %q", got, tt.noted)
			}
		})
	}
}

// Statuses follows the types: a key of clustersync's types takes effect, a
// key inside a section kept as written or one the types lack has the
// reason NoEffect gives; no key of the newest release is left out.
func TestVClusterStatuses(t *testing.T) {
	k := vclusterKeys()
	newest := k.Releases[len(k.Releases)-1]
	got := map[string]string{}
	for _, s := range k.Statuses(newest) {
		got[s.Path] = s.Reason
	}
	for path, want := range map[string]string{
		"sync.toHost.pods.enabled":                                "",
		"sync.toHost.customResources.*.enabled":                   "",
		"controlPlane.statefulSet.highAvailability.replicas":      "",
		"controlPlane.statefulSet.highAvailability.leaseDuration": ReasonOneReplica,
		"controlPlane.tlsRoute.enabled":                           ReasonNotYet,
		"privateNodes.enabled":                                    ReasonOwnNodes,
		"exportKubeConfig.context":                                "",
		"controlPlane.coredns.overwriteConfig":                    "",
		"controlPlane.serviceMonitor.enabled":                     "",
		"controlPlane.hostPathMapper.enabled":                     ReasonNotYet,
		"platform.apiKey.secretName":                              ReasonPlatform,
	} {
		if r, ok := got[path]; !ok || r != want {
			t.Errorf("%s: reason %q (listed %v), want %q", path, r, ok, want)
		}
	}
	n := 0
	for _, key := range k.Keys {
		if has(k.Releases, key.In, newest) {
			n++
		}
	}
	if len(got) != n {
		t.Errorf("%d statuses, want one per key of %s, %d", len(got), newest, n)
	}
}

// controlPlane.advanced.defaultImageRegistry replaces the registry of the
// rewrite-hosts image, tag or digest kept.
func TestRewriteHostsImage(t *testing.T) {
	for _, tt := range []struct{ registry, image, want string }{
		{"", "ghcr.io/clustersync/busybox:1.35.0", "ghcr.io/clustersync/busybox:1.35.0"},
		{"registry.example.com/mirror", "ghcr.io/clustersync/busybox:1.35.0", "registry.example.com/mirror/clustersync/busybox:1.35.0"},
		{"registry.example.com:5000", "library/alpine:3.20", "registry.example.com:5000/library/alpine:3.20"},
		{"registry.example.com", "alpine@sha256:" + strings.Repeat("a", 64), "registry.example.com/library/alpine@sha256:" + strings.Repeat("a", 64)},
	} {
		c := Default()
		c.ControlPlane.Advanced.DefaultImageRegistry = tt.registry
		c.Sync.ToHost.Pods.RewriteHosts.InitContainer.Image = ImageRef(tt.image)
		if got := c.RewriteHostsImage(); got != tt.want {
			t.Errorf("%s with %q: %s, want %s", tt.image, tt.registry, got, tt.want)
		}
	}
	if _, err := Parse([]byte("controlPlane: {advanced: {defaultImageRegistry: \"https://registry.example.com\"}}\n")); err == nil ||
		!strings.Contains(err.Error(), "controlPlane.advanced.defaultImageRegistry: must be a registry host") {
		t.Errorf("a URL as defaultImageRegistry: %v", err)
	}
}
