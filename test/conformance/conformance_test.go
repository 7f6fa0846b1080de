// Package conformance runs the Kubernetes conformance suite (the
// [Conformance] specs of the v1.37.0 end-to-end test binary) against a
// clustersync virtual cluster on the local host's real node: `make
// conformance`, and a short focused run at the end of `make test`.
//
// TestConformance runs only when CLUSTERSYNC_CONFORMANCE is set: it takes
// the machine's one real node, which test/e2e and test/chaos use too. It
// starts the local host (`dev up`), pushes the images the suite pulls
// (`dev image --conformance`), creates virtual cluster "conformance" with
// examples/conformance/values.yaml (profile "conformance") or with that
// file's nodes, scheduler and storage but clustersync's default policies
// (profile "defaults", WithDefaultPolicies), runs the suite with
// --provider=skeleton, prints passed / failed / skipped with the first
// failure line of each failed spec, and keeps the JUnit report. A run is
// green only when no spec failed and nothing makes the counts doubtful
// (Problems): the suite exited 0, the report has exactly the specs of the
// suite's conformance.yaml that the run selects, and every skipped spec is
// one Skips names. Settings,
// from the environment (the Makefile's CONFORMANCE_* variables):
//
//	CLUSTERSYNC_CONFORMANCE_FOCUS     ginkgo focus regexp among the [Conformance] specs (default all)
//	CLUSTERSYNC_CONFORMANCE_PARALLEL  ginkgo processes (default 1)
//	CLUSTERSYNC_CONFORMANCE_SERIAL    "skip": without the [Serial] specs; "only": only them (default both)
//	CLUSTERSYNC_CONFORMANCE_PROFILE   conformance (default) or defaults
//	CLUSTERSYNC_CONFORMANCE_REPORT    report folder (default bin/conformance/PROFILE)
//
// docs/conformance.md has the results and the specs skipped, with why.
package conformance

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clustersync/clustersync/internal/binaries"
	"github.com/clustersync/clustersync/test/internal/harness"
)

const (
	enableEnv   = "CLUSTERSYNC_CONFORMANCE"
	focusEnv    = "CLUSTERSYNC_CONFORMANCE_FOCUS"
	parallelEnv = "CLUSTERSYNC_CONFORMANCE_PARALLEL"
	profileEnv  = "CLUSTERSYNC_CONFORMANCE_PROFILE"
	reportEnv   = "CLUSTERSYNC_CONFORMANCE_REPORT"
	serialEnv   = "CLUSTERSYNC_CONFORMANCE_SERIAL"
)

// labelFilter is the ginkgo label filter of a run: the [Conformance] specs,
// less or only the [Serial] ones when serial (CLUSTERSYNC_CONFORMANCE_SERIAL)
// is "skip" or "only", and whether a spec of that name is in it.
func labelFilter(serial string) (string, func(name string) bool, error) {
	isSerial := func(name string) bool { return strings.Contains(name, "[Serial]") }
	switch serial {
	case "":
		return "Conformance", func(string) bool { return true }, nil
	case "skip":
		return "Conformance && !Serial", func(n string) bool { return !isSerial(n) }, nil
	case "only":
		return "Conformance && Serial", isSerial, nil
	}
	return "", nil, fmt.Errorf("%s=%q: want skip, only or nothing", serialEnv, serial)
}

// tests is the clustersync binary built for this test and its
// CLUSTERSYNC_HOME.
var tests harness.Home

func TestMain(m *testing.M) { os.Exit(run(m)) }

// run builds the binary when the suite is to run, runs the tests and
// stops whatever a failed run left running.
func run(m *testing.M) int {
	if os.Getenv(enableEnv) == "" {
		return m.Run() // TestConformance says why it skips
	}
	return harness.Main(m, "clustersync-conformance-", func(h harness.Home) { tests = h })
}

// profileFiles are the values files `virtual create` gets for a
// CLUSTERSYNC_CONFORMANCE_PROFILE: profile "conformance" the repository's
// file, profile "defaults" that file without its policies (written into
// dir, see WithDefaultPolicies). An unknown profile is an error.
func profileFiles(profile, dir string) ([]string, error) {
	switch profile {
	case "conformance":
		return []string{ConformanceValues}, nil
	case "defaults":
		data, err := os.ReadFile(ConformanceValues)
		if err != nil {
			return nil, err
		}
		out, err := WithDefaultPolicies(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ConformanceValues, err)
		}
		f := filepath.Join(dir, "defaults-values.yaml")
		return []string{f}, os.WriteFile(f, out, 0o644)
	}
	return nil, fmt.Errorf("%s=%q: want conformance or defaults", profileEnv, profile)
}

