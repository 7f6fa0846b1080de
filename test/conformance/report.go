package conformance

import (
	"encoding/xml"
	"fmt"
	"os"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// Result is one spec of a run's JUnit report.
type Result struct {
	// Name is the spec's full text, e.g. "[sig-network] DNS should
	// provide DNS for services [Conformance]".
	Name string
	// Status is the state the report gives: passed, failed, skipped,
	// pending, interrupted, timedout, panicked or aborted.
	Status string
	// Line is the first line of the failure (for a spec that did not
	// pass) or of the skip message, "" otherwise.
	Line string
	// Seconds is how long the spec ran.
	Seconds float64
}

// Summary counts the specs of a run that the run selected.
type Summary struct {
	// Passed, Failed and Skipped count the selected specs by outcome;
	// Failed counts every state that is neither passed nor skipped.
	Passed, Failed, Skipped int
	// Failures and Skips are those specs, in name order.
	Failures, Skips []Result
	// Names are the names of every selected spec the report lists,
	// whatever its outcome (suite nodes are not specs).
	Names []string
	// Seconds is the sum of the specs' times.
	Seconds float64
}

// junitFile is the part of a Ginkgo JUnit report (the junit_01.xml the
// e2e suite writes in --report-dir) that Summarize reads.
type junitFile struct {
	Suites []struct {
		Cases []struct {
			Name    string  `xml:"name,attr"`
			Status  string  `xml:"status,attr"`
			Time    float64 `xml:"time,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"error"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// ReadJUnit reads the JUnit report at path and summarizes the specs whose
// name selected accepts (Summarize). Errors name the file.
func ReadJUnit(path string, selected func(name string) bool) (Summary, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Summary{}, err
	}
	s, err := Summarize(data, selected)
	if err != nil {
		return Summary{}, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Summarize counts the specs of a Ginkgo JUnit report (data) whose name
// selected accepts, plus every suite node that did not pass (a failed
// BeforeSuite or AfterSuite counts as a failure). A JUnit report lists
// the specs a focus left out as skipped too, which is why the caller
// says which specs it selected. Names lose Ginkgo's "[It] " prefix.
func Summarize(data []byte, selected func(name string) bool) (Summary, error) {
	var f junitFile
	if err := xml.Unmarshal(data, &f); err != nil {
		return Summary{}, fmt.Errorf("not a JUnit report: %w", err)
	}
	var s Summary
	for _, suite := range f.Suites {
		for _, c := range suite.Cases {
			name := strings.TrimPrefix(c.Name, "[It] ")
			suiteNode := !strings.HasPrefix(c.Name, "[It] ")
			if suiteNode && c.Status == "passed" {
				continue
			}
			if !suiteNode && !selected(name) {
				continue
			}
			r := Result{Name: name, Status: c.Status, Seconds: c.Time}
			s.Seconds += c.Time
			if !suiteNode {
				s.Names = append(s.Names, name)
			}
			switch c.Status {
			case "passed":
				s.Passed++
			case "skipped":
				if c.Skipped != nil {
					r.Line = firstLine(c.Skipped.Message)
				}
				s.Skipped++
				s.Skips = append(s.Skips, r)
			default:
				switch {
				case c.Failure != nil:
					r.Line = firstLine(c.Failure.Text + "\n" + c.Failure.Message)
				case c.Error != nil:
					r.Line = firstLine(c.Error.Text + "\n" + c.Error.Message)
				}
				s.Failed++
				s.Failures = append(s.Failures, r)
			}
		}
	}
	byName := func(rs []Result) {
		sort.Slice(rs, func(i, j int) bool { return rs[i].Name < rs[j].Name })
	}
	byName(s.Failures)
	byName(s.Skips)
	return s, nil
}

// firstLine is the first line of text that says something: not empty and
// not a bare Ginkgo marker such as "[FAILED]".
func firstLine(text string) string {
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || l == "[FAILED]" || l == "[PANICKED]" || l == "[TIMEDOUT]" || l == "[INTERRUPTED]" {
			continue
		}
		return strings.TrimSpace(strings.TrimPrefix(l, "[FAILED] "))
	}
	return ""
}

// String is the summary as make conformance prints it: one line of
// counts, then each failed spec with its first failure line, then each
// skipped spec with its reason.
func (s Summary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "passed %d, failed %d, skipped %d (specs' time %.0f s)\n", s.Passed, s.Failed, s.Skipped, s.Seconds)
	for _, r := range s.Failures {
		fmt.Fprintf(&b, "FAILED  %s\n        %s\n", r.Name, r.Line)
	}
	for _, r := range s.Skips {
		fmt.Fprintf(&b, "SKIPPED %s\n        %s\n", r.Name, r.Line)
	}
	return b.String()
}

// ReadConformanceList reads the names of the [Conformance] specs of the
// suite's conformance.yaml (binaries.ConformanceSet.ConformanceList; each
// entry's "codename", the name the JUnit report gives the spec). Errors
// name the file; a list with no spec is one.
func ReadConformanceList(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var entries []struct {
		Codename string `json:"codename"`
	}
	if err := yaml.Unmarshal(data, &entries); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if e.Codename == "" {
			return nil, fmt.Errorf("%s: an entry without codename", path)
		}
		names = append(names, e.Codename)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%s: no spec listed", path)
	}
	return names, nil
}

// Problems are the reasons a run cannot count as green beyond its failed
// specs, each one line: the suite's exit error (exit: a crashed ginkgo
// process or an interrupted run exits non-zero and leaves specs out of
// the report); the report's selected specs (s.Names) not being exactly the
// specs of the suite's list (list, ReadConformanceList) that selected
// accepts, so that passed + failed + not run is that number; a skipped
// spec that skips (Skips) does not name (skipped at run time, e.g. by a
// missing feature, instead of on purpose); and no spec passed. None means
// the run is what its counts say.
func Problems(s Summary, list []string, selected func(name string) bool, skips map[string]string, exit error) []string {
	var out []string
	switch {
	case exit != nil && s.Failed > 0:
		out = append(out, fmt.Sprintf("the suite exited with %v (%d failed)", exit, s.Failed))
	case exit != nil:
		out = append(out, fmt.Sprintf("the suite exited with %v with no spec failed: a crashed or interrupted process leaves specs unreported", exit))
	}
	want := map[string]bool{}
	for _, n := range list {
		if selected(n) {
			want[n] = true
		}
	}
	got := map[string]bool{}
	var extra []string
	for _, n := range s.Names {
		if got[n] {
			extra = append(extra, n+" (twice)")
		}
		got[n] = true
		if !want[n] {
			extra = append(extra, n)
		}
	}
	var missing []string
	for n := range want {
		if !got[n] {
			missing = append(missing, n)
		}
	}
	// Names holds every selected spec whatever its outcome; Failed also
	// counts failed suite nodes, which are not specs.
	if total := len(s.Names); total != len(want) || len(missing) > 0 || len(extra) > 0 {
		out = append(out, fmt.Sprintf("passed %d + failed %d + not run %d = %d specs, want the %d the suite's conformance.yaml selects; not in the report: %s; not in conformance.yaml: %s",
			s.Passed, total-s.Passed-s.Skipped, s.Skipped, total, len(want), some(missing), some(extra)))
	}
	for _, r := range s.Skips {
		if _, named := SkipReason(r.Name, skips); !named {
			out = append(out, fmt.Sprintf("skipped, and skips.go does not name it: %s (%s)", r.Name, r.Line))
		}
	}
	if s.Passed == 0 {
		out = append(out, "no spec passed")
	}
	return out
}

// SkipReason is why skips (Skips) skips the spec name: the reason of the
// entry whose pattern is a part of name; ok is false when none is.
func SkipReason(name string, skips map[string]string) (why string, ok bool) {
	for pattern, why := range skips {
		if strings.Contains(name, pattern) {
			return why, true
		}
	}
	return "", false
}

// some is names sorted, at most 5 of them and how many more, or "none".
func some(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	sort.Strings(names)
	if len(names) > 5 {
		return strings.Join(names[:5], "; ") + fmt.Sprintf("; and %d more", len(names)-5)
	}
	return strings.Join(names, "; ")
}
