package release

import (
	"bytes"
	"debug/buildinfo"
	"fmt"
	"slices"
	"strings"

	cdx "github.com/CycloneDX/cyclonedx-go"
)

// SBOM returns the CycloneDX SBOM (JSON, spec 1.6) of Go binary path, read
// from the build information the Go linker embeds: the binary as the
// application component (its main module at release version v, its Go
// version and build settings as properties) and every module it was built
// with as a library component with its package URL
// (pkg:golang/PATH@VERSION) and go.sum hash, replacements resolved. It
// has no timestamp nor serial number, so that it is reproducible. Errors
// name a file that is not a Go binary.
func SBOM(path, v string) ([]byte, error) {
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("release: SBOM of %s: %w", path, err)
	}
	mainRef := purl(info.Main.Path, v)
	props := []cdx.Property{{Name: "go:version", Value: info.GoVersion}}
	for _, s := range info.Settings {
		props = append(props, cdx.Property{Name: "go:build:" + s.Key, Value: s.Value})
	}
	var comps []cdx.Component
	var refs []string
	for _, d := range info.Deps {
		if d.Replace != nil {
			d = d.Replace
		}
		ref := purl(d.Path, d.Version)
		c := cdx.Component{BOMRef: ref, Type: cdx.ComponentTypeLibrary, Name: d.Path, Version: d.Version, PackageURL: ref}
		if d.Sum != "" {
			c.Properties = &[]cdx.Property{{Name: "go:sum", Value: d.Sum}}
		}
		comps = append(comps, c)
		refs = append(refs, ref)
	}
	slices.SortFunc(comps, func(a, b cdx.Component) int { return strings.Compare(a.BOMRef, b.BOMRef) })
	slices.Sort(refs)
	bom := cdx.NewBOM()
	bom.Metadata = &cdx.Metadata{Component: &cdx.Component{BOMRef: mainRef, Type: cdx.ComponentTypeApplication,
		Name: info.Main.Path, Version: v, PackageURL: mainRef, Properties: &props}}
	bom.Components = &comps
	bom.Dependencies = &[]cdx.Dependency{{Ref: mainRef, Dependencies: &refs}}
	var out bytes.Buffer
	enc := cdx.NewBOMEncoder(&out, cdx.BOMFileFormatJSON)
	enc.SetPretty(true)
	if err := enc.EncodeVersion(bom, cdx.SpecVersion1_6); err != nil {
		return nil, fmt.Errorf("release: SBOM of %s: %w", path, err)
	}
	return out.Bytes(), nil
}

// purl is the package URL of Go module path at version v.
func purl(path, v string) string { return "pkg:golang/" + path + "@" + v }
