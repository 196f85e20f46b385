package bench

import (
	"bytes"
	"cmp"
	"fmt"
	"go/format"
	"slices"
	"strings"
	"text/template"

	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/signatures"
)

// SetRankFile is rank's signature set in a tensor-parallel package:
// "set.rank1.json".
func SetRankFile(rank int) string { return fmt.Sprintf("set.rank%d.json", rank) }

// GroupWorkload is the name a tensor-parallel workload has in benchmark
// names as a whole: the Workload of its ranks' source, without "_rankN".
func GroupWorkload(src signatures.Source) string {
	src.Rank, src.WorldSize = 0, 1
	return Workload(src)
}

// CheckRanks returns an error unless sets are the ranks of one
// tensor-parallel workload, in rank order: two or more, set r of rank r,
// each of a world of len(sets), all of the same workload.
func CheckRanks(sets []*signatures.Set) error {
	if len(sets) < 2 {
		return fmt.Errorf("bench: %d signature sets: a tensor-parallel workload has 2 ranks or more", len(sets))
	}
	for r, s := range sets {
		if s == nil {
			return fmt.Errorf("bench: rank %d has no signature set", r)
		}
		src := s.Source
		if src.Rank != r || src.WorldSize != len(sets) {
			return fmt.Errorf("bench: set %d (%s) is rank %d of %d, want rank %d of %d", r, src.File, src.Rank, src.WorldSize, r, len(sets))
		}
		if src.Workload != sets[0].Source.Workload {
			return fmt.Errorf("bench: rank %d's workload is %q, rank 0's %q", r, src.Workload, sets[0].Source.Workload)
		}
	}
	return nil
}

