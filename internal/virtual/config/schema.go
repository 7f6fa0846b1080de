package config

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/invopop/jsonschema"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
)

//go:generate go run ./gen -schema ../../../charts/virtual-cluster/values.schema.json -docs ../../../docs/configuration.md -chart-defaults ../../../charts/virtual-cluster/templates/_vcluster_defaults.tpl

// SchemaID is the $id of the configuration file's JSON Schema.
const SchemaID = "https://clustersync.io/schemas/virtual-cluster.json"

// Schema returns the JSON Schema (draft 2020-12) of the configuration
// file, which is also the chart's values.schema.json (Helm checks values
// against it): generated from the Go types with invopop/jsonschema, as
// vCluster generates its own, with the doc comments of the Go files in
// sourceDir (this package's folder) as descriptions. Every key is
// optional; unknown keys are refused except inside the vCluster sections
// kept as written (Config.NoEffect). It returns an error when sourceDir
// cannot be read.
func Schema(sourceDir string) ([]byte, error) {
	r := &jsonschema.Reflector{RequiredFromJSONSchemaTags: true, DoNotReference: false,
		Mapper: func(t reflect.Type) *jsonschema.Schema {
			if isKubernetesType(t) {
				return &jsonschema.Schema{Type: "object",
					Description: fmt.Sprintf("A Kubernetes %s (%s), as in a pod spec.", t.Name(), t.PkgPath())}
			}
			switch t {
			case reflect.TypeFor[resource.Quantity]():
				return &jsonschema.Schema{OneOf: []*jsonschema.Schema{{Type: "string"}, {Type: "number"}},
					Description: "A Kubernetes quantity, e.g. 30m, 64Mi, 1."}
			case reflect.TypeFor[intstr.IntOrString]():
				return &jsonschema.Schema{OneOf: []*jsonschema.Schema{{Type: "integer"}, {Type: "string"}},
					Description: "A number or a percentage, e.g. 1 or 50%."}
			case reflect.TypeFor[AutoSwitch]():
				return &jsonschema.Schema{OneOf: []*jsonschema.Schema{{Type: "boolean"}, {Type: "string", Enum: []any{"auto"}}},
					Description: `true, false or "auto".`}
			case reflect.TypeFor[ImageRef]():
				return &jsonschema.Schema{OneOf: []*jsonschema.Schema{{Type: "string"}, imageObjectSchema()}}
			}
			return nil
		},
	}
	if err := r.AddGoComments("github.com/clustersync/clustersync/internal/virtual/config", sourceDir); err != nil {
		return nil, fmt.Errorf("config schema: doc comments of %s: %w", sourceDir, err)
	}
	s := r.Reflect(&Config{})
	s.ID = SchemaID
	addVClusterKeys(s, s.Definitions, vclusterKeys().root)
	out, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// addVClusterKeys adds to the object schema s (its definition when it is
// a $ref into defs) the keys of vCluster's node n that it lacks, so that
// Helm accepts, before Parse checks them, the vCluster keys Parse accepts:
// a leaf with its types, an object with any content. A definition shared
// by several keys gets the vCluster keys of each (Parse tells them apart).
func addVClusterKeys(s *jsonschema.Schema, defs jsonschema.Definitions, n *keyNode) {
	if s == nil || n == nil {
		return
	}
	if name, ok := strings.CutPrefix(s.Ref, "#/$defs/"); ok {
		s = defs[name]
	}
	if s == nil || s.Properties == nil {
		return // a map or a value kept as written: anything goes already
	}
	for _, key := range n.names() {
		if key == "*" {
			continue
		}
		child := n.children[key]
		if p, ok := s.Properties.Get(key); ok {
			addVClusterKeys(p, defs, child)
			continue
		}
		s.Properties.Set(key, vclusterSchema(child))
	}
}

// vclusterSchema is the schema of a vCluster key that clustersync's types
// lack: its types when it is a leaf, else any object.
func vclusterSchema(n *keyNode) *jsonschema.Schema {
	desc := "A vCluster key clustersync accepts and does not act on."
	if n.leaf == nil || len(n.leaf.Types) == 0 || len(n.children) > 0 {
		if n.leaf == nil {
			return &jsonschema.Schema{Type: "object", Description: desc}
		}
		return &jsonschema.Schema{Description: desc}
	}
	if len(n.leaf.Types) == 1 {
		return &jsonschema.Schema{Type: n.leaf.Types[0], Description: desc}
	}
	var one []*jsonschema.Schema
	for _, t := range n.leaf.Types {
		one = append(one, &jsonschema.Schema{Type: t})
	}
	return &jsonschema.Schema{AnyOf: one, Description: desc}
}

func imageObjectSchema() *jsonschema.Schema {
	props := jsonschema.NewProperties()
	for _, k := range []string{"registry", "repository", "tag"} {
		props.Set(k, &jsonschema.Schema{Type: "string"})
	}
	return &jsonschema.Schema{Type: "object", Properties: props, AdditionalProperties: jsonschema.FalseSchema, Required: []string{"repository"}}
}

// JSONSchemaExtend adds `patches`, the same key as translate.
func (EnableSwitchWithTranslate) JSONSchemaExtend(s *jsonschema.Schema) { addPatchesAlias(s) }

// JSONSchemaExtend adds `patches`, the same key as translate.
func (SelectiveSync) JSONSchemaExtend(s *jsonschema.Schema) { addPatchesAlias(s) }

// JSONSchemaExtend adds `patches`, the same key as translate.
func (ToHostCustomResource) JSONSchemaExtend(s *jsonschema.Schema) { addPatchesAlias(s) }

// JSONSchemaExtend adds `patches`, the same key as translate.
func (SyncPods) JSONSchemaExtend(s *jsonschema.Schema) { addPatchesAlias(s) }

func addPatchesAlias(s *jsonschema.Schema) {
	if t, ok := s.Properties.Get("translate"); ok {
		s.Properties.Set("patches", t)
	}
}
