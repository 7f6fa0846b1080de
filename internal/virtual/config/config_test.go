package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDefault(t *testing.T) {
	c := Default()
	tests := []struct {
		name string
		got  any
		want any
	}{
		// sync.toHost
		{"toHost.pods.enabled", c.Sync.ToHost.Pods.Enabled, true},
		{"toHost.pods.translateImage", c.Sync.ToHost.Pods.TranslateImage, map[string]string{}},
		{"toHost.pods.enforceTolerations", c.Sync.ToHost.Pods.EnforceTolerations, []string{}},
		{"toHost.pods.useSecretsForSATokens", c.Sync.ToHost.Pods.UseSecretsForSATokens, true},
		{"toHost.pods.rewriteHosts.enabled", c.Sync.ToHost.Pods.RewriteHosts.Enabled, true},
		{"toHost.pods.rewriteHosts.initContainer.image", c.Sync.ToHost.Pods.RewriteHosts.InitContainer.Image, ImageRef(DefaultRewriteHostsImage)},
		{"toHost.pods.rewriteHosts.initContainer.resources.limits.cpu", quantity(c.Sync.ToHost.Pods.RewriteHosts.InitContainer.Resources.Limits, "cpu"), "30m"},
		{"toHost.pods.rewriteHosts.initContainer.resources.limits.memory", quantity(c.Sync.ToHost.Pods.RewriteHosts.InitContainer.Resources.Limits, "memory"), "64Mi"},
		{"toHost.pods.rewriteHosts.initContainer.resources.requests.cpu", quantity(c.Sync.ToHost.Pods.RewriteHosts.InitContainer.Resources.Requests, "cpu"), "30m"},
		{"toHost.pods.rewriteHosts.initContainer.resources.requests.memory", quantity(c.Sync.ToHost.Pods.RewriteHosts.InitContainer.Resources.Requests, "memory"), "64Mi"},
		{"toHost.pods.translate", c.Sync.ToHost.Pods.Translate, []Patch{}},
		{"toHost.secrets", c.Sync.ToHost.Secrets, SelectiveSync{Enabled: true, All: false, Translate: []Patch{}}},
		{"toHost.configMaps", c.Sync.ToHost.ConfigMaps, SelectiveSync{Enabled: true, All: false, Translate: []Patch{}}},
		{"toHost.ingresses", c.Sync.ToHost.Ingresses, EnableSwitchWithTranslate{Enabled: false, Translate: []Patch{}}},
		{"toHost.services", c.Sync.ToHost.Services, EnableSwitchWithTranslate{Enabled: true, Translate: []Patch{}}},
		{"toHost.endpoints", c.Sync.ToHost.Endpoints.Enabled, true},
		{"toHost.endpointSlices", c.Sync.ToHost.EndpointSlices.Enabled, true},
		{"toHost.networkPolicies", c.Sync.ToHost.NetworkPolicies.Enabled, false},
		{"toHost.persistentVolumeClaims", c.Sync.ToHost.PersistentVolumeClaims, EnableSwitchWithTranslate{Enabled: true, Translate: []Patch{}}},
		{"toHost.persistentVolumes", c.Sync.ToHost.PersistentVolumes.Enabled, false},
		{"toHost.volumeSnapshots", c.Sync.ToHost.VolumeSnapshots.Enabled, false},
		{"toHost.storageClasses", c.Sync.ToHost.StorageClasses.Enabled, false},
		{"toHost.serviceAccounts", c.Sync.ToHost.ServiceAccounts.Enabled, false},
		{"toHost.podDisruptionBudgets", c.Sync.ToHost.PodDisruptionBudgets.Enabled, false},
		{"toHost.priorityClasses", c.Sync.ToHost.PriorityClasses.Enabled, false},
		{"toHost.customResources", c.Sync.ToHost.CustomResources, map[string]ToHostCustomResource{}},
		// sync.fromHost
		{"fromHost.nodes", c.Sync.FromHost.Nodes, SyncNodes{Selector: NodeSelector{Labels: map[string]string{}}}},
		{"fromHost.events", c.Sync.FromHost.Events.Enabled, true},
		{"fromHost.ingressClasses", c.Sync.FromHost.IngressClasses.Enabled, false},
		{"fromHost.runtimeClasses", c.Sync.FromHost.RuntimeClasses.Enabled, false},
		{"fromHost.priorityClasses", c.Sync.FromHost.PriorityClasses.Enabled, false},
		{"fromHost.storageClasses", c.Sync.FromHost.StorageClasses.Enabled, AutoSwitchAuto},
		{"fromHost.csiNodes", c.Sync.FromHost.CSINodes.Enabled, AutoSwitchAuto},
		{"fromHost.csiDrivers", c.Sync.FromHost.CSIDrivers.Enabled, AutoSwitchAuto},
		{"fromHost.csiStorageCapacities", c.Sync.FromHost.CSIStorageCapacities.Enabled, AutoSwitchAuto},
		{"fromHost.customResources", c.Sync.FromHost.CustomResources, map[string]FromHostCustomResource{}},
		// controlPlane
		{"etcd.embedded", c.ControlPlane.BackingStore.Etcd.Embedded.Enabled, true},
		{"etcd.external", c.ControlPlane.BackingStore.Etcd.External, EtcdExternal{}},
		// syncer
		{"syncer", c.Syncer, Syncer{Workers: 10, HostQPS: 1000, HostBurst: 2000, VirtualQPS: 1000, VirtualBurst: 2000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !reflect.DeepEqual(tt.got, tt.want) {
				t.Errorf("got %#v, want %#v", tt.got, tt.want)
			}
		})
	}
	if err := c.Validate(); err != nil {
		t.Errorf("Default().Validate() = %v, want nil", err)
	}
}

func TestDefaultReturnsFreshValues(t *testing.T) {
	a := Default()
	a.Sync.ToHost.Pods.TranslateImage["x"] = "y"
	a.Sync.ToHost.Pods.RewriteHosts.InitContainer.Resources.Limits["cpu"] = resource.MustParse("1")
	if b := Default(); len(b.Sync.ToHost.Pods.TranslateImage) != 0 || quantity(b.Sync.ToHost.Pods.RewriteHosts.InitContainer.Resources.Limits, "cpu") != "30m" {
		t.Error("changing one Default() changed the next one")
	}
}

