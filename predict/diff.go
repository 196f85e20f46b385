package predict

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"golang.org/x/perf/benchmath"

	"github.com/kreplay/kreplay/internal/errw"
	"github.com/kreplay/kreplay/internal/textfmt"
	"github.com/kreplay/kreplay/signatures"
)

// DiffOptions tune Diff.
type DiffOptions struct {
	// Alpha is the significance level (default 0.05, as benchstat's).
	Alpha float64
	// Confidence of the intervals (default 0.95).
	Confidence float64
}

func (o *DiffOptions) defaults() {
	if o.Alpha <= 0 || o.Alpha >= 1 {
		o.Alpha = 0.05
	}
	if o.Confidence <= 0 || o.Confidence >= 1 {
		o.Confidence = 0.95
	}
}

// Comparison is what Diff computes: per workload, the change of every
// signature's ns/op and of the predicted total between two outputs.
type Comparison struct {
	Alpha float64 `json:"alpha"`
	// Confidence is that of the intervals (DiffOptions.Confidence).
	Confidence float64         `json:"confidence"`
	Workloads  []*WorkloadDiff `json:"workloads"`
	Warnings   []string        `json:"warnings,omitempty"`
}

// WorkloadDiff is one workload's comparison.
type WorkloadDiff struct {
	Workload string `json:"workload"`
	// Sigs are the signatures with results in both, by the absolute
	// change of their predicted time (with a set), else by ID.
	Sigs []SigDiff `json:"signatures"`
	// Faster and Slower count the significant changes.
	Faster int `json:"faster"`
	Slower int `json:"slower"`
	// Geomean is the geometric mean of the new/old ratios of the
	// centers.
	Geomean float64 `json:"geomean"`
	// OnlyOld and OnlyNew list signatures with results in one output.
	OnlyOld []string `json:"only_old,omitempty"`
	OnlyNew []string `json:"only_new,omitempty"`
	// Total is the change of the predicted GPU time, over the signatures
	// measured in both; nil without the workload's set.
	Total *TotalDiff `json:"total,omitempty"`
	// Config lists the configuration lines (ConfigKeys) that differ
	// between the two outputs, a line one of them lacks as "(none)";
	// ConfigNote says why they could not be compared, when an output has
	// none.
	Config     []Cause `json:"config,omitempty"`
	ConfigNote string  `json:"config_note,omitempty"`
}

// SigDiff is the change of one signature's ns/op.
type SigDiff struct {
	ID    string `json:"id"`
	Label string `json:"label,omitempty"`
	// Count is its invocations in the trace (0 without the set).
	Count int     `json:"count,omitempty"`
	Old   Summary `json:"old"`
	New   Summary `json:"new"`
	// Change is New.Center / Old.Center - 1.
	Change float64 `json:"change"`
	// P is the Mann-Whitney U test's p-value (benchmath.AssumeNothing,
	// as benchstat); Significant is P < Alpha. Delta is the change as
	// benchstat prints it: "+12.34%", or "~" when not significant.
	// Never is set when the run counts cannot give a p-value under Alpha
	// whatever the values (see MinP).
	P           float64  `json:"p"`
	Significant bool     `json:"significant"`
	Never       bool     `json:"never_significant,omitempty"`
	Delta       string   `json:"delta"`
	Warnings    []string `json:"warnings,omitempty"`
	// Causes attributes a significant change: what the two outputs record
	// differently for the signature (see Cause); empty when they record
	// no difference, and for changes that are not significant.
	Causes []Cause `json:"causes,omitempty"`
}

// MinP is the smallest two-sided p-value the Mann-Whitney U test can give
// samples of n1 and n2 values: every value of one below every value of
// the other, 2 / C(n1+n2, n1) (1 when either is empty). With 1 + 1 runs
// it is 1, with 3 + 3 runs 0.1: no change is significant at 0.05.
func MinP(n1, n2 int) float64 {
	if n1 <= 0 || n2 <= 0 {
		return 1
	}
	c := 1.0 // C(n1+n2, n1), built up as a product
	for i := 1; i <= n1; i++ {
		c = c * float64(n2+i) / float64(i)
	}
	return min(1, 2/c)
}

