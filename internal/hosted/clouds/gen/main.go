// Command gen writes the manager chart's values and flags of the clouds
// from the table of clouds (clouds.ChartValues into the block of -values,
// clouds.ChartArgs to -args); `go generate ./internal/hosted/clouds` runs
// it.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/clustersync/clustersync/internal/hosted/clouds"
)

func main() {
	values := flag.String("values", "", "the chart's values.yaml, whose clouds block is replaced")
	args := flag.String("args", "", "the template file to write")
	flag.Parse()
	if *values == "" || *args == "" {
		fmt.Fprintln(os.Stderr, "gen: -values and -args are required")
		os.Exit(2)
	}
	if err := run(*values, *args); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(values, args string) error {
	old, err := os.ReadFile(values)
	if err != nil {
		return err
	}
	s, err := clouds.ReplaceValues(string(old))
	if err != nil {
		return fmt.Errorf("%s: %w", values, err)
	}
	if err := os.WriteFile(values, []byte(s), 0o644); err != nil {
		return err
	}
	return os.WriteFile(args, []byte(clouds.ChartArgs()), 0o644)
}