func TestParseGivesDefaults(t *testing.T) {
	tests := []struct {
		name string
		yaml string
	}{
		{"empty file", ""},
		{"empty object", "{}"},
		{"comments only", "# nothing here\n"},
		{"empty sections", "sync:\ncontrolPlane:\nsyncer:\n"},
		{"nulls keep defaults", "sync:\n  toHost:\n    pods:\n      enabled: null\n      translateImage: ~\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.yaml))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !reflect.DeepEqual(got, Default()) {
				t.Errorf("got %+v, want Default()", got)
			}
		})
	}
}

func TestParseOverrides(t *testing.T) {
	const file = `
sync:
  toHost:
    pods:
      enabled: false
      translateImage:
        nginx:1.27: mirror.example.com/nginx:1.27
      enforceTolerations: ["example.com/gpu=true:NoSchedule"]
      rewriteHosts:
        initContainer:
          resources:
            limits:
              cpu: 100m   # memory keeps its default
            requests:
              cpu: 1      # a number is a quantity too
      translate:
        - path: metadata.labels.team
          expression: 'value + "-host"'
          reverseExpression: 'value.slice(0, -5)'
        - path: spec.secretName
          reference:
            apiVersion: v1
            kind: Secret
        - path: spec.selector
          labels: {}
    secrets:
      all: true
    ingresses:
      enabled: true
    customResources:
      widgets.example.com:
        enabled: true
  fromHost:
    nodes:
      enabled: true
      selector:
        labels:
          topology.kubernetes.io/zone: eu-west-1a
    storageClasses:
      enabled: true
    csiNodes:
      enabled: false
controlPlane:
  backingStore:
    etcd:
      embedded:
        enabled: false
      external:
        enabled: true
        endpoint: https://etcd.example.com:2379
        tls:
          caFile: /etc/etcd/ca.crt
          certFile: /etc/etcd/client.crt
          keyFile: /etc/etcd/client.key
syncer:
  workers: 16
  hostQPS: 40.5
  hostBurst: 80.0   # a whole number written as a float is an integer
`
	got, err := Parse([]byte(file))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}

	want := Default()
	pods := &want.Sync.ToHost.Pods
	pods.Enabled = false
	pods.TranslateImage = map[string]string{"nginx:1.27": "mirror.example.com/nginx:1.27"}
	pods.EnforceTolerations = []string{"example.com/gpu=true:NoSchedule"}
	pods.RewriteHosts.InitContainer.Resources.Limits["cpu"] = resource.MustParse("100m")
	pods.RewriteHosts.InitContainer.Resources.Requests["cpu"] = resource.MustParse("1")
	pods.Translate = []Patch{
		{Path: "metadata.labels.team", Expression: `value + "-host"`, ReverseExpression: "value.slice(0, -5)"},
		{Path: "spec.secretName", Reference: &PatchReference{APIVersion: "v1", Kind: "Secret"}},
		{Path: "spec.selector", Labels: &PatchLabels{}},
	}
	want.Sync.ToHost.Secrets.All = true
	want.Sync.ToHost.Ingresses.Enabled = true
	want.Sync.ToHost.CustomResources["widgets.example.com"] = ToHostCustomResource{Enabled: true}
	want.Sync.FromHost.Nodes.Enabled = true
	want.Sync.FromHost.Nodes.Selector.Labels = map[string]string{"topology.kubernetes.io/zone": "eu-west-1a"}
	want.Sync.FromHost.StorageClasses.Enabled = AutoSwitchOn
	want.Sync.FromHost.CSINodes.Enabled = AutoSwitchOff
	want.ControlPlane.BackingStore.Etcd = Etcd{
		External: EtcdExternal{
			Enabled:  true,
			Endpoint: "https://etcd.example.com:2379",
			TLS:      EtcdExternalTLS{CAFile: "/etc/etcd/ca.crt", CertFile: "/etc/etcd/client.crt", KeyFile: "/etc/etcd/client.key"},
		},
	}
	want.Syncer.Workers = 16
	want.Syncer.HostQPS = 40.5
	want.Syncer.HostBurst = 80

	if !reflect.DeepEqual(got, want) {
		gotJSON, _ := json.MarshalIndent(got, "", "  ")
		wantJSON, _ := json.MarshalIndent(want, "", "  ")
		t.Errorf("Parse mismatch\n got: %s\nwant: %s", gotJSON, wantJSON)
	}
	// Spot checks that read like the file.
	if !got.Sync.ToHost.Secrets.All || got.Sync.ToHost.Pods.Enabled || got.Syncer.Workers != 16 ||
		!got.ControlPlane.BackingStore.Etcd.External.Enabled || got.ControlPlane.BackingStore.Etcd.Embedded.Enabled {
		t.Errorf("overrides not applied: %+v", got)
	}
	if !got.Sync.ToHost.ConfigMaps.Enabled || got.Sync.ToHost.ConfigMaps.All || !got.Sync.FromHost.Events.Enabled ||
		got.Syncer.VirtualQPS != 1000 || quantity(got.Sync.ToHost.Pods.RewriteHosts.InitContainer.Resources.Limits, "memory") != "64Mi" {
		t.Errorf("defaults not kept: %+v", got)
	}
}

