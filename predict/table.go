package predict

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/signatures"
)

// Coverage summarises a suite against the trace, weighting each signature
// by its traced time.
type Coverage struct {
	// TracedNS is the traced time of the entries (parts included).
	TracedNS int64 `json:"traced_ns"`
	// ReplayedShare is the share of traced time whose signatures replayed.
	ReplayedShare float64 `json:"replayed_share"`
	// SameKernelShare is the share replayed by the very kernel traced
	// (of entries that were identified).
	SameKernelShare float64 `json:"same_kernel_share"`
	// WithinShare is the share whose replay median is within Tolerance of
	// the traced median.
	WithinShare float64 `json:"within_share"`
	Tolerance   float64 `json:"tolerance"`
	// ApproximateShare is the share replayed by a stand-in that moves the
	// op's bytes instead of computing it.
	ApproximateShare float64 `json:"approximate_share"`
	Errors           int     `json:"errors"`
}

// Cover computes the coverage of entries of the given tiers (all when none).
func Cover(entries []replay.Entry, tolerance float64, tiers ...signatures.Tier) Coverage {
	c := Coverage{Tolerance: tolerance}
	var replayed, same, identified, within, approx int64
	for _, e := range entries {
		if e.PartOf != "" || !inTiers(e.Tier, tiers) {
			continue
		}
		w := e.TracedMedianNS * int64(e.Count)
		c.TracedNS += w
		if e.Err != "" || e.Result == nil {
			c.Errors++
			continue
		}
		replayed += w
		if e.Result.Approximate != "" {
			approx += w
		}
		if e.SameKernel != nil {
			identified += w
			if *e.SameKernel {
				same += w
			}
		}
		if r := e.Ratio(); math.Abs(r-1) <= tolerance {
			within += w
		}
	}
	if c.TracedNS > 0 {
		c.ReplayedShare = float64(replayed) / float64(c.TracedNS)
		c.WithinShare = float64(within) / float64(c.TracedNS)
		c.ApproximateShare = float64(approx) / float64(c.TracedNS)
	}
	if identified > 0 {
		c.SameKernelShare = float64(same) / float64(identified)
	}
	return c
}

func inTiers(t signatures.Tier, tiers []signatures.Tier) bool {
	if len(tiers) == 0 {
		return true
	}
	for _, x := range tiers {
		if x == t {
			return true
		}
	}
	return false
}

// WriteTable prints one row per entry: signature, count, traced median,
// replay time (CUPTI kernel time where recorded), their ratio, the CUDA
// event time per invocation (which includes launch gaps), the confidence
// interval of the replay time (replay.Result.RelCI), the timed samples that
// overlapped NVML's throttling ("3/40 discarded", "12/15 kept" when too
// few others were left to discard them, "-" for none; see
// replay.Result.ThrottledSamples), and whether the replay ran the traced kernel;
// the path of a result interpolated within a signature family, not
// measured (replay.Entry.Interpolated), ends "(interpolated)".
func WriteTable(w io.Writer, entries []replay.Entry) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "id\ttier\tclass\tcount\ttraced_us\treplay_us\tratio\tevent_us\tci\tthrottled\tsame_kernel\tpath\tlabel")
	for _, e := range entries {
		same := "-"
		if e.SameKernel != nil {
			same = fmt.Sprint(*e.SameKernel)
		}
		switch {
		case e.PartOf != "":
			fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%.2f\t\t\t\t\t\t\tpart of %s\t%s\n", e.ID, e.Tier, e.Class, e.Count,
				float64(e.TracedMedianNS)/1e3, e.PartOf, e.Label)
		case e.Result == nil:
			fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%.2f\t\t\t\t\t\t\terror: %.80s\t%s\n", e.ID, e.Tier, e.Class, e.Count,
				float64(e.TracedMedianNS)/1e3, e.Err, e.Label)
		default:
			r := e.Result
			path := r.Path
			if r.Throttled && r.ThrottledSamples == 0 {
				path += " (throttled)"
			}
			if e.Interpolated != "" {
				path += " (interpolated)"
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%.2f\t%.2f\t%.3f\t%.2f\t%.1f%%\t%s\t%s\t%s\t%s\n", e.ID, e.Tier, e.Class, e.Count,
				float64(e.TracedMedianNS)/1e3, e.ReplayNS()/1e3, e.Ratio(), r.MedianNS/1e3, 100*r.RelCI, throttledCell(r), same, path, e.Label)
		}
	}
	return tw.Flush()
}

// throttledCell is WriteTable's throttled column for r.
func throttledCell(r *replay.Result) string {
	switch {
	case r.ThrottledSamples == 0:
		return "-"
	case r.ThrottledKept:
		return fmt.Sprintf("%d/%d kept", r.ThrottledSamples, r.TakenSamples())
	}
	return fmt.Sprintf("%d/%d discarded", r.ThrottledSamples, r.TakenSamples())
}

// TierCoverage is the coverage of one group of tiers, named as kreplay run
// prints it.
type TierCoverage struct {
	Name string
	Coverage
}

// CoverTiers computes the coverage of entries for tier 1, 2 and 3 alone,
// tiers 1 and 2 together and all tiers, leaving out groups with no traced
// time.
func CoverTiers(entries []replay.Entry, tolerance float64) []TierCoverage {
	var out []TierCoverage
	for _, t := range []struct {
		name  string
		tiers []signatures.Tier
	}{{"tier1", []signatures.Tier{1}}, {"tier2", []signatures.Tier{2}}, {"tier3", []signatures.Tier{3}}, {"tier1+2", []signatures.Tier{1, 2}}, {"all", nil}} {
		if c := Cover(entries, tolerance, t.tiers...); c.TracedNS > 0 {
			out = append(out, TierCoverage{t.name, c})
		}
	}
	return out
}

// WriteCoverage writes a line per group of tiers: traced time, the shares
// replayed, approximate, by the same kernel and within tolerance, errors.
func WriteCoverage(w io.Writer, cov []TierCoverage) error {
	for _, c := range cov {
		if _, err := fmt.Fprintf(w, "%-8s traced %.3f ms: replayed %.1f%% (approximate %.1f%%), same kernel %.1f%%, within ±%.0f%% %.1f%%, %d errors\n",
			c.Name, float64(c.TracedNS)/1e6, 100*c.ReplayedShare, 100*c.ApproximateShare, 100*c.SameKernelShare, 100*c.Tolerance, 100*c.WithinShare, c.Errors); err != nil {
			return err
		}
	}
	return nil
}
