package config

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/invopop/jsonschema"
	"k8s.io/apimachinery/pkg/api/resource"
)

//go:generate go run ./gen -schema ../../../charts/virtual-cluster/values.schema.json -docs ../../../docs/configuration.md

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
			switch t {
			case reflect.TypeFor[resource.Quantity]():
				return &jsonschema.Schema{OneOf: []*jsonschema.Schema{{Type: "string"}, {Type: "number"}},
					Description: "A Kubernetes quantity, e.g. 30m, 64Mi, 1."}
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
	out, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
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