func TestAutoSwitch(t *testing.T) {
	tests := []struct {
		yaml         string
		want         AutoSwitch
		ifAutoFalse  bool
		ifAutoTrue   bool
		marshaledAs  string
		stringFormed string
	}{
		{"true", AutoSwitchOn, true, true, "true", "true"},
		{"false", AutoSwitchOff, false, false, "false", "false"},
		{"auto", AutoSwitchAuto, false, true, `"auto"`, "auto"},
		{`"auto"`, AutoSwitchAuto, false, true, `"auto"`, "auto"},
	}
	for _, tt := range tests {
		t.Run(tt.yaml, func(t *testing.T) {
			c, err := Parse([]byte("sync:\n  fromHost:\n    csiDrivers:\n      enabled: " + tt.yaml + "\n"))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			s := c.Sync.FromHost.CSIDrivers.Enabled
			if s != tt.want {
				t.Fatalf("got %v, want %v", s, tt.want)
			}
			if s.Resolve(false) != tt.ifAutoFalse || s.Resolve(true) != tt.ifAutoTrue {
				t.Errorf("Resolve(false), Resolve(true) = %v, %v; want %v, %v", s.Resolve(false), s.Resolve(true), tt.ifAutoFalse, tt.ifAutoTrue)
			}
			if s.String() != tt.stringFormed {
				t.Errorf("String() = %q, want %q", s.String(), tt.stringFormed)
			}
			b, err := json.Marshal(s)
			if err != nil || string(b) != tt.marshaledAs {
				t.Errorf("json.Marshal = %s, %v; want %s", b, err, tt.marshaledAs)
			}
			var back AutoSwitch
			if err := json.Unmarshal(b, &back); err != nil || back != s {
				t.Errorf("json.Unmarshal(%s) = %v, %v; want %v", b, back, err, s)
			}
		})
	}
	var s AutoSwitch
	if err := json.Unmarshal([]byte(`"sometimes"`), &s); err == nil {
		t.Error(`json.Unmarshal("sometimes") into AutoSwitch succeeded, want error`)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		// want are substrings that must all appear in the error, each
		// naming the dotted path of a problem.
		want []string
	}{
		{
			name: "unknown top-level key",
			yaml: "sinc: {}\n",
			want: []string{"sinc: unknown key; did you mean sync? (known: controlPlane, deletion, deploy, experimental, exportKubeConfig, external, global, integrations, logging, networking, platform, plugin, plugins, policies, privateNodes, pro, rbac, serviceCIDR, sleep, sleepMode, snapshots, sync, syncer, telemetry)"},
		},
		{
			name: "unknown nested key",
			yaml: "sync:\n  toHost:\n    podz:\n      enabled: true\n",
			want: []string{"sync.toHost.podz: unknown key; did you mean pods? (known: configMaps, customResources, endpointSlices, endpoints, gatewayApi, ingresses,"},
		},
		{
			name: "keys are case-sensitive",
			yaml: "sync:\n  toHost:\n    pods:\n      Enabled: true\n",
			want: []string{"sync.toHost.pods.Enabled: unknown key; did you mean enabled? (known: enabled, enforceTolerations,"},
		},
		{
			name: "unknown key inside a map entry",
			yaml: "sync:\n  toHost:\n    customResources:\n      widgets.example.com:\n        enabeld: true\n",
			want: []string{"sync.toHost.customResources[widgets.example.com].enabeld: unknown key; did you mean enabled? (known: enabled, patches, scope, translate)"},
		},
		{
			name: "unknown key inside a list item",
			yaml: "sync:\n  toHost:\n    secrets:\n      translate:\n        - path: data.x\n        - pth: data.y\n",
			want: []string{"sync.toHost.secrets.translate[1].pth: unknown key; did you mean path? (known: expression, labels, path, reference, reverseExpression)"},
		},
		{
			// FuzzParse: the key's line break split the error over two
			// lines, the second naming no path.
			name: "key with a line break",
			yaml: "\"sinc\\nsync\": {}\nsync:\n  toHost:\n    customResources:\n      \"a\\nb\": {enabeld: true}\n",
			want: []string{`"sinc\nsync": unknown key (known: `, `sync.toHost.customResources["a\nb"].enabeld: unknown key`},
		},
		{
			// FuzzParse: an empty key made an error that named no path.
			name: "empty key",
			yaml: "\"\": 1\nsync:\n  \"\": {}\n",
			want: []string{`"": unknown key (known: `, `sync."": unknown key (known: `},
		},
		{
			name: "labels takes no keys",
			yaml: "sync:\n  toHost:\n    services:\n      translate:\n        - path: spec.selector\n          labels: {match: all}\n",
			want: []string{"sync.toHost.services.translate[0].labels.match: unknown key (no keys are allowed here)"},
		},
		{
			name: "string for bool",
			yaml: "sync:\n  toHost:\n    secrets:\n      all: \"yes\"\n",
			want: []string{`sync.toHost.secrets.all: expected a boolean, got string "yes"`},
		},
		{
			name: "bool for int",
			yaml: "syncer:\n  workers: true\n",
			want: []string{"syncer.workers: expected an integer, got boolean true"},
		},
		{
			name: "fraction for int",
			yaml: "syncer:\n  hostBurst: 1.5\n",
			want: []string{"syncer.hostBurst: expected an integer, got number 1.5"},
		},
		{
			name: "string for float",
			yaml: "syncer:\n  virtualQPS: fast\n",
			want: []string{`syncer.virtualQPS: expected a number, got string "fast"`},
		},
		{
			name: "list for map",
			yaml: "sync:\n  toHost:\n    pods:\n      translateImage: [nginx]\n",
			want: []string{"sync.toHost.pods.translateImage: expected a map, got a list"},
		},
		{
			name: "scalar for object",
			yaml: "sync:\n  toHost:\n    pods: true\n",
			want: []string{"sync.toHost.pods: expected an object, got boolean true"},
		},
		{
			name: "map for list",
			yaml: "sync:\n  toHost:\n    pods:\n      enforceTolerations: {a: b}\n",
			want: []string{"sync.toHost.pods.enforceTolerations: expected a list, got a map"},
		},
		{
			name: "number for string in a map entry",
			yaml: "sync:\n  fromHost:\n    nodes:\n      selector:\n        labels:\n          tier: 1\n",
			want: []string{"sync.fromHost.nodes.selector.labels[tier]: expected a string, got number 1"},
		},
		{
			name: "null list item",
			yaml: "sync:\n  toHost:\n    pods:\n      enforceTolerations: [a, null]\n",
			want: []string{"sync.toHost.pods.enforceTolerations[1]: expected a string, got null"},
		},
		{
			name: "wrong type inside a list item",
			yaml: "sync:\n  toHost:\n    configMaps:\n      translate:\n        - path: [data]\n",
			want: []string{"sync.toHost.configMaps.translate[0].path: expected a string, got a list"},
		},
		{
			name: "bad AutoSwitch string",
			yaml: "sync:\n  fromHost:\n    storageClasses:\n      enabled: sometimes\n",
			want: []string{`sync.fromHost.storageClasses.enabled: expected true, false or "auto", got string "sometimes"`},
		},
		{
			name: "AutoSwitch takes no quoted booleans",
			yaml: "sync:\n  fromHost:\n    csiNodes:\n      enabled: \"true\"\n",
			want: []string{`sync.fromHost.csiNodes.enabled: expected true, false or "auto", got string "true"`},
		},
		{
			name: "bad quantity",
			yaml: "sync:\n  toHost:\n    pods:\n      rewriteHosts:\n        initContainer:\n          resources:\n            limits:\n              memory: lots\n",
			want: []string{`sync.toHost.pods.rewriteHosts.initContainer.resources.limits[memory]: invalid quantity "lots"`},
		},
		{
			name: "integer out of range",
			yaml: "syncer:\n  workers: 99999999999999999999\n",
			want: []string{"syncer.workers: integer 100000000000000000000 is out of range"},
		},
		{
			name: "integer out of range for int",
			yaml: "syncer:\n  hostBurst: 9223372036854775808\n",
			want: []string{"syncer.hostBurst: integer 9223372036854775808 is out of range"},
		},
		{
			name: "number out of range for float32",
			yaml: "syncer:\n  hostQPS: 1e39\n",
			want: []string{"syncer.hostQPS: number 1e+39 is out of range"},
		},
		{
			name: "top level is not an object",
			yaml: "just a string\n",
			want: []string{`expected an object at the top level, got string "just a string"`},
		},
		{
			name: "several problems at once",
			yaml: `
syncer:
  workers: 0
  hostQPS: "1000"
sync:
  toHost:
    podz: {}
    secrets:
      all: "yes"
  fromHost:
    customResources:
      widgets.example.com:
        enabled: maybe
`,
			want: []string{
				"sync.fromHost.customResources[widgets.example.com].enabled: expected a boolean, got string \"maybe\"",
				"sync.toHost.podz: unknown key",
				"sync.toHost.secrets.all: expected a boolean, got string \"yes\"",
				"syncer.hostQPS: expected a number, got string \"1000\"",
				"syncer.workers: must be at least 1, got 0",
			},
		},
		{
			name: "workers 0",
			yaml: "syncer:\n  workers: 0\n",
			want: []string{"syncer.workers: must be at least 1, got 0"},
		},
		{
			name: "negative QPS and zero burst",
			yaml: "syncer:\n  hostQPS: -1\n  virtualQPS: 0\n  hostBurst: 0\n  virtualBurst: -3\n",
			want: []string{
				"syncer.hostBurst: must be at least 1, got 0",
				"syncer.hostQPS: must be greater than 0, got -1",
				"syncer.virtualBurst: must be at least 1, got -3",
				"syncer.virtualQPS: must be greater than 0, got 0",
			},
		},
		{
			name: "both etcd modes",
			yaml: "controlPlane:\n  backingStore:\n    etcd:\n      external:\n        enabled: true\n        endpoint: https://127.0.0.1:2379\n",
			want: []string{"controlPlane.backingStore.etcd: embedded.enabled and external.enabled are both true; enable exactly one"},
		},
		{
			name: "external etcd without endpoint",
			yaml: "controlPlane:\n  backingStore:\n    etcd:\n      embedded: {enabled: false}\n      external: {enabled: true}\n",
			want: []string{"controlPlane.backingStore.etcd.external.endpoint: required when external etcd is enabled"},
		},
		{
			name: "external etcd with a bad endpoint",
			yaml: "controlPlane:\n  backingStore:\n    etcd:\n      embedded: {enabled: false}\n      external: {enabled: true, endpoint: \"127.0.0.1:2379\"}\n",
			want: []string{`controlPlane.backingStore.etcd.external.endpoint: must be an http or https URL such as https://127.0.0.1:2379, got "127.0.0.1:2379"`},
		},
		{
			name: "external etcd with a certificate but no key",
			yaml: "controlPlane:\n  backingStore:\n    etcd:\n      embedded: {enabled: false}\n      external: {enabled: true, endpoint: \"https://etcd:2379\", tls: {certFile: /c.crt}}\n",
			want: []string{"controlPlane.backingStore.etcd.external.tls: certFile and keyFile must be set together"},
		},
		{
			name: "rewriteHosts without an image",
			yaml: "sync:\n  toHost:\n    pods:\n      rewriteHosts:\n        initContainer:\n          image: \"\"\n",
			want: []string{"sync.toHost.pods.rewriteHosts.initContainer.image: required when rewriteHosts is enabled"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tt.yaml))
			if err == nil {
				t.Fatalf("Parse succeeded with %+v, want an error", cfg)
			}
			if cfg != nil {
				t.Errorf("Parse returned a Config along with the error")
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tt.want) {
				t.Errorf("got %d problems, want %d:\n%v", len(lines), len(tt.want), err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%v", w, err)
				}
			}
			if !slices.IsSorted(lines) {
				t.Errorf("problems are not sorted by path:\n%v", err)
			}
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Errorf("errors.As(%v, *FieldError) = false", err)
			}
		})
	}
}