// TotalDiff is the change of a workload's predicted GPU time, sum(t_i x
// n_i) over the signatures in both outputs. Old and New carry the bounds
// summed as in Report. The test of the change compares per-run totals:
// total_r = sum(x_i,r x n_i), x_i,r the r-th value of signature i, for r
// up to the fewest runs any of them has; with independent signatures any
// such pairing of runs is a sample of the total's distribution.
// ChangeCI is the interval of the change at the comparison's confidence,
// as relative changes (new/old - 1), from the same per-run totals: the
// Hodges-Lehmann estimate of their ratio (the median ratio of an old and
// a new total over every pair) with its distribution-free interval, the
// ratios the Mann-Whitney U test would not reject (see ratioInterval).
// With too few runs for the confidence (3 and 3 at 95%) ChangeRange is
// set and the bounds are the smallest and largest ratio of a pair.
type TotalDiff struct {
	Signatures  int      `json:"signatures"`
	Old         Interval `json:"old_ns"`
	New         Interval `json:"new_ns"`
	Change      float64  `json:"change"`
	ChangeCI    Interval `json:"change_ci"`
	ChangeRange bool     `json:"change_range,omitempty"`
	Runs        [2]int   `json:"runs"`
	P           float64  `json:"p"`
	Significant bool     `json:"significant"`
	Never       bool     `json:"never_significant,omitempty"`
	Delta       string   `json:"delta"`
	Warnings    []string `json:"warnings,omitempty"`
}

// Diff compares two benchmark outputs signature by signature, as benchstat
// does (benchmath.AssumeNothing.Compare, alpha 0.05 by default), and the
// predicted total of each workload that has a set. Signatures that are
// part of another are left out of the total (see Report).
func Diff(before, after []Input, sets []*signatures.Set, opt DiffOptions) (*Comparison, error) {
	ro, err := ReadResults(before)
	if err != nil {
		return nil, err
	}
	rn, err := ReadResults(after)
	if err != nil {
		return nil, err
	}
	return Compare(ro, rn, sets, opt)
}

// Compare compares results already read; see Diff.
func Compare(before, after *Results, sets []*signatures.Set, opt DiffOptions) (*Comparison, error) {
	opt.defaults()
	bySet, err := setsByWorkload(sets)
	if err != nil {
		return nil, err
	}
	c := &Comparison{Alpha: opt.Alpha, Confidence: opt.Confidence}
	for _, s := range before.Warnings {
		c.Warnings = append(c.Warnings, "old: "+s)
	}
	for _, s := range after.Warnings {
		c.Warnings = append(c.Warnings, "new: "+s)
	}
	names := map[string]bool{}
	for _, w := range before.Workloads {
		names[w.Name] = true
	}
	for _, w := range after.Workloads {
		names[w.Name] = true
	}
	for _, name := range slices.Sorted(maps.Keys(names)) {
		wo, wn := before.Workload(name), after.Workload(name)
		if wo == nil || wn == nil {
			which := "old"
			if wo == nil {
				which = "new"
			}
			c.Warnings = append(c.Warnings, fmt.Sprintf("workload %s has results only in the %s output", name, which))
			continue
		}
		c.Workloads = append(c.Workloads, compareWorkload(wo, wn, bySet[name], opt))
	}
	return c, nil
}

