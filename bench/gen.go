package bench

import (
	"bytes"
	"fmt"
	"go/format"
	"strconv"
	"strings"
	"text/template"
	"unicode"

	"github.com/kreplay/kreplay/internal/textfmt"
	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/signatures"
)

// Files of a generated package.
const (
	SetFile    = "set.json"
	SpecFile   = "spec.json"
	DocFile    = "doc.go"
	ReplayFile = "replay_test.go"
)

// GenOptions tune Generate.
type GenOptions struct {
	// Package is the Go package name (default: PackageName of the
	// set's Workload).
	Package string
	// Source is the argument `go generate` passes to `kreplay gen -o .`
	// to rebuild the package: "embedded:NAME", or the path of a trace or
	// set relative to the package's directory. Default: "set.json", the
	// package's own set.
	Source string
	// Spec is the workload spec (resolved, as a bundle's spec.json holds
	// it), written as spec.json and embedded for BenchmarkModel; nil
	// leaves it out, and BenchmarkModel then runs the spec the
	// workload's name gives, if any (ModelSpec).
	Spec []byte
}

// Generate writes the Go test package that benchmarks a signature set,
// as file name -> contents:
//
//   - set.json: the set, written by signatures.WriteSet;
//   - spec.json: opt.Spec, the workload spec, when given;
//   - doc.go: the package documentation and a go:generate directive
//     that regenerates the package;
//   - replay_test.go: the set embedded with go:embed, BenchmarkReplay
//     with one sub-benchmark per signature
//     (BenchmarkReplay/workload=W/sig=ID, each calling Signature),
//     BenchmarkTimeline (BenchmarkTimeline/workload=W/timeline, calling
//     Timeline: the whole traced timeline replayed in order as one CUDA
//     graph, needing no framework), BenchmarkModel
//     (BenchmarkModel/workload=W/model, calling Model with the spec), and
//     TestGenerated, which checks the embedded set and the benchmark
//     names (see Check).
//
// The same set and options give byte-identical files. BenchmarkModel runs
// the real model in PyTorch (Model).
func Generate(set *signatures.Set, opt GenOptions) (map[string][]byte, error) {
	if set == nil {
		return nil, fmt.Errorf("bench: no set")
	}
	if err := checkSignatures(set); err != nil {
		return nil, err
	}
	workload := Workload(set.Source)
	if opt.Package == "" {
		opt.Package = PackageName(workload)
	}
	if !isIdent(opt.Package) {
		return nil, fmt.Errorf("bench: package name %q is not a Go identifier", opt.Package)
	}
	if opt.Source == "" {
		opt.Source = SetFile
	}
	if strings.ContainsAny(opt.Source, " \t\n\"`") {
		return nil, fmt.Errorf("bench: source %q: a go:generate argument cannot hold spaces or quotes", opt.Source)
	}

	var js bytes.Buffer
	if err := signatures.WriteSet(&js, set); err != nil {
		return nil, err
	}
	d := genData{Package: opt.Package, Workload: workload, Set: set, HasSpec: len(opt.Spec) > 0,
		DefaultCache: replay.DefaultCacheMode.String(),
		// Built here: a line of this file starting with the directive
		// would make go generate run it on package bench.
		Directive: "//go:" + "generate go run github.com/kreplay/kreplay/cmd/kreplay gen -o . " + opt.Source}
	d.BusyNS, d.Activities, d.Rows = busyNS(set), set.Links.Activities, genRows(set)
	files := map[string][]byte{SetFile: js.Bytes()}
	if d.HasSpec {
		files[SpecFile] = opt.Spec
	}
	for name, tmpl := range map[string]*template.Template{DocFile: docTmpl, ReplayFile: replayTmpl} {
		var b bytes.Buffer
		if err := tmpl.Execute(&b, d); err != nil {
			return nil, fmt.Errorf("bench: %s: %w", name, err)
		}
		src, err := format.Source(b.Bytes())
		if err != nil {
			return nil, fmt.Errorf("bench: formatting %s: %w", name, err)
		}
		files[name] = src
	}
	return files, nil
}

// checkSignatures returns an error where set's signatures cannot be
// benchmarks of a generated package: none, one without an ID, an ID that
// appears twice or cannot be part of a benchmark name.
func checkSignatures(set *signatures.Set) error {
	if len(set.Signatures) == 0 {
		return fmt.Errorf("bench: set %s has no signatures", set.Source.File)
	}
	seen := map[string]bool{}
	for i, s := range set.Signatures {
		if s == nil || s.ID == "" {
			return fmt.Errorf("bench: signature %d has no id", i)
		}
		if seen[s.ID] {
			return fmt.Errorf("bench: signature id %s appears twice", s.ID)
		}
		if strings.ContainsFunc(s.ID, func(r rune) bool { return !isNameRune(r) }) {
			return fmt.Errorf("bench: signature id %q cannot be part of a benchmark name", s.ID)
		}
		seen[s.ID] = true
	}
	return nil
}

// genRows are the rows of set's signatures in the generated ids.
func genRows(set *signatures.Set) []genRow {
	rows := make([]genRow, len(set.Signatures))
	for i, s := range set.Signatures {
		rows[i] = genRow{ID: s.ID, Comment: rowComment(s)}
	}
	return rows
}

// busyNS is set's traced GPU-busy time, over its devices.
func busyNS(set *signatures.Set) int64 {
	var ns int64
	for _, dev := range set.Summary {
		ns += dev.BusyNS
	}
	return ns
}

type genData struct {
	Package, Workload, Directive string
	DefaultCache                 string // replay.DefaultCacheMode
	Set                          *signatures.Set
	HasSpec                      bool
	BusyNS                       int64
	Activities                   int
	Rows                         []genRow
}

