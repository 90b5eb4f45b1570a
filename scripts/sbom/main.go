// Command sbom writes a CycloneDX 1.5 JSON SBOM of a Go binary: the main
// module and exactly the modules linked into it, read from the build
// information the toolchain embeds (what `go version -m` prints). It reads
// binaries of any platform and needs no network, so the release script runs
// it for every cross-compiled target.
//
//	go run ./scripts/sbom -o tuitbot.cdx.json dist/tuitbot_linux_amd64
package main

import (
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/google/uuid"
)

type bom struct {
	BOMFormat    string       `json:"bomFormat"`
	SpecVersion  string       `json:"specVersion"`
	SerialNumber string       `json:"serialNumber"`
	Version      int          `json:"version"`
	Metadata     metadata     `json:"metadata"`
	Components   []component  `json:"components"`
	Dependencies []dependency `json:"dependencies"`
}

type metadata struct {
	Timestamp string    `json:"timestamp"`
	Tools     tools     `json:"tools"`
	Component component `json:"component"`
}

type tools struct {
	Components []component `json:"components"`
}

type component struct {
	Type       string     `json:"type"`
	BOMRef     string     `json:"bom-ref,omitempty"`
	Name       string     `json:"name"`
	Version    string     `json:"version,omitempty"`
	PURL       string     `json:"purl,omitempty"`
	Hashes     []hash     `json:"hashes,omitempty"`
	Properties []property `json:"properties,omitempty"`
}

type hash struct {
	Alg     string `json:"alg"`
	Content string `json:"content"`
}

type property struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type dependency struct {
	Ref       string   `json:"ref"`
	DependsOn []string `json:"dependsOn"`
}

func purl(path, version string) string {
	if version == "" || version == "(devel)" {
		return "pkg:golang/" + path
	}
	return "pkg:golang/" + path + "@" + version
}

// build describes bi. The serial number derives from the binary's digest
// and the timestamp is given, so the same binary always gets the same SBOM.
func build(bi *debug.BuildInfo, name, version, sha string, ts time.Time) bom {
	mainRef := purl(bi.Main.Path, version)
	main := component{
		Type: "application", BOMRef: mainRef, Name: name, Version: version, PURL: mainRef,
		Hashes:     []hash{{Alg: "SHA-256", Content: sha}},
		Properties: []property{{Name: "go:module", Value: bi.Main.Path}, {Name: "go:package", Value: bi.Path}, {Name: "go:toolchain", Value: bi.GoVersion}},
	}
	for _, s := range bi.Settings {
		main.Properties = append(main.Properties, property{Name: "go:build:" + s.Key, Value: s.Value})
	}
	b := bom{
		BOMFormat: "CycloneDX", SpecVersion: "1.5", Version: 1,
		SerialNumber: "urn:uuid:" + uuid.NewSHA1(uuid.NameSpaceURL, []byte("sha256:"+sha)).String(),
		Metadata: metadata{
			Timestamp: ts.UTC().Format(time.RFC3339),
			Tools:     tools{Components: []component{{Type: "application", Name: "tuitbot scripts/sbom"}}},
			Component: main,
		},
		Components: []component{},
	}
	deps := dependency{Ref: mainRef, DependsOn: []string{}}
	for _, d := range bi.Deps {
		m := d
		if d.Replace != nil {
			m = d.Replace
		}
		c := component{Type: "library", Name: m.Path, Version: m.Version, PURL: purl(m.Path, m.Version)}
		c.BOMRef = c.PURL
		if m.Sum != "" {
			// The go.sum hash (h1:, a SHA-256 over the module's files);
			// CycloneDX has no algorithm name for it, so it is a property.
			c.Properties = append(c.Properties, property{Name: "go:sum", Value: m.Sum})
		}
		if d.Replace != nil {
			c.Properties = append(c.Properties, property{Name: "go:replaces", Value: d.Path + "@" + d.Version})
		}
		b.Components = append(b.Components, c)
		deps.DependsOn = append(deps.DependsOn, c.BOMRef)
	}
	b.Dependencies = []dependency{deps}
	return b
}

func main() {
	out := flag.String("o", "", "output file (default stdout)")
	name := flag.String("name", "tuitbot", "product name")
	version := flag.String("version", "", "product version (default: the module version in the binary)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: sbom [-o FILE] [-name NAME] [-version V] BINARY")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *out, *name, *version); err != nil {
		fmt.Fprintln(os.Stderr, "sbom:", err)
		os.Exit(1)
	}
}

func run(bin, out, name, version string) error {
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		return fmt.Errorf("read build information of %s: %w", bin, err)
	}
	f, err := os.Open(bin)
	if err != nil {
		return err
	}
	h := sha256.New()
	_, err = io.Copy(h, f)
	f.Close()
	if err != nil {
		return err
	}
	if version == "" {
		version = bi.Main.Version
	}
	ts := time.Now()
	// Reproducible builds fix the time (https://reproducible-builds.org/specs/source-date-epoch/).
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		sec, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf("SOURCE_DATE_EPOCH %q: %w", s, err)
		}
		ts = time.Unix(sec, 0)
	}
	doc, err := json.MarshalIndent(build(bi, name, version, hex.EncodeToString(h.Sum(nil)), ts), "", "  ")
	if err != nil {
		return err
	}
	doc = append(doc, '\n')
	if out == "" {
		_, err = os.Stdout.Write(doc)
		return err
	}
	return os.WriteFile(out, doc, 0o644)
}