func TestConformance(t *testing.T) {
	if os.Getenv(enableEnv) == "" {
		t.Skipf("set %s=1 (make conformance) to run the Kubernetes conformance suite", enableEnv)
	}
	if os.Geteuid() != 0 {
		t.Fatal("the conformance suite runs on the local real node, which needs root")
	}
	suite := binaries.Conformance()
	if err := suite.Check(); err != nil {
		t.Fatal(err)
	}
	focus := os.Getenv(focusEnv)
	focusRE, err := regexp.Compile(focus)
	if err != nil {
		t.Fatalf("%s: %v", focusEnv, err)
	}
	labels, inLabels, err := labelFilter(os.Getenv(serialEnv))
	if err != nil {
		t.Fatal(err)
	}
	parallel := 1
	if v := os.Getenv(parallelEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a number of processes, 1 or more", parallelEnv, v)
		}
		parallel = n
	}
	profile := cmp.Or(os.Getenv(profileEnv), "conformance")
	files, err := profileFiles(profile, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	report, err := filepath.Abs(cmp.Or(os.Getenv(reportEnv), filepath.Join("..", "..", "bin", "conformance", profile)))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(report); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(report, 0o755); err != nil {
		t.Fatal(err)
	}

	step := func(what string, args ...string) string {
		t.Helper()
		start := time.Now()
		out := tests.MustRun(t, args...)
		t.Logf("%s: %.1f s", what, time.Since(start).Seconds())
		return out
	}
	out := step("dev up", "dev", "up")
	t.Cleanup(func() {
		if out, err := tests.Run("dev", "down"); err != nil {
			t.Errorf("clustersync dev down: %v\n%s", err, out)
			return
		}
		tests.CheckNothingLeft(t)
	})
	harness.RequireRealNode(t, out)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	t.Log(step("dev image --conformance", "dev", "image", "--conformance", "--source", root))

	kubeconfig := filepath.Join(report, "kubeconfig")
	args := []string{"virtual", "create", "conformance", "-n", "vc-conformance", "--kubeconfig-out", kubeconfig, "--timeout", "10m"}
	for _, f := range files {
		args = append(args, "-f", f)
	}
	t.Log(step("virtual create ("+profile+")", args...))
	t.Cleanup(func() {
		if out, err := tests.Run("virtual", "delete", "conformance", "-n", "vc-conformance", "--delete-namespace"); err != nil {
			t.Errorf("virtual delete conformance: %v\n%s", err, out)
		}
	})
	// Before the virtual cluster goes (cleanups run last first): the
	// control plane's logs, next to the report.
	t.Cleanup(func() { saveControlPlaneLogs(t, suite.Kubectl, report) })

	skip := skipPattern()
	log, err := os.Create(filepath.Join(report, "e2e.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cmd := e2eCommand(suite, kubeconfig, report, t.TempDir(), labels, focus, skip, parallel)
	cmd.Stdout = io.MultiWriter(log, os.Stdout)
	cmd.Stderr = cmd.Stdout
	t.Logf("running %s\n  (output in %s; the e2e log in %s)", strings.Join(cmd.Args, " "), report, log.Name())
	start := time.Now()
	runErr := cmd.Run()
	wall := time.Since(start)

	selected := func(name string) bool {
		return strings.Contains(name, "[Conformance]") && focusRE.MatchString(name) && inLabels(name)
	}
	summary, err := ReadJUnit(filepath.Join(report, "junit_01.xml"), selected)
	if err != nil {
		t.Fatalf("the suite wrote no report (%v): %v", runErr, err)
	}
	list, err := ReadConformanceList(suite.ConformanceList())
	if err != nil {
		t.Fatal(err)
	}
	problems := Problems(summary, list, selected, Skips(), runErr)
	var notGreen strings.Builder
	for _, p := range problems {
		fmt.Fprintf(&notGreen, "NOT GREEN: %s\n", p)
	}
	text := fmt.Sprintf("Kubernetes %s conformance, profile %s, focus %q, %d process(es): %.1f min wall\n%s%s%s",
		binaries.KubernetesVersion, profile, focus, parallel, wall.Minutes(), summary, skipReasons(summary), notGreen.String())
	if err := os.WriteFile(filepath.Join(report, "summary.txt"), []byte(text), 0o644); err != nil {
		t.Error(err)
	}
	fmt.Print(text)
	fmt.Printf("JUnit: %s\n", filepath.Join(report, "junit_01.xml"))
	if summary.Failed > 0 {
		t.Errorf("%d of %d selected specs failed (%v)", summary.Failed, summary.Passed+summary.Failed+summary.Skipped, runErr)
	}
	for _, p := range problems {
		t.Errorf("not green: %s", p)
	}
}

// e2eCommand runs the end-to-end binary of suite against kubeconfig, with
// kubectl of suite first on PATH: the binary itself for one process,
// ginkgo's parallel runner for more. It runs the specs that the label
// filter labels picks (labelFilter: the 462 [Conformance] specs, or some of
// them) and that focus (a regexp, "" for all) matches and skip does not,
// printing nothing for the others. Its temporary files (the suite makes
// some it never removes, such as test-kuberc*) go to tmp.
func e2eCommand(suite binaries.ConformanceSet, kubeconfig, report, tmp, labels, focus, skip string, parallel int) *exec.Cmd {
	e2eArgs := []string{"--provider=skeleton", "--kubeconfig=" + kubeconfig, "--report-dir=" + report, "--disable-log-dump"}
	var cmd *exec.Cmd
	if parallel == 1 {
		cmd = exec.Command(suite.E2ETest, append(e2eArgs, "--ginkgo.label-filter="+labels, "--ginkgo.focus="+focus,
			"--ginkgo.skip="+skip, "--ginkgo.timeout=24h", "--ginkgo.no-color", "--ginkgo.silence-skips")...)
	} else {
		cmd = exec.Command(suite.Ginkgo, append([]string{"--procs=" + strconv.Itoa(parallel), "--label-filter=" + labels,
			"--focus=" + focus, "--skip=" + skip, "--timeout=24h", "--no-color", "--silence-skips",
			suite.E2ETest, "--"}, e2eArgs...)...)
	}
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(suite.Kubectl)+string(os.PathListSeparator)+os.Getenv("PATH"), "KUBECONFIG="+kubeconfig, "TMPDIR="+tmp)
	cmd.Dir = report
	return cmd
}

// skipPattern is the ginkgo skip regexp of the specs that cannot run
// honestly here (Skips).
func skipPattern() string {
	var names []string
	for n := range Skips() {
		names = append(names, regexp.QuoteMeta(n))
	}
	sort.Strings(names)
	return strings.Join(names, "|")
}

// skipReasons names, for each skipped spec that the skip list skipped,
// why.
func skipReasons(s Summary) string {
	var b strings.Builder
	for _, r := range s.Skips {
		if why, ok := SkipReason(r.Name, Skips()); ok {
			fmt.Fprintf(&b, "not run: %s\n  because %s\n", r.Name, why)
		}
	}
	return b.String()
}

// saveControlPlaneLogs writes the logs of the containers of the control
// plane pod (vc-conformance/conformance-0) into report, one file each
// (CONTAINER.log, and CONTAINER.previous.log for a container that
// restarted), read with kubectl from the local host.
func saveControlPlaneLogs(t *testing.T, kubectl, report string) {
	hostKubeconfig := filepath.Join(tests.Dir, "host", "kubeconfig.yaml")
	for _, c := range []string{"syncer", "kube-apiserver", "kube-controller-manager", "etcd", "coredns"} {
		for _, previous := range []bool{false, true} {
			args := []string{"--kubeconfig", hostKubeconfig, "logs", "-n", "vc-conformance", "conformance-0", "-c", c}
			name := c + ".log"
			if previous {
				args, name = append(args, "--previous"), c+".previous.log"
			}
			out, err := exec.Command(kubectl, args...).Output()
			if err != nil || len(out) == 0 {
				continue // no such container, or it never restarted
			}
			if err := os.WriteFile(filepath.Join(report, name), out, 0o644); err != nil {
				t.Error(err)
			}
		}
	}
}