type genRow struct{ ID, Comment string }

// rowComment describes a signature on one line: tier, class, invocations,
// traced total, label, and what keeps it from replaying alone.
func rowComment(s *signatures.Signature) string {
	c := fmt.Sprintf("tier %d %s, %dx, %s: %s", s.Tier, s.Class, s.Count, textfmt.NS(float64(s.TracedNS.Total)), s.Label)
	switch {
	case s.PartOf != "":
		c += " (part of " + s.PartOf + ")"
	case s.Unreplayable != "":
		c += " (unreplayable)"
	}
	return textfmt.OneLine(c, 110)
}

func isNameRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.'
}

func isIdent(s string) bool {
	if s == "" || s == "_" {
		return false
	}
	for i, r := range s {
		if !(unicode.IsLetter(r) || r == '_' || i > 0 && unicode.IsDigit(r)) {
			return false
		}
	}
	return true
}

var funcs = template.FuncMap{
	"quote": strconv.Quote,
	"dur":   func(ns int64) string { return textfmt.NS(float64(ns)) },
	"line":  func(s string) string { return textfmt.OneLine(s, 200) },
}

var docTmpl = template.Must(template.New(DocFile).Funcs(funcs).Parse(`// Code generated by kreplay gen; DO NOT EDIT.

// Package {{.Package}} benchmarks the replay of every kernel signature
// of the workload {{.Workload}}: {{len .Set.Signatures}} signatures, {{.Activities}} GPU activities,
// {{dur .BusyNS}} GPU busy, imported from {{line .Set.Source.File}}
{{- with .Set.Source.GPU}}
// ({{line .}}){{end}}.
//
// On a GPU machine, from the module root:
//
//	go test -run '^$' -bench . -benchtime 1x -count 6 -v ./bench/{{.Package}} | tee {{.Package}}.bench
//	go run ./cmd/kreplay report {{.Package}}.bench
//
// Each sub-benchmark BenchmarkReplay/workload={{.Workload}}/sig=ID
// prepares and measures its signature once (the replay package samples
// until its confidence target) and reports the time per invocation as
// ns/op. BenchmarkTimeline/workload={{.Workload}}/timeline replays the
// whole traced timeline in order as one CUDA graph and reports its time
// as ns/op, and the traced time it could not replay as skipped-ns.
// BenchmarkModel/workload={{.Workload}}/model runs the real inference
{{- if .HasSpec}}
// as spec.json, the workload spec, says{{else}}
// of the built-in model the workload's name gives, if any (no spec.json:
// generated from a trace, not a bundle){{end}}; when it cannot run, a line
// "kreplay BenchmarkModel/...: no model run: REASON" says why.
` + envDoc + `
//
// Regenerate with go generate.
package {{.Package}}

{{.Directive}}
`))

// envDoc is the generated packages' doc paragraph on the environment
// variables that configure their benchmarks.
const envDoc = `// Set KREPLAY_REQUIRE_GPU=1 to fail instead of skipping when no GPU
// is usable, KREPLAY_ENERGY=1 to measure J/op and W too (about 11 s per
// signature; KREPLAY_ENERGY_TICKS sets the energy window's NVML counter
// ticks, default 101), KREPLAY_CACHE to choose the L2 cache mode
// (default {{.DefaultCache}}), KREPLAY_MODEL_TICKS the model run's energy
// window (default 20 ticks).`

var replayTmpl = template.Must(template.New(ReplayFile).Funcs(funcs).Parse(`// Code generated by kreplay gen; DO NOT EDIT.

package {{.Package}}

import (
	_ "embed"
	"testing"

	"github.com/kreplay/kreplay/bench"
	"github.com/kreplay/kreplay/signatures"
)

// workload is the workload's name in the benchmark names.
const workload = {{quote .Workload}}

// options configure the measurements (bench.Options: the zero value and
// the environment give the defaults); a TestMain may change them before
// the benchmarks run.
var options bench.Options

//go:embed set.json
var setJSON []byte
{{if .HasSpec}}
// specJSON is the workload spec BenchmarkModel runs.
//
//go:embed spec.json
var specJSON []byte
{{else}}
// specJSON is nil: the package was generated from a trace without a
// workload spec; BenchmarkModel runs the built-in model the workload's
// name gives, if any.
var specJSON []byte
{{end}}
// set returns the embedded signature set, read once.
func set(tb testing.TB) *signatures.Set { return bench.Load(tb, {{quote .Workload}}, setJSON) }

// ids lists the set's signatures in its order (by traced time): tier,
// class, invocations, traced total and label.
var ids = []string{
{{- range .Rows}}
	{{quote .ID}}, // {{.Comment}}
{{- end}}
}

// BenchmarkReplay measures every signature alone on the GPU:
// BenchmarkReplay/workload={{.Workload}}/sig=ID.
func BenchmarkReplay(b *testing.B) { bench.Replay(b, set(b), workload, ids, options) }

// BenchmarkTimeline replays the whole traced timeline in order, one CUDA
// graph per timeline (bench.Timeline):
// BenchmarkTimeline/workload={{.Workload}}/timeline.
func BenchmarkTimeline(b *testing.B) { bench.TimelineBench(b, set(b), workload, options) }

// BenchmarkModel runs the real inference (bench.Model):
// BenchmarkModel/workload={{.Workload}}/model.
func BenchmarkModel(b *testing.B) { bench.ModelBench(b, set(b), workload, specJSON) }

// TestGenerated checks that the embedded set reads back, that ids are its
// signatures and every benchmark name is unique and parses with benchproc.
func TestGenerated(t *testing.T) { bench.Check(t, set(t), workload, ids) }
`))
