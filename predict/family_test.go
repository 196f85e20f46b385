package predict

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"

	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/signatures"
)

// An interpolated entry is marked in the run table.
func TestWriteTableInterpolated(t *testing.T) {
	entries := []replay.Entry{
		{ID: "m", Tier: 3, Class: "cat", Count: 1, TracedMedianNS: 100, Result: &replay.Result{Path: "tier3", Stats: replay.Stats{MedianNS: 100}}},
		{ID: "i", Tier: 3, Class: "cat", Count: 1, TracedMedianNS: 100, Interpolated: "interpolated from 5 measured members",
			Result: &replay.Result{Path: "tier3", Stats: replay.Stats{MedianNS: 100}}},
	}
	var b bytes.Buffer
	if err := WriteTable(&b, entries); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(b.String(), "tier3 (interpolated)"); got != 1 || !regexp.MustCompile(`(?m)^i .*tier3 \(interpolated\)`).MatchString(b.String()) {
		t.Errorf("%d interpolated rows:\n%s", got, b.String())
	}
}

// The fidelity line of an interpolated signature says so; benchfmt reads
// the output's results as before (the line is not a result), and the
// report counts the interpolated signatures, their traced time and share,
// and says so in its text and its top table.
func TestFlowInterpolated(t *testing.T) {
	set := generateSet(t)
	fr := &FlowResult{Set: set, GPU: "g"}
	var want int
	var wantNS, total int64
	for i, s := range set.Signatures {
		total += s.TracedNS.Total
		if s.PartOf != "" {
			continue
		}
		e := replay.Entry{ID: s.ID, Tier: s.Tier, Count: s.Count, Result: &replay.Result{Stats: replay.Stats{MedianNS: float64(s.TracedNS.Median)}}}
		if i%3 == 1 {
			e.Interpolated = "interpolated from 5 measured members"
			want++
			wantNS += s.TracedNS.Total
		}
		fr.Entries = append(fr.Entries, e)
	}
	var buf bytes.Buffer
	if err := fr.WriteBench(&buf, "p"); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "; interpolated\n"); n != want {
		t.Errorf("%d fidelity lines say interpolated, want %d", n, want)
	}
	results := 0
	r := benchfmt.NewReader(bytes.NewReader(buf.Bytes()), "x.bench")
	for r.Scan() {
		if _, ok := r.Result().(*benchfmt.Result); ok {
			results++
		}
	}
	if results != len(fr.Entries) {
		t.Errorf("benchfmt read %d results, want %d", results, len(fr.Entries))
	}
	p, err := Report([]Input{{Name: "x.bench", Reader: &buf}}, []*signatures.Set{set}, ReportOptions{Top: 1000})
	if err != nil {
		t.Fatal(err)
	}
	wp := p.Workloads[0]
	if wp.Interpolated != want || wp.InterpolatedNS != wantNS || wp.InterpolatedShare != float64(wantNS)/float64(total) {
		t.Errorf("interpolated %d, %d ns, share %v; want %d, %d ns, %v", wp.Interpolated, wp.InterpolatedNS, wp.InterpolatedShare, want, wantNS, float64(wantNS)/float64(total))
	}
	marked := 0
	for _, s := range wp.Sigs {
		if s.Interpolated {
			marked++
		}
	}
	var text strings.Builder
	if err := p.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	line := fmt.Sprintf("%d signatures interpolated (%.1f%% of the traced time)", want, 100*wp.InterpolatedShare)
	if marked != want || !strings.Contains(text.String(), line) || strings.Count(text.String(), "  interpolated: ") != want {
		t.Errorf("%d signatures marked (want %d); report lacks %q or the top table's marks:\n%s", marked, want, line, text.String())
	}
}