// A value that fails to decode keeps its default in the Config; the
// semantic checks about it are left out rather than reported against the
// default.
func TestParseSkipsChecksOfUndecodedValues(t *testing.T) {
	_, err := Parse([]byte("controlPlane:\n  backingStore:\n    etcd:\n      embedded: {enabled: false}\n      external: {enabled: \"yes\"}\n"))
	if err == nil {
		t.Fatal("Parse succeeded, want an error")
	}
	want := `controlPlane.backingStore.etcd.external.enabled: expected a boolean, got string "yes"`
	if err.Error() != want {
		t.Errorf("got %q, want only %q", err, want)
	}
}

func TestParseInvalidYAML(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want string
	}{
		{"bad indentation", "sync:\n  toHost:\n    pods:\n  enabled: true\n   x: y\n", "line 5"},
		{"unclosed flow", "sync: {toHost: [\n", "line"},
		{"duplicate key", "syncer:\n  workers: 1\n  workers: 2\n", `line 3: key "workers" already set`},
		// FuzzParse: the parser's list of problems came on lines of their
		// own, which named no path and did not say invalid YAML.
		{"two duplicate keys, one line", "syncer:\n  workers: 1\n  workers: 2\nsync: {}\nsync: {}\n",
			`invalid YAML: yaml: unmarshal errors: line 3: key "workers" already set in map; line 5: key "sync" already set in map`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml))
			if err == nil {
				t.Fatal("Parse succeeded, want an error")
			}
			if !strings.Contains(err.Error(), "invalid YAML") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say invalid YAML and %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q spans lines", err)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Config)
		want   string // "" means valid
	}{
		{"defaults", func(*Config) {}, ""},
		{"one worker", func(c *Config) { c.Syncer.Workers = 1 }, ""},
		{"workers 0", func(c *Config) { c.Syncer.Workers = 0 }, "syncer.workers: must be at least 1, got 0"},
		{"host QPS 0", func(c *Config) { c.Syncer.HostQPS = 0 }, "syncer.hostQPS: must be greater than 0"},
		{"virtual burst 0", func(c *Config) { c.Syncer.VirtualBurst = 0 }, "syncer.virtualBurst: must be at least 1"},
		{"external etcd", func(c *Config) {
			c.ControlPlane.BackingStore.Etcd.Embedded.Enabled = false
			c.ControlPlane.BackingStore.Etcd.External = EtcdExternal{Enabled: true, Endpoint: "http://10.0.0.1:2379"}
		}, ""},
		{"both etcd modes", func(c *Config) {
			c.ControlPlane.BackingStore.Etcd.External = EtcdExternal{Enabled: true, Endpoint: "https://10.0.0.1:2379"}
		}, "controlPlane.backingStore.etcd: embedded.enabled and external.enabled are both true"},
		{"external without endpoint", func(c *Config) {
			c.ControlPlane.BackingStore.Etcd.Embedded.Enabled = false
			c.ControlPlane.BackingStore.Etcd.External.Enabled = true
		}, "controlPlane.backingStore.etcd.external.endpoint: required"},
		{"external endpoint without host", func(c *Config) {
			c.ControlPlane.BackingStore.Etcd.Embedded.Enabled = false
			c.ControlPlane.BackingStore.Etcd.External = EtcdExternal{Enabled: true, Endpoint: "https://"}
		}, "controlPlane.backingStore.etcd.external.endpoint: must be an http or https URL"},
		{"pull policy", func(c *Config) { c.ControlPlane.StatefulSet.ImagePullPolicy = "Sometimes" },
			`controlPlane.statefulSet.imagePullPolicy: must be "", Always, IfNotPresent or Never, got "Sometimes"`},
		{"no image repository", func(c *Config) { c.ControlPlane.StatefulSet.Image.Repository = "" },
			"controlPlane.statefulSet.image.repository: required"},
		{"claim of size 0", func(c *Config) { c.ControlPlane.StatefulSet.Persistence.VolumeClaim.Size = resource.Quantity{} },
			"controlPlane.statefulSet.persistence.volumeClaim.size: must be greater than 0"},
		{"no claim, no size", func(c *Config) {
			c.ControlPlane.StatefulSet.Persistence.VolumeClaim = VolumeClaim{Enabled: AutoSwitchOff, RetentionPolicy: "Delete"}
		}, ""},
		{"retention policy", func(c *Config) { c.ControlPlane.StatefulSet.Persistence.VolumeClaim.RetentionPolicy = "Keep" },
			`controlPlane.statefulSet.persistence.volumeClaim.retentionPolicy: must be Retain or Delete, got "Keep"`},
		{"a data volume beside a claim", func(c *Config) {
			c.ControlPlane.StatefulSet.Persistence.VolumeClaim.Enabled = AutoSwitchOn
			c.ControlPlane.StatefulSet.Persistence.DataVolume = []corev1.Volume{{Name: "data"}}
		}, "controlPlane.statefulSet.persistence.dataVolume: replaces the data volume when no claim is made"},
		{"a data volume of another name", func(c *Config) {
			c.ControlPlane.StatefulSet.Persistence.DataVolume = []corev1.Volume{{Name: "etcd"}}
		}, `controlPlane.statefulSet.persistence.dataVolume[0].name: must be "data"`},
		{"a volume of the chart's name", func(c *Config) {
			c.ControlPlane.StatefulSet.Persistence.AddVolumes = []corev1.Volume{{Name: "tmp"}}
		}, `controlPlane.statefulSet.persistence.addVolumes[0].name: "tmp" is taken: the chart's own volume`},
		{"a claim of an added volume's name", func(c *Config) {
			c.ControlPlane.StatefulSet.Persistence.AddVolumes = []corev1.Volume{{Name: "cache"}}
			c.ControlPlane.StatefulSet.Persistence.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "cache"}}}
		}, `controlPlane.statefulSet.persistence.volumeClaimTemplates[0].metadata.name: "cache" is taken: controlPlane.statefulSet.persistence.addVolumes[0].name`},
		{"a mount of no volume", func(c *Config) {
			c.ControlPlane.StatefulSet.Persistence.AddVolumeMounts = []corev1.VolumeMount{{Name: "nothing", MountPath: "/x"}}
		}, `controlPlane.statefulSet.persistence.addVolumeMounts[0].name: no volume "nothing"`},
		{"a mount on the chart's path", func(c *Config) {
			c.ControlPlane.StatefulSet.Persistence.AddVolumes = []corev1.Volume{{Name: "certs"}}
			c.ControlPlane.StatefulSet.Persistence.AddVolumeMounts = []corev1.VolumeMount{{Name: "certs", MountPath: "/etc/clustersync"}}
		}, "controlPlane.statefulSet.persistence.addVolumeMounts[0].mountPath: /etc/clustersync is mounted already"},
		{"a sidecar of the chart's name", func(c *Config) {
			c.ControlPlane.StatefulSet.SidecarContainers = []corev1.Container{{Name: "syncer", Image: "x"}}
		}, `controlPlane.statefulSet.sidecarContainers[0].name: "syncer" is taken: a container of the chart's`},
		{"an init container without an image", func(c *Config) {
			c.ControlPlane.StatefulSet.InitContainers = []corev1.Container{{Name: "wait"}}
		}, "controlPlane.statefulSet.initContainers[0].image: required"},
		{"a variable of the chart's", func(c *Config) {
			c.ControlPlane.StatefulSet.Env = []corev1.EnvVar{{Name: "POD_IP", Value: "1.2.3.4"}}
		}, "controlPlane.statefulSet.env[0].name: POD_IP is set by the chart itself"},
		{"a negative probe period", func(c *Config) { c.ControlPlane.StatefulSet.Probes.StartupProbe.PeriodSeconds = -1 },
			"controlPlane.statefulSet.probes.startupProbe.periodSeconds: must not be negative, got -1"},
		{"root under runAsNonRoot", func(c *Config) {
			c.ControlPlane.StatefulSet.Security.ContainerSecurityContext = &corev1.SecurityContext{RunAsUser: new(int64(0))}
		}, "controlPlane.statefulSet.security.containerSecurityContext.runAsUser: 0 (root) under runAsNonRoot: true"},
		{"root with runAsNonRoot false", func(c *Config) {
			c.ControlPlane.StatefulSet.Security.PodSecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: new(false)}
			c.ControlPlane.StatefulSet.Security.ContainerSecurityContext = &corev1.SecurityContext{RunAsUser: new(int64(0))}
		}, ""},
		{"SAN with a scheme", func(c *Config) { c.ControlPlane.Proxy.ExtraSANs = []string{"vc.example.com", "10.0.0.9", "https://x"} },
			`controlPlane.proxy.extraSANs[2]: must be a host name or an IP address, got "https://x"`},
		{"virtual scheduler without real nodes", func(c *Config) { c.ControlPlane.Advanced.VirtualScheduler.Enabled = true },
			"controlPlane.advanced.virtualScheduler.enabled: needs sync.fromHost.nodes.enabled: true"},
		{"virtual scheduler with real nodes", func(c *Config) {
			c.ControlPlane.Advanced.VirtualScheduler.Enabled = true
			c.Sync.FromHost.Nodes.Enabled = true
		}, ""},
		{"three replicas", func(c *Config) { c.ControlPlane.StatefulSet.HighAvailability.Replicas = 3 },
			"controlPlane.statefulSet.highAvailability.replicas: 3: clustersync runs one control plane pod; a highly available control plane is not implemented yet"},
		{"no replica", func(c *Config) { c.ControlPlane.StatefulSet.HighAvailability.Replicas = 0 },
			"controlPlane.statefulSet.highAvailability.replicas: 0: clustersync runs one control plane pod; to stop it, run clustersync virtual pause"},
		{"a cluster domain with a slash", func(c *Config) { c.Networking.Advanced.ClusterDomain = "tenant/local" },
			`networking.advanced.clusterDomain: must be a DNS subdomain such as cluster.local, got "tenant/local"`},
		{"another cluster domain", func(c *Config) { c.Networking.Advanced.ClusterDomain = "tenant.local" }, ""},
		{"a replicated Service without namespace", func(c *Config) {
			c.Networking.ReplicateServices.ToHost = []ServiceMapping{{From: "web", To: "shared/web"}}
		}, `networking.replicateServices.toHost[0].from: must be namespace/name of a Service, got "web"`},
		{"two replicas of one name", func(c *Config) {
			c.Networking.ReplicateServices.FromHost = []ServiceMapping{{From: "a/x", To: "default/x"}, {From: "b/x", To: "default/x"}}
		}, "networking.replicateServices.fromHost[1].to: default/x is networking.replicateServices.fromHost[0].to too"},
		{"a replica in kube-system", func(c *Config) {
			c.Networking.ReplicateServices.ToHost = []ServiceMapping{{From: "default/web", To: "kube-system/web"}}
		}, "networking.replicateServices.toHost[0].to: kube-system/web: a virtual cluster does not write in the host's kube-system namespace"},
		{"replicas both ways", func(c *Config) {
			c.Networking.ReplicateServices.ToHost = []ServiceMapping{{From: "default/web", To: "shared/team-a-web"}}
			c.Networking.ReplicateServices.FromHost = []ServiceMapping{{From: "platform/registry", To: "default/registry"}}
		}, ""},
		{"disabled external is not checked", func(c *Config) {
			c.ControlPlane.BackingStore.Etcd.External.Endpoint = "not a URL"
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Default()
			tt.change(c)
			err := c.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tt.want != "" && err == nil:
				t.Errorf("Validate() = nil, want %q", tt.want)
			case tt.want != "" && !strings.Contains(err.Error(), tt.want):
				t.Errorf("Validate() = %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

// ExampleFile is the annotated configuration file that documents every key:
// the virtual-cluster chart's values.yaml.
const ExampleFile = "../../../charts/virtual-cluster/values.yaml"

func TestExampleFileIsTheDefaults(t *testing.T) {
	got, err := Load(ExampleFile)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if !reflect.DeepEqual(got, Default()) {
		gotJSON, _ := json.MarshalIndent(got, "", "  ")
		wantJSON, _ := json.MarshalIndent(Default(), "", "  ")
		t.Errorf("%s differs from Default()\n got: %s\nwant: %s", ExampleFile, gotJSON, wantJSON)
	}
}

func TestLoadErrorsNameTheFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("syncer:\n  workers: 0\n  hostBurst: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.yaml")

	tests := []struct {
		name string
		path string
		want []string
	}{
		{"invalid file", bad, []string{bad + ": syncer.hostBurst: expected an integer", bad + ": syncer.workers: must be at least 1"}},
		{"missing file", missing, []string{missing}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(tt.path)
			if err == nil {
				t.Fatal("Load succeeded, want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%v", w, err)
				}
			}
		})
	}
}