// GenerateGroup writes the Go test package that benchmarks a
// tensor-parallel workload, from its ranks' sets (in any order; CheckRanks
// once sorted by rank), as file name -> contents:
//
//   - set.rankN.json: rank N's set (SetRankFile), written by
//     signatures.WriteSet;
//   - spec.json: opt.Spec, the workload spec, when given;
//   - doc.go: the package documentation and the go:generate directive,
//     which regenerates the package from opt.Source, the bundle (required:
//     the package's own sets are several files);
//   - replay_test.go: the sets embedded; BenchmarkReplay, every rank's
//     signatures (GroupReplay: BenchmarkReplay/workload=W_rankN/sig=ID);
//     BenchmarkModel, the real inference of all ranks at once (GroupModel:
//     BenchmarkModel/workload=W_rankN/model per rank); BenchmarkTimeline
//     (GroupTimeline: BenchmarkTimeline/workload=W_rankN/timeline per rank,
//     which says that there is no group timeline); and TestGenerated
//     (CheckGroup).
//
// W is GroupWorkload and opt.Package defaults to its PackageName. The same
// sets and options give byte-identical files.
func GenerateGroup(sets []*signatures.Set, opt GenOptions) (map[string][]byte, error) {
	sets = slices.Clone(sets)
	slices.SortStableFunc(sets, func(a, b *signatures.Set) int {
		if a == nil || b == nil {
			return 0
		}
		return cmp.Compare(a.Source.Rank, b.Source.Rank)
	})
	if err := CheckRanks(sets); err != nil {
		return nil, err
	}
	if opt.Source == "" {
		return nil, fmt.Errorf("bench: a tensor-parallel package regenerates from its bundle: GenOptions.Source must name it")
	}
	if strings.ContainsAny(opt.Source, " \t\n\"`") {
		return nil, fmt.Errorf("bench: source %q: a go:generate argument cannot hold spaces or quotes", opt.Source)
	}
	workload := GroupWorkload(sets[0].Source)
	if opt.Package == "" {
		opt.Package = PackageName(workload)
	}
	if !isIdent(opt.Package) {
		return nil, fmt.Errorf("bench: package name %q is not a Go identifier", opt.Package)
	}
	d := groupData{Package: opt.Package, Workload: workload, HasSpec: len(opt.Spec) > 0, Source: sets[0].Source,
		DefaultCache: replay.DefaultCacheMode.String(),
		Directive:    "//go:" + "generate go run github.com/kreplay/kreplay/cmd/kreplay gen -o . " + opt.Source}
	files := map[string][]byte{}
	for r, set := range sets {
		if err := checkSignatures(set); err != nil {
			return nil, fmt.Errorf("rank %d: %w", r, err)
		}
		var js bytes.Buffer
		if err := signatures.WriteSet(&js, set); err != nil {
			return nil, fmt.Errorf("rank %d: %w", r, err)
		}
		files[SetRankFile(r)] = js.Bytes()
		d.Ranks = append(d.Ranks, groupRank{Rank: r, Workload: Workload(set.Source), File: SetRankFile(r),
			Var: fmt.Sprintf("setRank%dJSON", r), Set: set, BusyNS: busyNS(set), Rows: genRows(set)})
	}
	if d.HasSpec {
		files[SpecFile] = opt.Spec
	}
	for name, tmpl := range map[string]*template.Template{DocFile: groupDocTmpl, ReplayFile: groupReplayTmpl} {
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

type groupData struct {
	Package, Workload, Directive string
	DefaultCache                 string
	Source                       signatures.Source // rank 0's
	HasSpec                      bool
	Ranks                        []groupRank
}

type groupRank struct {
	Rank      int
	Workload  string // Workload of the rank's set
	File, Var string // its set's file and the variable embedding it
	Set       *signatures.Set
	BusyNS    int64
	Rows      []genRow
}

var groupDocTmpl = template.Must(template.New(DocFile).Funcs(funcs).Parse(`// Code generated by kreplay gen; DO NOT EDIT.

// Package {{.Package}} benchmarks the tensor-parallel workload
// {{.Workload}}: {{len .Ranks}} ranks, one GPU each{{with .Source.GPU}} (traced on {{line .}}){{end}},
// imported from {{line .Source.File}} and its sibling traces.
{{- range .Ranks}}
// Rank {{.Rank}} ({{.File}}): {{len .Set.Signatures}} signatures, {{.Set.Links.Activities}} GPU activities, {{dur .BusyNS}} GPU busy.
{{- end}}
//
// On a machine with {{len .Ranks}} GPUs, from the module root:
//
//	go test -run '^$' -bench . -benchtime 1x -count 6 -v ./bench/{{.Package}} | tee {{.Package}}.bench
//	go run ./cmd/kreplay report -sets {{range $i, $r := .Ranks}}{{if $i}},{{end}}bench/{{$.Package}}/{{$r.File}}{{end}} {{.Package}}.bench
//
// BenchmarkReplay/workload={{.Workload}}_rankN/sig=ID prepares and
// measures a signature of rank N alone on the test binary's GPU (CUDA
// device 0) and reports its time per invocation as ns/op; the
// collectives, which need the other ranks, skip (kreplay predict of the
// bundle measures them across the GPUs).
// BenchmarkModel/workload={{.Workload}}_rankN/model runs the real
// inference of every rank at once, one process per rank on its GPU,
{{- if .HasSpec}}
// as spec.json, the workload spec, says,{{else}}
// as the workload's name says (no spec.json),{{end}} and reports rank N's
// wall time as ns/op and its GPU's energy as J/op, with the group's:
// group-ns, the slowest rank's ns/op, and group-J/op, every GPU's energy;
// when it cannot run, a line "kreplay BenchmarkModel/...: no model run:
// REASON" says why.
// BenchmarkTimeline/workload={{.Workload}}_rankN/timeline does not run:
// package replay has no multi-GPU timeline, and a line
// "kreplay BenchmarkTimeline/...: no group timeline: REASON" says so.
` + envDoc + `
//
// Regenerate with go generate.
package {{.Package}}

{{.Directive}}
`))

var groupReplayTmpl = template.Must(template.New(ReplayFile).Funcs(funcs).Parse(`// Code generated by kreplay gen; DO NOT EDIT.

package {{.Package}}

import (
	_ "embed"
	"testing"

	"github.com/kreplay/kreplay/bench"
	"github.com/kreplay/kreplay/signatures"
)

// workload is the tensor-parallel workload's name; its ranks' benchmark
// names add "_rankN" to it.
const workload = {{quote .Workload}}

// options configure the measurements (bench.Options: the zero value and
// the environment give the defaults); a TestMain may change them before
// the benchmarks run.
var options bench.Options
{{range .Ranks}}
// {{.Var}} is rank {{.Rank}}'s signature set.
//
//go:embed {{.File}}
var {{.Var}} []byte
{{end}}
{{- if .HasSpec}}
// specJSON is the workload spec BenchmarkModel runs.
//
//go:embed spec.json
var specJSON []byte
{{else}}
// specJSON is nil: the package was generated without a workload spec;
// BenchmarkModel runs the model the workload's name gives, if any.
var specJSON []byte
{{end}}
// sets returns the embedded signature sets, one per rank in rank order,
// each read once.
func sets(tb testing.TB) []*signatures.Set {
	return []*signatures.Set{
{{- range .Ranks}}
		bench.Load(tb, {{quote .Workload}}, {{.Var}}),
{{- end}}
	}
}

// ids lists each rank's signatures in its set's order (by traced time):
// tier, class, invocations, traced total and label.
var ids = [][]string{
{{- range .Ranks}}
	{ // rank {{.Rank}}
{{- range .Rows}}
		{{quote .ID}}, // {{.Comment}}
{{- end}}
	},
{{- end}}
}

// BenchmarkReplay measures every rank's signatures alone on the GPU
// (bench.GroupReplay): BenchmarkReplay/workload={{.Workload}}_rankN/sig=ID.
func BenchmarkReplay(b *testing.B) { bench.GroupReplay(b, sets(b), ids, options) }

// BenchmarkTimeline would replay every rank's timeline on its GPU with
// the collectives across the GPUs; it says why it does not
// (bench.GroupTimeline): BenchmarkTimeline/workload={{.Workload}}_rankN/timeline.
func BenchmarkTimeline(b *testing.B) { bench.GroupTimeline(b, sets(b)) }

// BenchmarkModel runs the real inference of every rank at once
// (bench.GroupModel): BenchmarkModel/workload={{.Workload}}_rankN/model.
func BenchmarkModel(b *testing.B) { bench.GroupModel(b, sets(b), specJSON) }

// TestGenerated checks that the embedded sets read back as the ranks of
// the workload, that ids are their signatures and every benchmark name
// is unique and parses with benchproc.
func TestGenerated(t *testing.T) { bench.CheckGroup(t, sets(t), workload, ids) }
`))
