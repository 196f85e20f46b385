package predict

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/bench"
	"github.com/kreplay/kreplay/internal/traces"
	"github.com/kreplay/kreplay/internal/traces/tracetest"
	"github.com/kreplay/kreplay/signatures"
)

// The tests of Report and Diff run on the REAL signature sets of the two
// BLOOM-560M traces (the committed ../bench/bloom_560m_*/set.json, imported
// from internal/traces) with SYNTHETIC benchmark numbers: no GPU run has
// been recorded yet, so the ns/op, J/op and W values below are made up
// from the traced durations. Only the model's wall time and energy come
// from a measurement (the measured.json of the embedded bundles,
// internal/traces). A recorded output dropped into testdata/*.bench is
// tested by TestRecordedOutput.

// generatedSet reads the committed set of the generated package of
// tracetest.GeneratedSets[i] under ../bench (read once; the tests must
// not modify it).
func generatedSet(t testing.TB, i int) *signatures.Set {
	t.Helper()
	return tracetest.ReadSet(t, filepath.Join("..", "bench", tracetest.GeneratedSets[i].Dir, bench.SetFile))
}

func prefillSet(t testing.TB) *signatures.Set  { return generatedSet(t, 0) }
func generateSet(t testing.TB) *signatures.Set { return generatedSet(t, 1) }

// synth describes SYNTHETIC benchmark output for a real set.
type synth struct {
	// runs is the number of -count runs.
	runs int
	// jitter[r] scales run r's values by 1 + jitter[r] (default 0).
	jitter []float64
	// factor scales a signature's traced per-call time into its
	// synthetic replay time (default 1).
	factor func(s *signatures.Signature) float64
	// skip leaves signatures out of the output; skipLog prints a
	// "--- SKIP" with this reason for them, as go test -v does.
	skip    func(s *signatures.Signature) bool
	skipLog string
	// parts also prints results for signatures that are part of another
	// (which a real run skips).
	parts bool
	// joules gives J/op (and W = J/op / s/op) when set.
	joules func(s *signatures.Signature) float64
	// model prints a model benchmark: wall ns/op, J/op and idle-W (zero
	// values are left out).
	modelNS, modelJ, idleW float64
	// modelMeanNS adds mean-ns to the model benchmark (its ns/op is then
	// the median span).
	modelMeanNS float64
	// procs is the GOMAXPROCS suffix (0: none).
	procs int
	// config are configuration lines ("key: value") after the header.
	config []string
}

// perCall is a signature's traced time per call with its parts', as
// Report computes it, for checking the synthetic numbers.
func perCall(set *signatures.Set, s *signatures.Signature) float64 {
	v := float64(s.TracedNS.Median)
	for _, p := range set.Signatures {
		if p.PartOf == s.ID && p != s {
			v += float64(p.TracedNS.Median) * float64(p.Count) / float64(max(s.Count, 1))
		}
	}
	return v
}

// synthNS is the synthetic ns/op of a signature in run r.
func (o synth) synthNS(set *signatures.Set, s *signatures.Signature, r int) float64 {
	v := perCall(set, s)
	if o.factor != nil {
		v *= o.factor(s)
	}
	if r < len(o.jitter) {
		v *= 1 + o.jitter[r]
	}
	return v
}

// output renders the SYNTHETIC output as go test -bench -v prints it:
// every signature's runs one after the other, as -count does.
func (o synth) output(set *signatures.Set) string {
	var b strings.Builder
	w := bench.Workload(set.Source)
	fmt.Fprintf(&b, "goos: linux\ngoarch: amd64\npkg: github.com/kreplay/kreplay/bench/%s\ncpu: synthetic\n", bench.PackageName(w))
	for _, c := range o.config {
		b.WriteString(c + "\n")
	}
	suffix := ""
	if o.procs > 0 {
		suffix = fmt.Sprintf("-%d", o.procs)
	}
	for _, s := range set.Signatures {
		name := "Benchmark" + bench.ReplayName + "/" + bench.SignatureName(w, s.ID)
		if (s.PartOf != "" && !o.parts) || (o.skip != nil && o.skip(s)) {
			if o.skipLog != "" {
				fmt.Fprintf(&b, "%s\n    replay_test.go:79: %s\n--- SKIP: %s\n", name, o.skipLog, name)
			}
			continue
		}
		for r := 0; r < o.runs; r++ {
			ns := o.synthNS(set, s, r)
			fmt.Fprintf(&b, "%s\n%s%s \t       1\t%.6f ns/op", name, name, suffix, ns)
			if o.joules != nil {
				j := o.joules(s)
				fmt.Fprintf(&b, "\t%g J/op\t%g W", j, j/(ns/1e9))
			}
			b.WriteString("\n")
		}
	}
	if o.modelNS > 0 {
		for r := 0; r < max(o.runs, 1); r++ {
			fmt.Fprintf(&b, "Benchmark%s/%s=%s/model%s \t       1\t%.6f ns/op", bench.ModelName, bench.WorkloadKey, w, suffix, o.modelNS)
			if o.modelMeanNS > 0 {
				fmt.Fprintf(&b, "\t%g %s", o.modelMeanNS, bench.UnitMeanNS)
			}
			if o.modelJ > 0 {
				fmt.Fprintf(&b, "\t%g J/op", o.modelJ)
			}
			if o.idleW > 0 {
				fmt.Fprintf(&b, "\t%g idle-W", o.idleW)
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("PASS\nok  \tgithub.com/kreplay/kreplay/bench/x\t1.0s\n")
	return b.String()
}

func input(name, text string) Input { return Input{Name: name, Reader: strings.NewReader(text)} }

// measured is the model's real wall time and energy per inference from
// the measured.json of the workload's embedded bundle (internal/traces).
type measured struct {
	WallS, EnergyJ float64
}

func measuredRun(t testing.TB, workload string) measured {
	t.Helper()
	data, err := traces.ReadFile("h100_" + workload + "/measured.json")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		H100 struct {
			Runs map[string]struct {
				Wall   float64 `json:"wall_s_per_iter"`
				Energy float64 `json:"energy_j_per_iter"`
			} `json:"runs"`
		} `json:"h100"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	r, ok := m.H100.Runs[workload]
	if !ok {
		t.Fatalf("measured.json has no h100 run %s", workload)
	}
	return measured{r.Wall, r.Energy}
}

// jitter6 are six runs' deviations: with six runs benchmath's 95%
// interval of the median is the sample's range (confidence 0.969).
var jitter6 = []float64{-0.02, 0.01, 0, 0.03, -0.01, 0.02}
