package config

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// VClusterDefaultMeansOurs lists the keys (dotted paths) whose vCluster
// defaults describe vCluster's own control plane — the resources, security
// context and probe timings of its one container, its Service links, its
// CoreDNS's resources — and
// not a choice of the user's. A file that gives such a key, as a whole, the
// value one vCluster release's values.yaml gives it gets clustersync's
// default instead, from Parse and from the chart alike
// (charts/virtual-cluster/templates/_vcluster_defaults.tpl, written from
// VClusterKeys.OwnDefaults by `go generate ./internal/virtual/config`). So a
// vcluster.yaml that starts from vCluster's values.yaml, as `vcluster
// create` writes it, runs clustersync's control plane as clustersync sizes
// and locks it down, not as root with vCluster's limits; any other value
// is the user's and is taken. The image has its own rule
// (VClusterImages).
func VClusterDefaultMeansOurs() []string {
	return []string{
		"controlPlane.coredns.deployment.resources",
		"controlPlane.statefulSet.enableServiceLinks",
		"controlPlane.statefulSet.probes.livenessProbe",
		"controlPlane.statefulSet.probes.readinessProbe",
		"controlPlane.statefulSet.probes.startupProbe",
		"controlPlane.statefulSet.resources",
		"controlPlane.statefulSet.security.containerSecurityContext",
	}
}

// VClusterImages are the repositories of vCluster's control plane image
// (its values.yaml's default and the builds its comments name): a
// controlPlane.statefulSet.image whose repository is one of them (also
// behind a registry host, ghcr.io/loft-sh/vcluster) is
// replaced by clustersync's image as a whole (registry, repository, tag),
// since clustersync's containers run clustersync. Parse notes it when the
// file chose it (another build, a pinned tag).
func VClusterImages() []string {
	return []string{"loft-sh/vcluster", "loft-sh/vcluster-oss", "loft-sh/vcluster-pro"}
}

// imagePathOf is repository without a registry host it may start with
// ("ghcr.io/loft-sh/vcluster" → "loft-sh/vcluster"): a first segment with a
// dot or a colon, or localhost, as Docker reads a reference. The chart's
// vc.image does the same.
func imagePathOf(repository string) string {
	first, rest, ok := strings.Cut(repository, "/")
	if ok && (strings.ContainsAny(first, ".:") || first == "localhost") {
		return rest
	}
	return repository
}

// imagePath is the key VClusterImages applies to.
const imagePath = "controlPlane.statefulSet.image"

// OwnDefaults returns, for each key of VClusterDefaultMeansOurs, the
// values vCluster's releases give it by default, each as canonical JSON
// (keys sorted, numbers as JSON numbers: what Helm's toJson prints for the
// same value), distinct and sorted.
func (k *VClusterKeys) OwnDefaults() map[string][]string {
	out := map[string][]string{}
	for _, key := range VClusterDefaultMeansOurs() {
		segs := strings.Split(key, ".")
		under := slices.DeleteFunc(slices.Clone(k.defaultsIn), func(d vclusterDefault) bool {
			return len(d.path) < len(segs) || !slices.Equal(d.path[:len(segs)], segs)
		})
		for _, r := range k.Releases {
			doc := map[string]any{}
			for _, d := range under {
				if has(k.Releases, d.in, r) {
					_ = unstructured.SetNestedField(doc, d.value, d.path...)
				}
			}
			if v, ok, _ := unstructured.NestedFieldNoCopy(doc, segs...); ok {
				out[key] = append(out[key], canonicalJSON(v))
			}
		}
		out[key] = slices.Compact(slices.Sorted(slices.Values(out[key])))
	}
	return out
}

// canonicalJSON is v (a generic value) as JSON with numbers normalized, as
// Helm's toJson prints the same value read from YAML.
func canonicalJSON(v any) string {
	b, err := json.Marshal(normalize(v))
	if err != nil {
		return ""
	}
	return string(b)
}

