package conformance

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/clustersync/clustersync/internal/binaries"
)

// Each name of the skip list selects exactly one [Conformance] spec of the
// suite (a dry run of the end-to-end binary, when it is built): a renamed
// spec would otherwise run, and fail, instead of being skipped.
func TestSkipsNameOneSpec(t *testing.T) {
	suite := binaries.Conformance()
	if err := suite.Check(); err != nil {
		t.Skip(err)
	}
	ran := regexp.MustCompile(`Will run (\d+) of \d+ specs`)
	tmp := t.TempDir() // for the folders the suite makes and never removes (test-kuberc*)
	for name := range Skips() {
		cmd := exec.Command(suite.E2ETest, "--ginkgo.label-filter=Conformance", "--ginkgo.focus="+regexp.QuoteMeta(name),
			"--ginkgo.dry-run", "--ginkgo.no-color", "--ginkgo.silence-skips")
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("dry run: %v\n%s", err, out)
		}
		m := ran.FindSubmatch(out)
		if m == nil || string(m[1]) != "1" {
			t.Errorf("skip %q selects %v specs, want 1:\n%s", name, m, lastLines(string(out), 5))
		}
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// The suite's conformance.yaml names its [Conformance] specs exactly as
// the JUnit report does (a dry run of the end-to-end binary, when it is
// built): Problems counts a run against that list by name.
func TestConformanceListMatchesSuite(t *testing.T) {
	suite := binaries.Conformance()
	if err := suite.Check(); err != nil {
		t.Skip(err)
	}
	list, err := ReadConformanceList(suite.ConformanceList())
	if err != nil {
		t.Fatal(err)
	}
	report := t.TempDir()
	cmd := exec.Command(suite.E2ETest, "--provider=skeleton", "--report-dir="+report, "--ginkgo.label-filter=Conformance",
		"--ginkgo.dry-run", "--ginkgo.no-color", "--ginkgo.silence-skips")
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
	cmd.Dir = report
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("dry run: %v\n%s", err, lastLines(string(out), 5))
	}
	conformance := func(n string) bool { return strings.Contains(n, "[Conformance]") }
	s, err := ReadJUnit(filepath.Join(report, "junit_01.xml"), conformance)
	if err != nil {
		t.Fatal(err)
	}
	if problems := Problems(s, list, conformance, nil, nil); len(problems) > 0 {
		t.Errorf("a dry run of all %d specs of conformance.yaml: %q", len(list), problems)
	}
	if s.Passed != len(list) {
		t.Errorf("the dry run passed %d specs, conformance.yaml lists %d", s.Passed, len(list))
	}
}