// quantity returns the quantity named name of list as a string, or "" if
// it is absent.
func quantity(list map[string]resource.Quantity, name string) string {
	q, ok := list[name]
	if !ok {
		return ""
	}
	return q.String()
}

// A vcluster.yaml written for vCluster 0.2x/0.3x parses unchanged: the
// current spelling `patches`, an image object, the backing store of
// vCluster's default (its database; no etcd switch on), top-level and
// controlPlane sections clustersync does not act on, of which NoEffect
// lists those set to other than vCluster's defaults (replicas: 1 and
// clusterDomain: cluster.local are vCluster's; distro k8s and no telemetry
// are what clustersync does anyway).
func TestVClusterFileIsAccepted(t *testing.T) {
	const file = `
sync:
  toHost:
    pods:
      patches: []
      rewriteHosts:
        initContainer:
          image:
            registry: registry.example.com
            repository: library/alpine
            tag: "3.20"
    secrets:
      patches: []
controlPlane:
  distro:
    k8s:
      enabled: true
  backingStore:
    database:
      embedded:
        enabled: true
    etcd:
      embedded:
        enabled: false
      deploy:
        enabled: false
  statefulSet:
    highAvailability:
      replicas: 1
  hostPathMapper:
    enabled: true
networking:
  advanced:
    clusterDomain: cluster.local
policies:
  resourceQuota:
    enabled: true
exportKubeConfig:
  context: my-vcluster
  server: https://vc.example.com
telemetry:
  enabled: false
`
	cfg, err := Parse([]byte(file))
	if err != nil {
		t.Fatalf("a vCluster file: %v", err)
	}
	if got := string(cfg.Sync.ToHost.Pods.RewriteHosts.InitContainer.Image); got != "registry.example.com/library/alpine:3.20" {
		t.Errorf("the image object decodes to %q", got)
	}
	want := []NoEffectKey{
		{"controlPlane.backingStore.database.embedded.enabled", ReasonBacking},
		{"controlPlane.hostPathMapper.enabled", ReasonNotYet},
	}
	if got := cfg.NoEffect(); !slices.Equal(got, want) {
		t.Errorf("NoEffect:\n got %q\nwant %q", got, want)
	}
	wantMsg := "accepted, no effect in clustersync (2 keys set to other than vCluster's default):\n" +
		"  clustersync stores in etcd: embedded in the control plane pod, or external (controlPlane.backingStore.etcd): controlPlane.backingStore.database.embedded.enabled\n" +
		"  not implemented in clustersync yet: controlPlane.hostPathMapper.enabled"
	if cfg.ExportKubeConfig.Context != "my-vcluster" || cfg.ExportKubeConfig.Server != "https://vc.example.com" {
		t.Errorf("exportKubeConfig %+v", cfg.ExportKubeConfig)
	}
	if msg := cfg.NoEffectMessage(); msg != wantMsg {
		t.Errorf("NoEffectMessage:\n%s\nwant\n%s", msg, wantMsg)
	}
	if got := Default().NoEffect(); len(got) != 0 {
		t.Errorf("the defaults have no-effect keys: %q", got)
	}
}