func compareWorkload(wo, wn *WorkloadResults, set *signatures.Set, opt DiffOptions) *WorkloadDiff {
	wd := &WorkloadDiff{Workload: wo.Name}
	wd.Config, wd.ConfigNote = diffConfig(wo, wn)
	th := &benchmath.Thresholds{CompareAlpha: opt.Alpha}
	var isPart map[string]bool
	if set != nil {
		_, _, isPart = tracedWithParts(set)
		wd.Total = &TotalDiff{}
	}
	var logSum float64
	var common []string
	for _, id := range slices.Sorted(maps.Keys(wo.Sigs)) {
		so, sn := wo.Sigs[id], wn.Sigs[id]
		if sn == nil || so.Runs() == 0 || sn.Runs() == 0 {
			if so.Runs() > 0 {
				wd.OnlyOld = append(wd.OnlyOld, id)
			}
			continue
		}
		common = append(common, id)
		d := SigDiff{ID: id, Old: Summarize(so.NS, opt.Confidence), New: Summarize(sn.NS, opt.Confidence)}
		cmpr := benchmath.AssumeNothing.Compare(benchmath.NewSample(slices.Clone(so.NS), th), benchmath.NewSample(slices.Clone(sn.NS), th))
		d.Never = MinP(len(so.NS), len(sn.NS)) >= opt.Alpha
		// Where no ordering of the runs can reach alpha (Never), a smaller
		// p is an artefact of ties (benchmath gave p=0.000 for 6 runs
		// against 1 run equal to them): not a significant change.
		d.P, d.Significant = cmpr.P, cmpr.P < cmpr.Alpha && !d.Never
		d.Delta = cmpr.FormatDelta(d.Old.Center, d.New.Center)
		for _, w := range cmpr.Warnings {
			d.Warnings = append(d.Warnings, w.Error())
		}
		if d.Old.Center > 0 {
			d.Change = d.New.Center/d.Old.Center - 1
		}
		if d.Old.Center > 0 && d.New.Center > 0 {
			logSum += math.Log(d.New.Center / d.Old.Center)
		}
		if d.Significant {
			if d.Change < 0 {
				wd.Faster++
			} else if d.Change > 0 {
				wd.Slower++
			}
			d.Causes = attribute(id, wo, wn, set, wd.Config)
		}
		if set != nil {
			if s := set.ByID(id); s != nil {
				d.Label, d.Count = s.Label, s.Count
			}
		}
		wd.Sigs = append(wd.Sigs, d)
	}
	for _, id := range slices.Sorted(maps.Keys(wn.Sigs)) {
		if wn.Sigs[id].Runs() > 0 && wo.Sigs[id].Runs() == 0 {
			wd.OnlyNew = append(wd.OnlyNew, id)
		}
	}
	if len(wd.Sigs) > 0 {
		wd.Geomean = math.Exp(logSum / float64(len(wd.Sigs)))
	}
	if set != nil {
		slices.SortStableFunc(wd.Sigs, func(a, b SigDiff) int {
			da := math.Abs(a.New.Center-a.Old.Center) * float64(a.Count)
			db := math.Abs(b.New.Center-b.Old.Center) * float64(b.Count)
			return cmp.Compare(db, da)
		})
		wd.Total = totalDiff(wo, wn, set, common, isPart, th, opt)
	}
	return wd
}

func totalDiff(wo, wn *WorkloadResults, set *signatures.Set, common []string, isPart map[string]bool, th *benchmath.Thresholds, opt DiffOptions) *TotalDiff {
	t := &TotalDiff{}
	var ids []string
	var counts []float64
	for _, id := range common {
		s := set.ByID(id)
		if s == nil || isPart[id] {
			continue
		}
		ids = append(ids, id)
		counts = append(counts, float64(s.Count))
	}
	t.Signatures = len(ids)
	if len(ids) == 0 {
		t.Delta = "~"
		t.P = 1
		return t
	}
	runs := [2]int{math.MaxInt, math.MaxInt}
	for i, id := range ids {
		so, sn := wo.Sigs[id], wn.Sigs[id]
		t.Old.add(Summarize(so.NS, opt.Confidence).Interval.scale(counts[i]))
		t.New.add(Summarize(sn.NS, opt.Confidence).Interval.scale(counts[i]))
		runs[0], runs[1] = min(runs[0], so.Runs()), min(runs[1], sn.Runs())
	}
	t.Runs = runs
	totals := func(w *WorkloadResults, n int) []float64 {
		out := make([]float64, n)
		for r := range out {
			for i, id := range ids {
				out[r] += w.Sigs[id].NS[r] * counts[i]
			}
		}
		return out
	}
	to, tn := totals(wo, runs[0]), totals(wn, runs[1])
	if iv, rng, ok := ratioInterval(to, tn, opt.Confidence); ok {
		t.ChangeCI, t.ChangeRange = iv, rng
	}
	cmpr := benchmath.AssumeNothing.Compare(benchmath.NewSample(to, th), benchmath.NewSample(tn, th))
	t.Never = MinP(runs[0], runs[1]) >= opt.Alpha
	t.P, t.Significant = cmpr.P, cmpr.P < cmpr.Alpha && !t.Never
	t.Delta = cmpr.FormatDelta(t.Old.Center, t.New.Center)
	for _, w := range cmpr.Warnings {
		t.Warnings = append(t.Warnings, w.Error())
	}
	if t.Old.Center > 0 {
		t.Change = t.New.Center/t.Old.Center - 1
	}
	return t
}

// WriteText prints the comparison: per workload the predicted totals with
// the interval of their change, the configuration lines that differ, the
// significant changes (all signatures with all set) with what the outputs
// record differently for each, and what is in one output only.
func (c *Comparison) WriteText(w io.Writer, all bool) error {
	ew := &errw.Writer{W: w}
	for i, wd := range c.Workloads {
		if i > 0 {
			fmt.Fprintln(ew)
		}
		wd.writeText(ew, c.Alpha, c.Confidence, all)
	}
	ew.Warnings(c.Warnings)
	return ew.Err
}

