// Command flake runs test packages several times in a row, as make test
// runs them (go test -p P -count=1), and reports every failure with its
// package and test, so that a flaky test is caught before it lands
// (`make flake`). By default it runs the packages whose tests start
// clusters, API servers or a browser: those whose tests import one of
// markers(). A failed test's output is saved in bin/flake/.
//
// Usage:
//
//	go run ./hack/flake [-runs 10] [-p 2] [-timeout 25m] [packages]
//
// It exits 1 when any run failed. It reads go test -json
// (https://pkg.go.dev/cmd/test2json), so a package that fails outside a
// test (its TestMain, a panic, a timeout) is reported too.
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// markers are the packages whose import by a package's tests means they
// start clusters, API servers or a browser.
func markers() []string {
	const m = "github.com/clustersync/clustersync/"
	return []string{m + "internal/testenv", m + "internal/hostcluster", m + "internal/hosted/hostedtest",
		m + "test/internal/harness", "github.com/chromedp/chromedp"}
}

func main() {
	runs := flag.Int("runs", 10, "how many times to run the packages")
	parallel := flag.Int("p", 2, "go test -p: packages run at once")
	timeout := flag.String("timeout", "25m", "go test -timeout of each run")
	out := flag.String("out", filepath.Join("bin", "flake"), "folder for the output of failed tests")
	flag.Parse()
	if err := run(*runs, *parallel, *timeout, *out, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "flake:", err)
		os.Exit(1)
	}
}

// event is one line of go test -json.
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
}

// failure is a failed test (Test "" for the package itself) of one run.
type failure struct {
	run           int
	pkg, test     string
	first, output string
}

func run(runs, parallel int, timeout, outDir string, pkgs []string) error {
	if len(pkgs) == 0 {
		var err error
		if pkgs, err = clusterPackages(); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	fmt.Printf("flake: %d runs of go test -p %d -count=1 of %d packages:\n  %s\n", runs, parallel, len(pkgs), strings.Join(pkgs, "\n  "))
	var all []failure
	failedRuns := 0
	begin := time.Now()
	for i := 1; i <= runs; i++ {
		start := time.Now()
		fs, err := once(i, parallel, timeout, pkgs)
		if err != nil {
			return err
		}
		if len(fs) == 0 {
			fmt.Printf("run %d/%d: ok (%s)\n", i, runs, time.Since(start).Round(time.Second))
			continue
		}
		failedRuns++
		for _, f := range fs {
			name := fmt.Sprintf("run%d-%s-%s.log", i, filepath.Base(f.pkg), cmp.Or(f.test, "package"))
			path := filepath.Join(outDir, strings.ReplaceAll(name, "/", "_"))
			_ = os.WriteFile(path, []byte(f.output), 0o644)
			fmt.Printf("run %d/%d: FAIL %s %s: %s (output: %s)\n", i, runs, f.pkg, cmp.Or(f.test, "(package)"), f.first, path)
		}
		all = append(all, fs...)
	}
	fmt.Printf("flake: %d of %d runs failed (%s in all)\n", failedRuns, runs, time.Since(begin).Round(time.Second))
	if len(all) == 0 {
		return nil
	}
	counts := map[string]int{}
	var keys []string
	for _, f := range all {
		k := f.pkg + " " + cmp.Or(f.test, "(package)")
		if counts[k] == 0 {
			keys = append(keys, k)
		}
		counts[k]++
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Printf("  %d× %s\n", counts[k], k)
	}
	return fmt.Errorf("%d of %d runs failed", failedRuns, runs)
}

// once runs go test -json once and returns its failures.
func once(i, parallel int, timeout string, pkgs []string) ([]failure, error) {
	args := append([]string{"test", "-p", fmt.Sprint(parallel), "-count=1", "-json", "-timeout", timeout}, pkgs...)
	cmd := exec.Command("go", args...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	fs := failures(i, stdout)
	_ = cmd.Wait() // a failure is in the events; an exit code alone adds nothing
	if len(fs) == 0 && cmd.ProcessState.ExitCode() != 0 {
		fs = append(fs, failure{run: i, pkg: "go test", first: cmd.ProcessState.String()})
	}
	return fs, nil
}

// failures reads go test -json events and returns the tests and packages
// that failed, each with its output and its first line that says why.
func failures(i int, r io.Reader) []failure {
	output := map[[2]string]*strings.Builder{}
	var fs []failure
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		key := [2]string{e.Package, e.Test}
		switch e.Action {
		case "output":
			b := output[key]
			if b == nil {
				b = &strings.Builder{}
				output[key] = b
			}
			b.WriteString(e.Output)
		case "fail":
			var out string
			if b := output[key]; b != nil {
				out = b.String()
			}
			// A package fails when a test does; only its own failure
			// (no failing test) is reported for it.
			if e.Test == "" && slices.ContainsFunc(fs, func(f failure) bool { return f.run == i && f.pkg == e.Package }) {
				continue
			}
			// A parent test fails when a subtest does: the subtest is
			// reported.
			if slices.ContainsFunc(fs, func(f failure) bool { return f.pkg == e.Package && strings.HasPrefix(f.test, e.Test+"/") }) {
				continue
			}
			fs = append(fs, failure{run: i, pkg: e.Package, test: e.Test, first: why(out), output: out})
		}
	}
	return fs
}

// why is the first line of a test's output that looks like the reason it
// failed: an error of t.Error/t.Fatal ("file_test.go:12: …"), a panic or a
// timeout.
func why(out string) string {
	for line := range strings.Lines(out) {
		l := strings.TrimSpace(line)
		if strings.Contains(l, "_test.go:") || strings.HasPrefix(l, "panic:") || strings.HasPrefix(l, "FAIL") && strings.Contains(l, "timed out") {
			if len(l) > 200 {
				l = l[:200] + "…"
			}
			return l
		}
	}
	return "(no error line; see the output)"
}

// clusterPackages lists the packages of ./... whose tests import a marker.
func clusterPackages() ([]string, error) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .TestImports " "}} {{join .XTestImports " "}}`, "./...").Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	var pkgs []string
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) > 1 && slices.ContainsFunc(f[1:], func(imp string) bool { return slices.Contains(markers(), imp) }) {
			pkgs = append(pkgs, f[0])
		}
	}
	return pkgs, nil
}