func TestVClusterSpellingErrors(t *testing.T) {
	tests := []struct {
		name, file string
		want       []string
	}{
		{
			name: "patches and translate both",
			file: "sync:\n  toHost:\n    services:\n      translate: []\n      patches: []\n",
			want: []string{"sync.toHost.services.translate: the same setting as sync.toHost.services.patches (one is vCluster's older spelling); give only one"},
		},
		{
			name: "an image object with an unknown key and no repository",
			file: "sync:\n  toHost:\n    pods:\n      rewriteHosts:\n        initContainer:\n          image:\n            repo: alpine\n",
			want: []string{"sync.toHost.pods.rewriteHosts.initContainer.image.repo: unknown key (known: registry, repository, tag)"},
		},
		{
			name: "an image object without a repository",
			file: "sync:\n  toHost:\n    pods:\n      rewriteHosts:\n        initContainer:\n          image:\n            tag: \"1\"\n",
			want: []string{"sync.toHost.pods.rewriteHosts.initContainer.image.repository: required when the image is an object"},
		},
		{
			name: "an image of the wrong type",
			file: "sync:\n  toHost:\n    pods:\n      rewriteHosts:\n        initContainer:\n          image: 3\n",
			want: []string{"sync.toHost.pods.rewriteHosts.initContainer.image: expected an image: a string, or an object {registry, repository, tag}, got number 3"},
		},
		{
			name: "a key in neither schema",
			file: "netwroking: {}\n",
			want: []string{"netwroking: unknown key; did you mean networking? (known: "},
		},
		{
			name: "both etcds",
			file: "controlPlane:\n  backingStore:\n    etcd:\n      external:\n        enabled: true\n        endpoint: https://etcd:2379\n",
			want: []string{"controlPlane.backingStore.etcd: embedded.enabled and external.enabled are both true; enable exactly one"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.file))
			if err == nil {
				t.Fatal("no error")
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tt.want) {
				t.Fatalf("errors:\n%s\nwant %d", err, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(lines[i], w) {
					t.Errorf("error %d:\n got %s\nwant %s…", i, lines[i], w)
				}
			}
		})
	}
}

