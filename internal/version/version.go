// Package version is clustersync's version and the commit it was built
// from, set at link time:
//
//	go build -ldflags "-X github.com/clustersync/clustersync/internal/version.version=v0.2.0 -X github.com/clustersync/clustersync/internal/version.commit=0123abc" ./cmd/clustersync
//
// (`make build VERSION=…` and `make release` do it). A build without them
// is a development build, version Dev. A release never mixes versions: the
// charts the binary embeds, the images they and the CLI deploy and the
// agent the manager installs default to ImageTag (charts.Load,
// manager.DefaultAgentImage).
package version

import "strings"

// Dev is the version of a build without a version set.
const Dev = "dev"

// DevImageTag is the image tag of a development build: what `clustersync
// dev image` pushes as "latest".
const DevImageTag = "latest"

// version and commit are the two link-time inputs (-X); the linker
// writes them, nothing at run time does.
var (
	version = Dev
	commit  = ""
)

// Version returns the release version, e.g. "v0.2.0", or Dev.
func Version() string { return version }

// Commit returns the commit the binary was built from (the Git revision
// `make` passes), or "" when unknown.
func Commit() string { return commit }

// Released reports whether v is a release version (anything but Dev).
func Released(v string) bool { return v != "" && v != Dev }

// ImageTag returns the image tag of version v: v itself for a release
// ("v0.2.0"), DevImageTag for a development build.
func ImageTag(v string) string {
	if !Released(v) {
		return DevImageTag
	}
	return v
}

// ChartVersion returns the chart version of release version v: SemVer
// without the "v" ("v0.2.0" → "0.2.0"), as Helm and OCI registries show
// it; "" for a development build (the charts keep their own).
func ChartVersion(v string) string {
	if !Released(v) {
		return ""
	}
	return strings.TrimPrefix(v, "v")
}

// String is how `clustersync version` names the build: "v0.2.0 (commit
// 0123abc)", "dev" without a commit.
func String(v, c string) string {
	if c == "" {
		return v
	}
	return v + " (commit " + c + ")"
}

// Path is this package's import path, for -X.
const Path = "github.com/clustersync/clustersync/internal/version"

// LDFlags returns the linker flags that make a binary of version v built
// from commit c ("" leaves the commit unknown), as the Makefile's build
// passes them.
func LDFlags(v, c string) string {
	f := "-X " + Path + ".version=" + v
	if c != "" {
		f += " -X " + Path + ".commit=" + c
	}
	return f
}
