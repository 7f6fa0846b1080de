package resources

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clustersync/clustersync/internal/virtual/config"
)

// yamlFor is a configuration file setting the dotted key path to value.
func yamlFor(path, value string) string {
	parts := strings.Split(path, ".")
	var b strings.Builder
	for i, p := range parts {
		b.WriteString(strings.Repeat("  ", i) + p + ":")
		if i == len(parts)-1 {
			b.WriteString(" " + value)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// Every kind's Switch (and the key of each of its OptionClusterRules) is a
// key of the configuration file, and Enabled (On) follows it both ways;
// names are unique.
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
				cfg, err := config.Parse([]byte(yamlFor(o.Key, value)))
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
