package clouds

import (
	"fmt"
	"strings"
	"time"

	"github.com/mitchellh/go-wordwrap"

	"github.com/clustersync/clustersync/internal/hosted/engine"
	"github.com/clustersync/clustersync/internal/hosted/management"
)

//go:generate go run ./gen -values ../../../charts/manager/values.yaml -args ../../../charts/manager/templates/_clouds.tpl

// Markers around the clouds' block of the manager chart's values.yaml,
// which ChartValues writes.
const (
	ValuesBegin = "# BEGIN clouds: generated from the table of clouds (internal/hosted/clouds) by `go generate ./internal/hosted/clouds`."
	ValuesEnd   = "# END clouds"
)

// ChartValues returns the manager chart's values of every cloud, between
// ValuesBegin and ValuesEnd: per cloud key, endpoint, refresh and poll
// (seconds) with the manager's defaults, each commented with its flag's
// help.
func ChartValues() string {
	var b strings.Builder
	b.WriteString(ValuesBegin + "\n")
	for i, d := range All() {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s:\n", d.Key)
		for _, v := range []struct{ name, help, value string }{
			{"endpoint", d.Endpoint, `""`},
			{"refresh", d.RefreshHelp(), fmt.Sprint(int(management.DefaultRefresh / time.Second))},
			{"poll", d.PollHelp(), fmt.Sprint(int(engine.DefaultPoll / time.Second))},
		} {
			help := wordwrap.WrapString(fmt.Sprintf("--%s-%s: %s.", d.Key, v.name, v.help), 76)
			fmt.Fprintf(&b, "  # %s\n  %s: %s\n", strings.ReplaceAll(help, "\n", "\n  # "), v.name, v.value)
		}
	}
	b.WriteString(ValuesEnd + "\n")
	return b.String()
}

// ReplaceValues returns values.yaml with its block between ValuesBegin
// and ValuesEnd replaced by ChartValues, or an error when the markers are
// missing.
func ReplaceValues(values string) (string, error) {
	begin := strings.Index(values, ValuesBegin)
	end := strings.Index(values, ValuesEnd)
	if begin < 0 || end < begin {
		return "", fmt.Errorf("no block %q … %q", ValuesBegin, ValuesEnd)
	}
	return values[:begin] + ChartValues() + values[end+len(ValuesEnd)+1:], nil
}

// ChartArgs returns the manager chart's template _clouds.tpl: the helper
// "mgr.cloudArgs", the manager's flags of every cloud from the values
// ChartValues writes.
func ChartArgs() string {
	var b strings.Builder
	b.WriteString("{{- /* Generated from the table of clouds (internal/hosted/clouds) by `go generate ./internal/hosted/clouds`; do not edit. */ -}}\n")
	b.WriteString("{{- define \"mgr.cloudArgs\" -}}\n")
	for _, d := range All() {
		fmt.Fprintf(&b, "- --%[1]s-refresh={{ .Values.%[1]s.refresh }}\n- --%[1]s-poll={{ .Values.%[1]s.poll }}\n", d.Key)
		fmt.Fprintf(&b, "{{- with .Values.%[1]s.endpoint }}\n- --%[1]s-endpoint={{ . }}\n{{- end }}\n", d.Key)
	}
	b.WriteString("{{- end }}\n")
	return b.String()
}
