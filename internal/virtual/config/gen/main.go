// Command gen writes the configuration file's JSON Schema (config.Schema)
// to the file -schema names; `go generate ./internal/virtual/config` runs
// it from the package's folder.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/clustersync/clustersync/internal/virtual/config"
)

func main() {
	out := flag.String("schema", "", "the file to write")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "gen: -schema is required")
		os.Exit(2)
	}
	s, err := config.Schema(".")
	if err == nil {
		err = os.WriteFile(*out, s, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
