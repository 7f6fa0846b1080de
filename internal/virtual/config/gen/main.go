// Command gen writes what is generated from the configuration file's Go
// types (package config): with -schema FILE, the file's JSON Schema
// (config.Schema) to FILE; with -docs FILE, the key table (every key with
// its type, default, status and description, see keyTable) into the
// Markdown file FILE, between the lines
//
//	<!-- BEGIN GENERATED: keys (go generate ./internal/virtual/config) -->
//	<!-- END GENERATED: keys -->
//
// and the table of every key of vCluster's newest release with what
// clustersync does with it (vclusterTable) between the lines
//
//	<!-- BEGIN GENERATED: vcluster-keys (go generate ./internal/virtual/config) -->
//	<!-- END GENERATED: vcluster-keys -->
//
// leaving the rest of FILE as it is; with -chart-defaults FILE, the chart's
// template of vCluster's defaults that mean clustersync's
// (config.ChartDefaultsTemplate) to FILE. `go generate
// ./internal/virtual/config` runs it from the package's folder, for
// charts/virtual-cluster/values.schema.json, docs/configuration.md and
// charts/virtual-cluster/templates/_vcluster_defaults.tpl.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/clustersync/clustersync/internal/virtual/config"
)

func main() {
	schemaOut := flag.String("schema", "", "the JSON Schema file to write")
	docs := flag.String("docs", "", "the Markdown file whose key table to rewrite")
	chartDefaults := flag.String("chart-defaults", "", "the chart template of vCluster's defaults to write")
	flag.Parse()
	if *schemaOut == "" && *docs == "" && *chartDefaults == "" {
		fmt.Fprintln(os.Stderr, "gen: -schema, -docs or -chart-defaults is required")
		os.Exit(2)
	}
	if *chartDefaults != "" {
		tpl, err := config.ChartDefaultsTemplate()
		if err == nil {
			err = os.WriteFile(*chartDefaults, tpl, 0o644)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
	}
	if *schemaOut == "" && *docs == "" {
		return
	}
	if err := run(*schemaOut, *docs); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// run writes the schema to schemaOut and the key table into docs, each
// when not "", with the package config's sources in the current folder.
func run(schemaOut, docs string) error {
	schema, err := config.Schema(".")
	if err != nil {
		return err
	}
	if schemaOut != "" {
		if err := os.WriteFile(schemaOut, schema, 0o644); err != nil {
			return err
		}
	}
	if docs == "" {
		return nil
	}
	doc, err := os.ReadFile(docs)
	if err != nil {
		return err
	}
	out, err := docsWithKeys(schema, string(doc))
	if err != nil {
		return fmt.Errorf("%s: %w", docs, err)
	}
	return os.WriteFile(docs, []byte(out), 0o644)
}

// docsWithKeys returns doc, a Markdown file, with the key table of schema
// (config.Schema's output) between its markers, and the table of the keys
// of vCluster's newest release between theirs.
func docsWithKeys(schema []byte, doc string) (string, error) {
	table, err := keyTable(schema)
	if err != nil {
		return "", err
	}
	if doc, err = spliceKeys(doc, table); err != nil {
		return "", err
	}
	k := config.VCluster()
	table, err = vclusterTable(k, k.Releases[len(k.Releases)-1])
	if err != nil {
		return "", err
	}
	return splice(doc, beginVCluster, endVCluster, table)
}