// vclusterDefaultMeansOurs tells whether v, the file's value at the path of
// keys segs, is to be left at clustersync's default: a key of
// VClusterDefaultMeansOurs set to one of vCluster's defaults, or an image
// of vCluster's. It reports whether the file chose it (so a note is due):
// true for an image of vCluster's other than the default.
func (d *decoder) vclusterDefaultMeansOurs(segs []string, v any) (ours, chosen bool) {
	path := strings.Join(segs, ".")
	if path == imagePath {
		obj, _ := v.(map[string]any)
		repo, _ := obj["repository"].(string)
		if !slices.Contains(VClusterImages(), imagePathOf(repo)) {
			return false, false
		}
		return true, !d.keys.isDefault(segs, v)
	}
	defaults, listed := d.keys.ownDefaults[path] // every key of VClusterDefaultMeansOurs
	return listed && slices.Contains(defaults, canonicalJSON(v)), false
}

// ChartDefaultsTemplate returns the chart's
// charts/virtual-cluster/templates/_vcluster_defaults.tpl: three named
// templates, each a JSON document, that the chart's vc.own and vc.image
// read to apply VClusterDefaultMeansOurs and VClusterImages as Parse does:
// vc.vclusterDefaults (OwnDefaults), vc.vclusterImages (VClusterImages)
// and vc.ownDefaults (clustersync's default at each of those keys and at
// controlPlane.statefulSet.image, from Default). `go generate
// ./internal/virtual/config` writes it; a test fails when it is stale.
func ChartDefaultsTemplate() ([]byte, error) {
	own, err := json.Marshal(Default())
	if err != nil {
		return nil, err
	}
	var tree map[string]any
	if err := json.Unmarshal(own, &tree); err != nil {
		return nil, err
	}
	ours := map[string]any{}
	for _, key := range append(VClusterDefaultMeansOurs(), imagePath) {
		ours[key], _, _ = unstructured.NestedFieldNoCopy(tree, strings.Split(key, ".")...)
	}
	var b strings.Builder
	b.WriteString(`{{- /* Generated by go generate ./internal/virtual/config from
internal/virtual/config/vcluster-keys.json and the configuration types
(config.ChartDefaultsTemplate): do not edit. The keys whose vCluster default
means clustersync's (config.VClusterDefaultMeansOurs), each JSON. */ -}}
`)
	for _, t := range []struct {
		name, doc string
		value     any
	}{
		{"vc.vclusterDefaults", "vCluster's defaults of each key, as Helm's toJson prints them.", VCluster().ownDefaults},
		{"vc.vclusterImages", "The repositories of vCluster's image (config.VClusterImages).", VClusterImages()},
		{"vc.ownDefaults", "clustersync's default of each key, and of controlPlane.statefulSet.image.", ours},
	} {
		j, err := json.Marshal(t.value)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "\n{{/* %s */}}\n{{- define %q -}}\n%s\n{{- end -}}\n", t.doc, t.name, j)
	}
	return []byte(b.String()), nil
}

// RewriteHostsImage is the image of the rewrite-hosts init container
// (sync.toHost.pods.rewriteHosts.initContainer.image) with its registry
// replaced by controlPlane.advanced.defaultImageRegistry when that is set,
// as vCluster does (pkg/controllers/resources/pods/translate of
// https://github.com/loft-sh/vcluster); the image as written when it does
// not parse (Validate refuses that).
func (c *Config) RewriteHostsImage() string {
	img := string(c.Sync.ToHost.Pods.RewriteHosts.InitContainer.Image)
	reg := c.ControlPlane.Advanced.DefaultImageRegistry
	if reg == "" {
		return img
	}
	ref, err := name.ParseReference(img)
	if err != nil {
		return img
	}
	sep := ":"
	if _, digest := ref.(name.Digest); digest {
		sep = "@"
	}
	return reg + "/" + ref.Context().RepositoryStr() + sep + ref.Identifier()
}