func (wd *WorkloadDiff) writeText(w io.Writer, alpha, conf float64, all bool) {
	fmt.Fprintf(w, "workload %s: %d signatures in both, %d faster, %d slower (p < %.2g), geomean x%.3f\n",
		wd.Workload, len(wd.Sigs), wd.Faster, wd.Slower, alpha, wd.Geomean)
	if t := wd.Total; t != nil {
		fmt.Fprintf(w, "predicted GPU time over %d signatures: %s [%s, %s] -> %s [%s, %s]: %s %s (p=%.3f, runs %d and %d%s)\n",
			t.Signatures, textfmt.NS(t.Old.Center), textfmt.NS(t.Old.Lo), textfmt.NS(t.Old.Hi), textfmt.NS(t.New.Center), textfmt.NS(t.New.Lo), textfmt.NS(t.New.Hi),
			t.Delta, changeInterval(t, conf), t.P, t.Runs[0], t.Runs[1], neverText(t.Never, t.Runs[0], t.Runs[1], alpha))
		for _, s := range t.Warnings {
			fmt.Fprintf(w, "  total: %s\n", s)
		}
	} else {
		fmt.Fprintf(w, "no signature set for %s: no predicted total (pass -sets)\n", wd.Workload)
	}
	for _, c := range wd.Config {
		fmt.Fprintf(w, "configuration %s: %s -> %s\n", c.What, c.Old, c.New)
	}
	if wd.ConfigNote != "" {
		fmt.Fprintf(w, "configuration: %s\n", wd.ConfigNote)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "id\told/op\t±\tnew/op\t±\tdelta\tp\tcount\tlabel\tattribution")
	unchanged, never, listed := 0, 0, 0
	for _, d := range wd.Sigs {
		if d.Never {
			never++
		}
		if !d.Significant && !all {
			unchanged++
			continue
		}
		attr := ""
		if d.Significant {
			attr = causesText(d.Causes)
			listed++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\tp=%.3f n=%d+%d%s\t%d\t%s\t%s\n", d.ID, textfmt.NS(d.Old.Center), halfWidth(d.Old),
			textfmt.NS(d.New.Center), halfWidth(d.New), d.Delta, d.P, d.Old.Runs, d.New.Runs, neverText(d.Never, d.Old.Runs, d.New.Runs, alpha), d.Count, truncate(d.Label, 50), attr)
	}
	tw.Flush()
	if listed > 0 {
		fmt.Fprintln(w, "attribution: what the outputs record differently: kernel, path and throttling (fidelity lines), configuration lines that bear on the replay; -: nothing")
	}
	if unchanged > 0 {
		fmt.Fprintf(w, "%d signatures without a significant change (~; -all lists them)\n", unchanged)
	}
	if never > 0 {
		fmt.Fprintf(w, "%d signatures can never be significant at p < %.2g with their run counts: run each side more times (go test -count)\n", never, alpha)
	}
	for _, only := range []struct {
		side string
		ids  []string
	}{{"old", wd.OnlyOld}, {"new", wd.OnlyNew}} {
		if len(only.ids) > 0 {
			fmt.Fprintf(w, "only in the %s output: %s\n", only.side, strings.Join(only.ids, " "))
		}
	}
}

// changeInterval writes the interval of a total's change: "[-1.20%,
// +3.40%] at 95%", or the range of the run pairs' ratios when the runs are
// too few for the confidence.
func changeInterval(t *TotalDiff, conf float64) string {
	if t.Signatures == 0 || t.Runs[0] == 0 || t.Runs[1] == 0 {
		return "(no interval)"
	}
	iv := fmt.Sprintf("[%+.2f%%, %+.2f%%]", 100*t.ChangeCI.Lo, 100*t.ChangeCI.Hi)
	if t.ChangeRange {
		return iv + fmt.Sprintf(" the range of the runs' ratios, too few runs for a %.0f%% interval", 100*conf)
	}
	return iv + fmt.Sprintf(" at %.0f%%", 100*conf)
}

// neverText marks a p-value the run counts could not bring under alpha.
func neverText(never bool, n1, n2 int, alpha float64) string {
	if !never {
		return ""
	}
	return fmt.Sprintf(", never < %.2g: the smallest p with %d+%d runs is %.3f", alpha, n1, n2, MinP(n1, n2))
}
