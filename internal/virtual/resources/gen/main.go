// Command gen writes the chart's RBAC rules of the syncer's kinds
// (resources.ChartRBAC) to the file -chart names; `go generate
// ./internal/virtual/resources` runs it.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/clustersync/clustersync/internal/virtual/resources"
)

func main() {
	chart := flag.String("chart", "", "the template file to write")
	flag.Parse()
	if *chart == "" {
		fmt.Fprintln(os.Stderr, "gen: -chart is required")
		os.Exit(2)
	}
	if err := os.WriteFile(*chart, []byte(resources.ChartRBAC()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
