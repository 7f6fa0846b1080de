package dns

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/coredns/caddy"
	"github.com/coredns/caddy/caddyfile"
	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/pkg/parse"
)

// UserCorefileKey is the key of the configuration file that holds a
// Corefile of the user's (vCluster's controlPlane.coredns.overwriteConfig);
// UserCorefile's errors start with it.
const UserCorefileKey = "controlPlane.coredns.overwriteConfig"

// vClusterKubeconfig is where vCluster's embedded CoreDNS reads the
// virtual cluster's admin kubeconfig (its Corefile template,
// https://github.com/loft-sh/vcluster/blob/v0.36.1/pkg/coredns/template.go);
// UserCorefile reads it as clustersync's admin kubeconfig.
const vClusterKubeconfig = "/data/vcluster/admin.conf"

// Plugins returns the CoreDNS plugins built into clustersync, sorted: the
// directives a Corefile of the user's may use, besides import.
func Plugins() []string {
	var out []string
	for _, p := range caddy.ListPlugins()["others"] {
		if name, ok := strings.CutPrefix(p, "dns."); ok {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// UserCorefile adapts text, the Corefile of controlPlane.coredns.overwriteConfig
// written for vCluster's CoreDNS, to the coredns container of clustersync's
// control plane pod, whose ports and kubeconfig o gives (o.Kubeconfig may be
// any path when only validating). vCluster runs CoreDNS as a pod of the
// virtual cluster, which the kubernetes plugin reaches with its service
// account; clustersync runs it beside the API server
// (https://www.vcluster.com/docs/vcluster/configure/vcluster-yaml/control-plane/components/coredns).
// So UserCorefile
//   - adds `kubeconfig o.Kubeconfig` to each kubernetes block that names
//     neither a kubeconfig nor an endpoint, and reads vCluster's embedded
//     path /data/vcluster/admin.conf as it;
//   - gives a bare `health` the address :o.HealthPort (CoreDNS's default,
//     :8080, is the syncer's health port in the pod);
//   - drops `reload`: the Corefile is part of the configuration Secret, and
//     a changed one restarts the pod (`virtual upgrade`).
//
// The text is otherwise served as written. It returns an error starting
// with UserCorefileKey and naming the line when the text does not parse,
// uses a plugin not built in (Plugins), has a server block on a port other
// than o.Port (the kube-dns Service leads there), lacks `health` or
// `ready` (the container's liveness and readiness probes), or gives them
// other addresses than :o.HealthPort and :o.ReadyPort. Files an import
// names are read when the container starts, from the pod's volumes
// (controlPlane.statefulSet.persistence.addVolumes and addVolumeMounts).
func UserCorefile(text string, o Options) (string, error) {
	o = o.withDefaults()
	built := Plugins()
	lines := strings.Split(text, "\n")
	var errs []error
	fail := func(line int, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: line %d: %s", UserCorefileKey, line, fmt.Sprintf(format, args...)))
	}
	var health, ready bool
	drop := map[int]bool{}      // lines to remove (0-based)
	replace := map[int]string{} // lines to replace (0-based)
	for _, d := range directives(text) {
		name := d.tokens[0].Text
		switch {
		case name == "import":
			continue
		case name == "reload":
			for l := d.tokens[0].Line; l <= d.tokens[len(d.tokens)-1].Line; l++ {
				drop[l-1] = true
			}
			continue
		case !slices.Contains(built, name):
			fail(d.tokens[0].Line, "plugin %q is not built into clustersync's CoreDNS (built in: %s)", name, strings.Join(built, ", "))
			continue
		}
		args := d.firstLine()
		at := d.tokens[0].Line - 1 // the directive's line, 0-based
		indent := lines[at][:len(lines[at])-len(strings.TrimLeft(lines[at], " \t"))]
		switch name {
		case "health", "ready":
			port, field := o.HealthPort, &health
			if name == "ready" {
				port, field = o.ReadyPort, &ready
			}
			*field = true
			want := ":" + strconv.Itoa(port)
			switch {
			case len(args) == 1 || args[1].Text == "{":
				words := append([]string{name, want}, texts(args[1:])...)
				replace[at] = indent + strings.Join(words, " ")
			case args[1].Text != want && args[1].Text != "0.0.0.0"+want:
				fail(d.tokens[0].Line, "%s listens on %s in clustersync's control plane pod (the coredns container's probe); write `%s` or `%s %s`", name, want, name, name, want)
			}
		case "kubernetes":
			sub := d.subdirectives()
			switch i := slices.IndexFunc(sub, func(t []caddyfile.Token) bool { return t[0].Text == "kubeconfig" || t[0].Text == "endpoint" }); {
			case i >= 0 && sub[i][0].Text == "kubeconfig" && len(sub[i]) > 1 && sub[i][1].Text == vClusterKubeconfig:
				l := sub[i][0].Line - 1
				replace[l] = strings.Replace(lines[l], vClusterKubeconfig, o.Kubeconfig, 1)
			case i >= 0:
			case args[len(args)-1].Text == "{":
				replace[at] = lines[at] + "\n" + indent + "    kubeconfig " + o.Kubeconfig
			default:
				replace[at] = indent + strings.Join(texts(args), " ") + " {\n" + indent + "    kubeconfig " + o.Kubeconfig + "\n" + indent + "}"
			}
		}
	}
	if len(errs) > 0 {
		return "", errors.Join(errs...)
	}
	var out []string
	for i, l := range lines {
		switch {
		case drop[i]:
		case replace[i] != "":
			out = append(out, replace[i])
		default:
			out = append(out, l)
		}
	}
	adapted := strings.Join(out, "\n")
	if err := checkServerBlocks(adapted, o.Port); err != nil {
		return "", err
	}
	if !health || !ready {
		return "", fmt.Errorf("%s: needs `health` and `ready` in its server block: the coredns container's liveness and readiness probes ask them (as those of vCluster's CoreDNS Deployment do)", UserCorefileKey)
	}
	return adapted, nil
}

// checkServerBlocks parses corefile, the imports left out (their files are
// the pod's), and returns an error naming a server block that does not
// listen on port, or the parser's error.
func checkServerBlocks(corefile string, port int) error {
	var kept []string
	for _, l := range strings.Split(corefile, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == "import" {
			l = ""
		}
		kept = append(kept, l)
	}
	blocks, err := caddyfile.Parse(UserCorefileKey, strings.NewReader(strings.Join(kept, "\n")), nil)
	if err != nil {
		return err
	}
	if len(blocks) == 0 {
		return fmt.Errorf("%s: has no server block; vCluster's starts `.:%d {`", UserCorefileKey, port)
	}
	for _, b := range blocks {
		for _, k := range b.Keys {
			_, addr := parse.Transport(k)
			_, p, err := plugin.SplitHostPort(addr)
			if err != nil {
				return fmt.Errorf("%s: server block %q: %w", UserCorefileKey, k, err)
			}
			if p != strconv.Itoa(port) {
				return fmt.Errorf("%s: server block %q must listen on port %d, where the virtual cluster's kube-dns Service leads (as in vCluster's `.:%d {`)", UserCorefileKey, k, port, port)
			}
		}
	}
	return nil
}

// directive is one directive of a server block: its tokens, the block's
// included.
type directive struct{ tokens []caddyfile.Token }

// firstLine returns the directive's tokens on its first line: its name,
// its arguments and, when it opens a block, "{".
func (d directive) firstLine() []caddyfile.Token {
	n := 0
	for n < len(d.tokens) && d.tokens[n].Line == d.tokens[0].Line {
		n++
	}
	return d.tokens[:n]
}

// subdirectives returns the lines of the directive's block, each as its
// tokens (nested blocks included in their line's).
func (d directive) subdirectives() [][]caddyfile.Token {
	var out [][]caddyfile.Token
	depth := 0
	for _, t := range d.tokens[len(d.firstLine()):] {
		switch {
		case t.Text == "}" && depth == 0:
			return out
		case depth == 0 && (len(out) == 0 || out[len(out)-1][0].Line != t.Line):
			out = append(out, []caddyfile.Token{t})
		default:
			out[len(out)-1] = append(out[len(out)-1], t)
		}
		switch t.Text {
		case "{":
			depth++
		case "}":
			depth--
		}
	}
	return out
}

// directives returns the directives of corefile's server blocks in order,
// snippets' included, from its tokens as CoreDNS's lexer gives them
// (imports not followed).
func directives(corefile string) []directive {
	d := caddyfile.NewDispenser(UserCorefileKey, strings.NewReader(corefile))
	var out []directive
	depth, prevLine := 0, 0
	for d.Next() {
		t := caddyfile.Token{File: d.File(), Line: d.Line(), Text: d.Val()}
		switch {
		case depth == 1 && t.Text != "}" && t.Line != prevLine:
			out = append(out, directive{tokens: []caddyfile.Token{t}})
		case depth == 1 && t.Text == "}":
		case depth >= 1 && len(out) == 0:
			out = append(out, directive{tokens: []caddyfile.Token{t}})
		case depth >= 1:
			out[len(out)-1].tokens = append(out[len(out)-1].tokens, t)
		}
		switch t.Text {
		case "{":
			depth++
		case "}":
			depth--
		}
		prevLine = t.Line
	}
	return out
}

// texts returns the tokens' texts, quoted where CoreDNS's lexer needs it.
func texts(tokens []caddyfile.Token) []string {
	out := make([]string, len(tokens))
	for i, t := range tokens {
		out[i] = t.Text
		if t.Text == "" || strings.ContainsAny(t.Text, " \t\n\"#") {
			out[i] = `"` + strings.ReplaceAll(t.Text, `"`, `\"`) + `"`
		}
	}
	return out
}
