package docs

import (
	"bytes"
	"go/scanner"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// privateFolder is the folder of design notes and copies of reference pages
// that only the project's own workspace has, beside the repository. Built
// from parts so that this file does not name it.
var privateFolder = "sha" + "red"

// citation matches a path into that folder, as a citation writes it
// ("<folder>/reference/…", "../<folder>/design/…"), not as part of a longer
// word.
var citation = regexp.MustCompile(`(^|[^A-Za-z0-9_])(\.\./)?` + privateFolder + `/(reference|design|hooks)`)

// TestNoPrivateCitations fails for every comment of a tracked .go file and
// every line of a tracked .md file that cites a file of the private folder:
// readers of the repository do not have it, so a citation must be the public
// URL of the document (or a file of this repository).
func TestNoPrivateCitations(t *testing.T) {
	root, files := trackedFiles(t, "*.go", "*.md")
	if len(files) == 0 {
		t.Fatal("git ls-files listed no .go or .md file")
	}
	for _, name := range files {
		data, err := os.ReadFile(filepath.Join(root, name))
		if os.IsNotExist(err) {
			continue // deleted in the working tree, not yet in the index
		}
		if err != nil {
			t.Fatal(err)
		}
		var lines []int
		if strings.HasSuffix(name, ".go") {
			lines = goCommentCitations(data)
		} else {
			lines = textCitations(data)
		}
		for _, l := range lines {
			t.Errorf("%s:%d cites a file of the private %s folder (cite its public URL instead): %s",
				name, l, privateFolder, strings.TrimSpace(line(data, l)))
		}
	}
}

// TestCitationPattern checks the pattern on citations it must catch and on
// text it must leave alone.
func TestCitationPattern(t *testing.T) {
	for _, s := range []string{
		"(" + privateFolder + "/reference/002_c3c516dc3011c607.txt)",
		"`../" + privateFolder + "/design/anchors.md`",
		privateFolder + "/hooks/pre-commit",
		"see " + privateFolder + "/design/anchors.md, section 1",
	} {
		if !citation.MatchString(s) {
			t.Errorf("%q: not matched", s)
		}
	}
	for _, s := range []string{
		"the " + privateFolder + " host cluster",
		"un" + privateFolder + "/reference",
		privateFolder + "/other",
		"https://www.vcluster.com/docs/vcluster/configure/vcluster-yaml/sync",
	} {
		if citation.MatchString(s) {
			t.Errorf("%q: matched", s)
		}
	}

	src := []byte("package p\n\n// A comment citing " + privateFolder + "/design/x.md.\nvar s = \"" + privateFolder + "/design/x.md\"\n\n/* block\n   " + privateFolder + "/reference/y */\n")
	if got := goCommentCitations(src); len(got) != 2 || got[0] != 3 || got[1] != 7 {
		t.Errorf("goCommentCitations = %v, want [3 7] (comments only, block comment on its own line)", got)
	}
}

// trackedFiles returns the repository's root and the tracked files matching
// patterns, relative to the root.
func trackedFiles(t *testing.T, patterns ...string) (string, []string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found:", err)
	}
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skip("not in a git checkout:", err)
	}
	root := strings.TrimSpace(string(out))
	cmd := exec.Command("git", append([]string{"ls-files", "-z", "--"}, patterns...)...)
	cmd.Dir = root
	out, err = cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	return root, files
}

// goCommentCitations returns the lines of Go source src where a comment cites
// the private folder. Source that does not parse is still scanned.
func goCommentCitations(src []byte) []int {
	fset := token.NewFileSet()
	file := fset.AddFile("", fset.Base(), len(src))
	var s scanner.Scanner
	s.Init(file, src, func(token.Position, string) {}, scanner.ScanComments)
	var lines []int
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			return lines
		}
		if tok != token.COMMENT {
			continue
		}
		first := file.Line(pos)
		for i, l := range strings.Split(lit, "\n") {
			if citation.MatchString(l) {
				lines = append(lines, first+i)
			}
		}
	}
}

// textCitations returns the lines of text data that cite the private folder.
func textCitations(data []byte) []int {
	var lines []int
	for i, l := range bytes.Split(data, []byte("\n")) {
		if citation.Match(l) {
			lines = append(lines, i+1)
		}
	}
	return lines
}

// line returns line n (from 1) of data.
func line(data []byte, n int) string {
	ls := bytes.Split(data, []byte("\n"))
	if n < 1 || n > len(ls) {
		return ""
	}
	return string(ls[n-1])
}
