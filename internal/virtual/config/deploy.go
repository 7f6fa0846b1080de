package config

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"text/template"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// documentSeparator splits multi-document YAML as vCluster splits
// experimental.deploy manifests (a line starting with "---").
var documentSeparator = regexp.MustCompile(`(?m)^---[ \t]*(#.*)?$`)

// ParseManifests parses multi-document YAML into objects, in order; empty
// documents are skipped. Each object needs apiVersion, kind and
// metadata.name; an error names the document (1-based) and what is wrong.
// A kind List is refused: its items are to be written as documents.
func ParseManifests(manifests string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for i, doc := range documentSeparator.Split(manifests, -1) {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			return nil, fmt.Errorf("document %d: %v", i+1, err)
		}
		if len(m) == 0 {
			continue
		}
		o := &unstructured.Unstructured{Object: m}
		switch {
		case o.GetAPIVersion() == "":
			return nil, fmt.Errorf("document %d: no apiVersion", i+1)
		case o.GetKind() == "":
			return nil, fmt.Errorf("document %d: no kind", i+1)
		case strings.HasSuffix(o.GetKind(), "List"):
			return nil, fmt.Errorf("document %d: kind %s: write each item as a document of its own", i+1, o.GetKind())
		case o.GetName() == "":
			return nil, fmt.Errorf("document %d (%s): no metadata.name", i+1, o.GetKind())
		}
		out = append(out, o)
	}
	return out, nil
}

// DeployManifests is what experimental.deploy.vcluster applies for the
// virtual cluster name in host namespace namespace: manifests, then
// manifestsTemplate rendered as vCluster renders it (text/template with
// .Values, this configuration as JSON, and .Release.Name and
// .Release.Namespace), joined as one multi-document YAML text. Errors name
// the key: a template that does not render, or a document that does not
// parse.
func (c *Config) DeployManifests(name, namespace string) (string, error) {
	d := c.Experimental.Deploy.VCluster
	text := d.Manifests
	if d.ManifestsTemplate != "" {
		rendered, err := c.renderManifestsTemplate(name, namespace)
		if err != nil {
			return "", &FieldError{Path: "experimental.deploy.vcluster.manifestsTemplate", Message: err.Error()}
		}
		text += "\n---\n" + rendered
	}
	if _, err := ParseManifests(text); err != nil {
		path := "experimental.deploy.vcluster.manifests"
		if _, own := ParseManifests(d.Manifests); own == nil {
			path += "Template"
		}
		return "", &FieldError{Path: path, Message: err.Error()}
	}
	return text, nil
}

// renderManifestsTemplate executes manifestsTemplate.
func (c *Config) renderManifestsTemplate(name, namespace string) (string, error) {
	t, err := template.New("manifestsTemplate").Parse(c.Experimental.Deploy.VCluster.ManifestsTemplate)
	if err != nil {
		return "", err
	}
	raw, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	var values map[string]any
	if err := json.Unmarshal(raw, &values); err != nil {
		return "", err
	}
	var b bytes.Buffer
	err = t.Execute(&b, map[string]any{
		"Values":  values,
		"Release": map[string]any{"Name": name, "Namespace": namespace},
	})
	return b.String(), err
}

// validateDeploy checks experimental.deploy.vcluster: the manifests parse,
// the template parses, and each chart names where it comes from (a bundle
// that decodes, or a name and an http, https or oci repository), a valid
// release name and namespace no other entry uses, a timeout that parses
// and values that are a YAML object.
func (c *Config) validateDeploy(fail func(path, format string, args ...any)) {
	d := c.Experimental.Deploy.VCluster
	const base = "experimental.deploy.vcluster"
	if _, err := ParseManifests(d.Manifests); err != nil {
		fail(base+".manifests", "%v", err)
	}
	if d.ManifestsTemplate != "" {
		if _, err := template.New("").Parse(d.ManifestsTemplate); err != nil {
			fail(base+".manifestsTemplate", "%v", err)
		}
	}
	seen := map[string]int{}
	for i, h := range d.Helm {
		p := fmt.Sprintf("%s.helm[%d]", base, i)
		if h.Bundle != "" {
			if _, err := base64.StdEncoding.DecodeString(h.Bundle); err != nil {
				fail(p+".bundle", "not base64 (the chart archive, e.g. `base64 -w0 chart-1.0.0.tgz`): %v", err)
			}
		} else {
			if h.Chart.Name == "" {
				fail(p+".chart.name", "required (or bundle, the chart archive in base64)")
			}
			if h.Chart.Repo == "" {
				fail(p+".chart.repo", "required (an http, https or oci:// repository; or bundle, the chart archive in base64)")
			} else if u, err := url.Parse(h.Chart.Repo); err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "oci") {
				fail(p+".chart.repo", "%q: want an http:// or https:// chart repository URL or an oci://HOST/PATH registry path", h.Chart.Repo)
			}
		}
		if h.Release.Name == "" && h.Chart.Name == "" {
			fail(p+".release.name", "required when chart.name is empty")
		} else if n := h.ReleaseName(); len(n) > 53 || len(validation.IsDNS1123Subdomain(n)) > 0 {
			fail(p+".release.name", "%q: a release name is a DNS subdomain of at most 53 characters", n)
		}
		if ns := h.Release.Namespace; ns != "" && len(validation.IsDNS1123Label(ns)) > 0 {
			fail(p+".release.namespace", "%q: %s", ns, validation.IsDNS1123Label(ns)[0])
		}
		key := h.ReleaseNamespace() + "/" + h.ReleaseName()
		if j, dup := seen[key]; dup {
			fail(p+".release", "release %s is also that of %s.helm[%d]", key, base, j)
		} else {
			seen[key] = i
		}
		if h.Timeout != "" {
			if t, err := time.ParseDuration(h.Timeout); err != nil || t <= 0 {
				fail(p+".timeout", "%q: want a positive Go duration, e.g. 5m or 180s", h.Timeout)
			}
		}
		var values map[string]any
		if err := yaml.Unmarshal([]byte(h.Values), &values); err != nil {
			fail(p+".values", "not a YAML object: %v", err)
		}
	}
}
