package bench

import (
	"bytes"
	"go/format"
	"go/parser"
	"go/token"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/traces"
	"github.com/kreplay/kreplay/signatures"
	"github.com/kreplay/kreplay/workload"
)

func TestCheckRanks(t *testing.T) {
	ok := rankSets("w", 2)
	swapped := []*signatures.Set{ok[1], ok[0]}
	other := rankSets("w", 2)
	other[1].Source.Workload = "v"
	world := rankSets("w", 2)
	world[1].Source.WorldSize = 4
	for _, tc := range []struct {
		name string
		sets []*signatures.Set
		want string
	}{
		{"ranks in order", ok, ""},
		{"one", rankSets("w", 1), "2 ranks or more"},
		{"out of order", swapped, "is rank 1 of 2, want rank 0 of 2"},
		{"two workloads", other, `rank 1's workload is "v"`},
		{"other world", world, "is rank 1 of 4"},
		{"nil set", []*signatures.Set{ok[0], nil}, "rank 1 has no signature set"},
	} {
		err := CheckRanks(tc.sets)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}

// tpBundle is the embedded tensor-parallel bundle: its ranks' sets, in
// rank order, and its spec.
func tpBundle(t testing.TB) ([]*signatures.Set, []byte) {
	t.Helper()
	const name = "2xh200_llama-7b-tp2_prefill"
	fsys, err := traces.Bundle(name)
	if err != nil {
		t.Fatal(err)
	}
	b, err := workload.OpenBundle(fsys, "embedded:"+name)
	if err != nil {
		t.Fatal(err)
	}
	sets, err := b.Sets()
	if err != nil {
		t.Fatal(err)
	}
	spec, err := b.SpecJSON()
	if err != nil {
		t.Fatal(err)
	}
	return sets, spec
}

// A tensor-parallel package: a set per rank, embedded, the spec, and the
// group's benchmarks; the same files from the ranks in any order, gofmt'ed,
// whose sets read back as the ranks of the workload with the ids listed.
func TestGenerateGroup(t *testing.T) {
	sets, spec := tpBundle(t)
	opt := GenOptions{Source: "embedded:2xh200_llama-7b-tp2_prefill", Spec: spec}
	files, err := GenerateGroup(sets, opt)
	if err != nil {
		t.Fatal(err)
	}
	again, err := GenerateGroup([]*signatures.Set{sets[1], sets[0]}, opt)
	if err != nil {
		t.Fatal(err)
	}
	names := slices.Sorted(maps.Keys(files))
	if want := []string{DocFile, ReplayFile, SetRankFile(0), SetRankFile(1), SpecFile}; !slices.Equal(names, want) {
		t.Fatalf("files %v, want %v", names, want)
	}
	for _, name := range names {
		if !bytes.Equal(files[name], again[name]) {
			t.Errorf("%s differs between generations", name)
		}
		if strings.HasSuffix(name, ".go") {
			if src, err := format.Source(files[name]); err != nil || !bytes.Equal(src, files[name]) {
				t.Errorf("%s is not gofmt'ed (%v)", name, err)
			}
		}
	}
	if !bytes.Equal(files[SpecFile], spec) {
		t.Errorf("spec.json is not the bundle's")
	}
	fset := token.NewFileSet()
	doc, err := parser.ParseFile(fset, DocFile, files[DocFile], parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"tensor-parallel workload\nllama-7b-tp2_prefill: 2 ranks", "Rank 1 (set.rank1.json):",
		"-sets bench/llama_7b_tp2_prefill/set.rank0.json,bench/llama_7b_tp2_prefill/set.rank1.json llama_7b_tp2_prefill.bench",
		"no group timeline", "as spec.json, the workload spec, says"} {
		if doc.Name.Name != "llama_7b_tp2_prefill" || !strings.Contains(doc.Doc.Text(), want) {
			t.Errorf("package %s: doc lacks %q:\n%s", doc.Name.Name, want, doc.Doc.Text())
		}
	}
	if !bytes.Contains(files[DocFile], []byte("\n//go:generate go run github.com/kreplay/kreplay/cmd/kreplay gen -o . embedded:2xh200_llama-7b-tp2_prefill\n")) {
		t.Errorf("no go:generate directive:\n%s", files[DocFile])
	}
	funcs := declaredFuncs(t, fset, ReplayFile, files[ReplayFile])
	if !slices.Equal(funcs, []string{"sets", "BenchmarkReplay", "BenchmarkTimeline", "BenchmarkModel", "TestGenerated"}) {
		t.Errorf("functions %v", funcs)
	}
	src := string(files[ReplayFile])
	for _, want := range []string{`const workload = "llama-7b-tp2_prefill"`, "//go:embed set.rank0.json\nvar setRank0JSON []byte",
		"//go:embed set.rank1.json\nvar setRank1JSON []byte", "//go:embed spec.json\nvar specJSON []byte",
		`bench.Load(tb, "llama-7b-tp2_prefill_rank1", setRank1JSON)`, "bench.GroupReplay(b, sets(b), ids, options)",
		"bench.GroupTimeline(b, sets(b))", "bench.GroupModel(b, sets(b), specJSON)", "bench.CheckGroup(t, sets(t), workload, ids)"} {
		if !strings.Contains(src, want) {
			t.Errorf("replay_test.go lacks %q", want)
		}
	}
	var back []*signatures.Set
	var ids [][]string
	for r := range sets {
		s, err := signatures.ReadSet(bytes.NewReader(files[SetRankFile(r)]), SetRankFile(r))
		if err != nil {
			t.Fatal(err)
		}
		back, ids = append(back, s), append(ids, idsOf(s))
	}
	if err := checkGroup(back, "llama-7b-tp2_prefill", ids); err != nil {
		t.Error(err)
	}
	// Each rank's signatures are listed in the package once per rank
	// that has them.
	for _, s := range back[1].Signatures {
		n := 1
		if back[0].ByID(s.ID) != nil {
			n = 2
		}
		if c := strings.Count(src, `"`+s.ID+`", //`); c != n {
			t.Errorf("signature %s is listed %d times, want %d", s.ID, c, n)
		}
	}
	// Without a spec, specJSON is nil and spec.json is not written.
	files, err = GenerateGroup(sets, GenOptions{Source: opt.Source})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := files[SpecFile]; ok || strings.Contains(string(files[ReplayFile]), "//go:embed spec.json") {
		t.Errorf("without a spec: spec.json written or embedded")
	}
}

func TestGenerateGroupErrors(t *testing.T) {
	sets, _ := tpBundle(t)
	empty := *sets[1]
	empty.Signatures = nil
	twice := *sets[1]
	twice.Source.Rank = 0
	for _, tc := range []struct {
		name string
		sets []*signatures.Set
		opt  GenOptions
		want string
	}{
		{"one rank", sets[:1], GenOptions{Source: "b"}, "2 ranks or more"},
		{"rank twice", []*signatures.Set{sets[0], &twice}, GenOptions{Source: "b"}, "is rank 0 of 2, want rank 1 of 2"},
		{"no source", sets, GenOptions{}, "GenOptions.Source must name it"},
		{"bad source", sets, GenOptions{Source: "a b"}, "go:generate argument"},
		{"bad package", sets, GenOptions{Source: "b", Package: "9x"}, "not a Go identifier"},
		{"no signatures", []*signatures.Set{sets[0], &empty}, GenOptions{Source: "b"}, "rank 1: bench: set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := GenerateGroup(tc.sets, tc.opt)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// A tensor-parallel package's test fails on sets or ids that are not
// what it was generated for.
func TestCheckGroup(t *testing.T) {
	sets, _ := tpBundle(t)
	ids := [][]string{idsOf(sets[0]), idsOf(sets[1])}
	reordered := [][]string{ids[0], append([]string{ids[1][1], ids[1][0]}, ids[1][2:]...)}
	for _, tc := range []struct {
		name     string
		sets     []*signatures.Set
		workload string
		ids      [][]string
		want     string
	}{
		{"as generated", sets, "llama-7b-tp2_prefill", ids, ""},
		{"other workload", sets, "llama-7b-tp2_prefill_rank0", ids, "generated for"},
		{"ids of one rank", sets, "llama-7b-tp2_prefill", ids[:1], "ids of 1 ranks for 2 sets"},
		{"reordered", sets, "llama-7b-tp2_prefill", reordered, "rank 1: ids[0]"},
		{"out of order", []*signatures.Set{sets[1], sets[0]}, "llama-7b-tp2_prefill", ids, "want rank 0 of 2"},
	} {
		err := checkGroup(tc.sets, tc.workload, tc.ids)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}