// The chart's values.schema.json is the Go types' schema (go generate ran).
func TestSchemaIsGenerated(t *testing.T) {
	want, err := Schema(".")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "..", "..", "charts", "virtual-cluster", "values.schema.json")
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("%s is not the configuration types' schema: run go generate ./internal/virtual/config", path)
	}
}

func TestChartDefaultsTemplateIsGenerated(t *testing.T) {
	want, err := ChartDefaultsTemplate()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "..", "..", "charts", "virtual-cluster", "templates", "_vcluster_defaults.tpl")
	if got, err := os.ReadFile(path); err != nil || string(got) != string(want) {
		t.Errorf("%s is not config.ChartDefaultsTemplate() (%v): run go generate ./internal/virtual/config", path, err)
	}
}

// The keys of vCluster's current sync schema beyond the reference's parse:
// patches on every toHost kind are honoured (kept as patches); the keys
// clustersync does not act on — also inside a customResources entry — are
// listed by NoEffect when set to other than vCluster's default, a map
// (mappings.byName, matchLabels) once.
func TestCurrentVClusterSyncKeys(t *testing.T) {
	cfg, err := Parse([]byte(`
sync:
  toHost:
    networkPolicies:
      enabled: true
      patches:
        - path: metadata.annotations["a"]
          expression: value
    volumeSnapshotContents: {enabled: true}
    namespaces: {enabled: false}
    pods:
      runtimeClassName: gvisor
      hybridScheduling: {enabled: false}
    customResources:
      widgets.example.com: {enabled: true, scope: Namespaced}
  fromHost:
    events: {enabled: true, patches: []}
    ingressClasses: {enabled: true, selector: {matchLabels: {a: b}}}
    storageClasses: {enabled: auto, selector: {}}
    csiDrivers: {enabled: auto, patches: []}
    configMaps: {enabled: true, mappings: {byName: {"a/*": "b/*"}}}
    nodes: {patches: []}
    customResources:
      gadgets.example.com:
        enabled: true
        scope: Cluster
        patches: []
        mappings: {byName: {"": "x/*"}}
`))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(cfg.Sync.ToHost.NetworkPolicies.Translate); n != 1 {
		t.Errorf("networkPolicies patches: %d, want 1", n)
	}
	if s := cfg.Sync.ToHost.CustomResources["widgets.example.com"].Scope; s != "Namespaced" {
		t.Errorf("scope %q", s)
	}
	want := []string{"sync.toHost.pods.runtimeClassName", "sync.toHost.volumeSnapshotContents.enabled"}
	if cm := cfg.Sync.FromHost.ConfigMaps; !cm.Enabled || cm.Mappings.ByName["a/*"] != "b/*" {
		t.Errorf("fromHost configMaps %+v", cm)
	}
	if sel := cfg.Sync.FromHost.IngressClasses.Selector; sel == nil || sel.MatchLabels["a"] != "b" {
		t.Errorf("fromHost ingressClasses selector %+v", sel)
	}
	got := noEffectPaths(cfg)
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("NoEffect lacks %s:\n%v", w, got)
		}
	}
	if slices.ContainsFunc(got, func(k string) bool {
		return strings.Contains(k, "networkPolicies") || strings.Contains(k, "scope") || strings.Contains(k, "customResources.gadgets.example.com.mappings") ||
			strings.Contains(k, "fromHost.configMaps") || strings.Contains(k, "selector")
	}) {
		t.Errorf("NoEffect lists a key clustersync acts on: %v", got)
	}
	if _, err := Parse([]byte("sync:\n  fromHost:\n    events: {selector: {}}\n")); err == nil || !strings.Contains(err.Error(), "sync.fromHost.events.selector: unknown key") {
		t.Errorf("events has no selector in vCluster either: %v", err)
	}
}

