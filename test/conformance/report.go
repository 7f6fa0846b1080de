package conformance

import (
	"encoding/xml"
	"fmt"
	"os"
	"sort"
	"strings"
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
