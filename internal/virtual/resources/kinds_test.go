package resources

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/clustersync/clustersync/internal/virtual/config"
)

// yamlFor is a configuration file setting each dotted key path of
// pathValues (path, value, path, value…) to its value (YAML).
func yamlFor(pathValues ...string) string {
	root := map[string]any{}
	for i := 0; i+1 < len(pathValues); i += 2 {
		m := root
		parts := strings.Split(pathValues[i], ".")
		for _, p := range parts[:len(parts)-1] {
			next, ok := m[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[p] = next
			}
			m = next
		}
		var v any
		if err := yaml.Unmarshal([]byte(pathValues[i+1]), &v); err != nil {
			panic(err)
		}
		m[parts[len(parts)-1]] = v
	}
	out, err := yaml.Marshal(root)
	if err != nil {
		panic(err)
	}
	return string(out)
}

// Every kind's Switch (and the key of each of its OptionClusterRules, with
// the Switch on) is a key of the configuration file, and Enabled (On)
// follows it both ways; names are unique.
func TestKindsFollowTheirSwitches(t *testing.T) {
	names := map[string]bool{}
	for _, k := range Kinds() {
		if names[k.Name] {
			t.Errorf("kind %s twice in the table", k.Name)
		}
		names[k.Name] = true
		if k.Register == nil || k.Enabled == nil {
			t.Errorf("kind %s lacks Register or Enabled", k.Name)
		}
		for _, o := range k.OptionClusterRules {
			if o.On == nil || len(o.Rules) == 0 {
				t.Errorf("kind %s: option rules of %s lack On or Rules", k.Name, o.Key)
				continue
			}
			for _, v := range []bool{true, false} {
				value := map[bool]string{true: "true", false: "false"}[v]
				with := []string{o.Key, value}
				if k.Switch != "" {
					with = append(with, k.Switch, "true")
				}
				cfg, err := config.Parse([]byte(yamlFor(with...)))
				if err != nil {
					t.Errorf("kind %s: option %s is not a configuration key: %v", k.Name, o.Key, err)
					break
				}
				if got := o.On(cfg); got != v {
					t.Errorf("kind %s: %s=%s, On = %v", k.Name, o.Key, value, got)
				}
			}
		}
		if k.Switch == "" {
			continue
		}
		for _, v := range []bool{true, false} {
			value := map[bool]string{true: "true", false: "false"}[v]
			cfg, err := config.Parse([]byte(yamlFor(k.Switch, value)))
			if err != nil {
				t.Errorf("kind %s: switch %s is not a configuration key: %v", k.Name, k.Switch, err)
				break
			}
			if got := k.Enabled(cfg); got != v {
				t.Errorf("kind %s: %s=%s, Enabled = %v", k.Name, k.Switch, value, got)
			}
		}
		for _, also := range k.AlsoSwitches {
			cfg, err := config.Parse([]byte(yamlFor(also, "true", k.Switch, "false")))
			if err != nil {
				t.Errorf("kind %s: switch %s is not a configuration key: %v", k.Name, also, err)
				continue
			}
			if !k.Enabled(cfg) {
				t.Errorf("kind %s: %s=true leaves it off", k.Name, also)
			}
		}
	}
}

// A kind is AutoSwitch exactly when its switch takes "auto", and "auto"
// turns it on with the virtual scheduler only.
func TestKindsAutoSwitches(t *testing.T) {
	for _, k := range Kinds() {
		if k.Switch == "" {
			if k.AutoSwitch {
				t.Errorf("kind %s: AutoSwitch without a Switch", k.Name)
			}
			continue
		}
		cfg, err := config.Parse([]byte(yamlFor(k.Switch, "auto")))
		if takesAuto := err == nil; takesAuto != k.AutoSwitch {
			t.Errorf("kind %s: %s takes \"auto\": %v (%v), AutoSwitch %v", k.Name, k.Switch, takesAuto, err, k.AutoSwitch)
			continue
		}
		if k.AutoSwitch && k.Enabled(cfg) {
			t.Errorf("kind %s: %s=auto turns it on", k.Name, k.Switch)
		}
		if k.AutoSwitch {
			cfg.ControlPlane.Advanced.VirtualScheduler.Enabled = true
			if !k.Enabled(cfg) {
				t.Errorf("kind %s: %s=auto with the virtual scheduler leaves it off", k.Name, k.Switch)
			}
		}
		if k.AutoSwitch && k.Enabled(config.Default()) {
			t.Errorf("kind %s: on by default", k.Name)
		}
	}
}

// The chart's rules of an AutoSwitch kind are granted for true, and for
// "auto" with the virtual scheduler, never by a plain `if`: to Helm's
// `if`, the string "auto" is true. (deploy's
// TestChartClusterRoleStorageFromHost renders them.)
func TestChartRBACAutoSwitchCondition(t *testing.T) {
	rbac := ChartRBAC()
	for _, k := range Kinds() {
		if !k.AutoSwitch {
			continue
		}
		want := `{{- if ` + switchCondition(k) + ` }}`
		if !strings.Contains(rbac, want) {
			t.Errorf("kind %s: no %s in the chart's rules", k.Name, want)
		}
		if strings.Contains(rbac, "{{- if .Values."+k.Switch+" }}") {
			t.Errorf("kind %s: a plain `if` on %s grants its rules for \"auto\"", k.Name, k.Switch)
		}
	}
}

// The chart's generated RBAC is the table's (go generate ran).
func TestChartRBACIsGenerated(t *testing.T) {
	path := filepath.Join("..", "..", "..", "charts", "virtual-cluster", "templates", "_kinds_rbac.tpl")
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != ChartRBAC() {
		t.Errorf("%s is not the kinds table's rules: run go generate ./internal/virtual/resources", path)
	}
}

func TestResourceOf(t *testing.T) {
	for kind, want := range map[string]string{"Gateway": "gateways", "Pod": "pods", "PriorityClass": "priorityclasses",
		"NetworkPolicy": "networkpolicies", "Endpoints": "endpoints", "BackendTLSPolicy": "backendtlspolicies", "Ingress": "ingresses"} {
		if got := ResourceOf(schema.GroupVersionKind{Kind: kind}).Resource; got != want {
			t.Errorf("ResourceOf(%s) = %s, want %s", kind, got, want)
		}
	}
}