// The controlPlane keys of vCluster's current schema that clustersync does
// not act on parse and are listed by NoEffect (set to other than vCluster's
// defaults).
func TestCurrentVClusterControlPlaneKeys(t *testing.T) {
	cfg, err := Parse([]byte(`
controlPlane:
  endpoint: vc.example.com:443
  proxy: {bindAddress: 127.0.0.1, port: 9443, extraSANs: [vc.example.com]}
  backingStore:
    etcd:
      embedded: {enabled: true, migrateFromDeployedEtcd: true, extraArgs: [--quota-backend-bytes=1]}
  statefulSet:
    persistence:
      volumeClaim: {enabled: auto, retentionPolicy: Delete}
      addVolumes: [{name: x, emptyDir: {}}]
      binariesVolume: [{name: binaries, hostPath: {path: /opt/bin}}]
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.ControlPlane.Proxy.ExtraSANs; len(got) != 1 || got[0] != "vc.example.com" {
		t.Errorf("extraSANs %v", got)
	}
	if p := cfg.ControlPlane.StatefulSet.Persistence; p.VolumeClaim.RetentionPolicy != "Delete" || len(p.AddVolumes) != 1 || p.AddVolumes[0].EmptyDir == nil {
		t.Errorf("persistence %+v", p)
	}
	got := noEffectPaths(cfg)
	for _, w := range []string{"controlPlane.endpoint", "controlPlane.proxy.bindAddress", "controlPlane.proxy.port",
		"controlPlane.backingStore.etcd.embedded.migrateFromDeployedEtcd",
		"controlPlane.statefulSet.persistence.binariesVolume"} {
		if !slices.Contains(got, w) {
			t.Errorf("NoEffect lacks %s:\n%v", w, got)
		}
	}
	if slices.Contains(got, "controlPlane.backingStore.etcd.embedded.extraArgs") ||
		!slices.Equal(cfg.ControlPlane.BackingStore.Etcd.Embedded.ExtraArgs, []string{"--quota-backend-bytes=1"}) {
		t.Errorf("embedded etcd extraArgs %v (noted: %v), want them taken", cfg.ControlPlane.BackingStore.Etcd.Embedded.ExtraArgs, got)
	}
}

// noEffectPaths is the paths of cfg.NoEffect().
func noEffectPaths(cfg *Config) []string {
	var out []string
	for _, k := range cfg.NoEffect() {
		out = append(out, k.Path)
	}
	return out
}

// The host namespaces a file names beyond the virtual cluster's own, each
// once with the first key naming it.
func TestOtherHostNamespaces(t *testing.T) {
	c := Default()
	c.Sync.FromHost.ConfigMaps = FromHostMapped{Enabled: true, Mappings: FromHostMappings{ByName: map[string]string{
		"platform/ca": "kube-system/ca", "": "x/*", "/own": "x/own", "vc-a/y": "x/y"}}}
	c.Sync.FromHost.Secrets = FromHostMapped{Mappings: FromHostMappings{ByName: map[string]string{"off/x": "x/x"}}}
	c.Networking.ReplicateServices = ReplicateServices{ToHost: []ServiceMapping{{From: "default/web", To: "shared/web"}},
		FromHost: []ServiceMapping{{From: "platform/registry", To: "default/registry"}}}
	c.ExportKubeConfig.AdditionalSecrets = []AdditionalKubeconfigSecret{{Name: "k", Namespace: "ci"}}
	got := c.OtherHostNamespaces("a", "vc-a")
	want := []HostNamespaceUse{{"ci", "exportKubeConfig"}, {"platform", `sync.fromHost.configMaps.mappings.byName["platform/ca"]`},
		{"shared", "networking.replicateServices.toHost[0].to"}}
	if !slices.Equal(got, want) {
		t.Errorf("OtherHostNamespaces:\n got %v\nwant %v", got, want)
	}
}

// The patches of a fromHost custom resource entry are noted as the other
// fromHost patches are: a Pro feature of vCluster's.
func TestFromHostCustomResourcePatchesNoted(t *testing.T) {
	cfg, err := Parse([]byte("sync:\n  fromHost:\n    customResources:\n      gadgets.example.com:\n        enabled: true\n        patches: [{path: spec.x, expression: value}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.NoEffect()
	if len(got) != 1 || got[0].Reason != ReasonPlatform || !strings.Contains(got[0].Path, "gadgets.example.com") {
		t.Errorf("NoEffect %q, want the entry's patches with the Pro reason", got)
	}
}
