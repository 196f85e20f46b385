package signatures

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kreplay/kreplay/internal/errw"
)

// Total is the traced work of a group of signatures.
type Total struct {
	Tier       Tier    `json:"tier"`
	Class      Class   `json:"class,omitempty"`
	Signatures int     `json:"signatures"`
	Count      int     `json:"count"`
	TracedNS   int64   `json:"traced_ns"`
	Share      float64 `json:"share"`
}

// PathTotal totals the signatures that replay by one path (captured
// binary, vendor library, kreplay's own kernel, stand-in, unreplayable,
// part of another).
type PathTotal struct {
	Path       string  `json:"path"`
	Signatures int     `json:"signatures"`
	TracedNS   int64   `json:"traced_ns"`
	Share      float64 `json:"share"`
}

// Inspection is what `kreplay inspect` reports for one set.
type Inspection struct {
	Source  Source          `json:"source"`
	Summary []DeviceSummary `json:"timeline_summary"`
	Links   LinkStats       `json:"links"`
	Tiers   []Total         `json:"tiers"`
	Classes []Total         `json:"classes"`
	// Unreplayable counts signatures whose parameters could not be derived.
	Unreplayable int `json:"unreplayable"`
	// Graph totals the signatures whose kernels CUDA graphs ran
	// (Signature.Graph); zero when none did.
	Graph Total        `json:"graph,omitzero"`
	Top   []*Signature `json:"top"`
	// Paths, when planned (replay.PlanPaths), total the signatures by the
	// path each will replay by; PathOf gives each signature's, with why.
	Paths  []PathTotal       `json:"paths,omitempty"`
	PathOf map[string]string `json:"path_of,omitempty"`
	// Communication splits this rank's traced collective time into
	// transfer and waiting for other ranks, when the other ranks' traces
	// were inspected too (see PairCollectives).
	Communication *CommSummary `json:"communication,omitempty"`
}

// Inspect summarises a set: totals by tier and by class, and the top
// signatures by traced time.
func Inspect(s *Set, top int) *Inspection {
	in := &Inspection{Source: s.Source, Summary: s.Summary, Links: s.Links}
	var all int64
	tiers := map[Tier]*Total{}
	classes := map[[2]string]*Total{}
	for _, sig := range s.Signatures {
		all += sig.TracedNS.Total
		t := tiers[sig.Tier]
		if t == nil {
			t = &Total{Tier: sig.Tier}
			tiers[sig.Tier] = t
		}
		k := [2]string{fmt.Sprint(sig.Tier), string(sig.Class)}
		c := classes[k]
		if c == nil {
			c = &Total{Tier: sig.Tier, Class: sig.Class}
			classes[k] = c
		}
		for _, x := range []*Total{t, c} {
			x.Signatures++
			x.Count += sig.Count
			x.TracedNS += sig.TracedNS.Total
		}
		if sig.Unreplayable != "" {
			in.Unreplayable++
		}
		if sig.Graph {
			in.Graph.Signatures++
			in.Graph.Count += sig.Count
			in.Graph.TracedNS += sig.TracedNS.Total
		}
	}
	if all > 0 {
		in.Graph.Share = float64(in.Graph.TracedNS) / float64(all)
	}
	for _, t := range tiers {
		in.Tiers = append(in.Tiers, *t)
	}
	for _, c := range classes {
		in.Classes = append(in.Classes, *c)
	}
	for _, list := range [][]Total{in.Tiers, in.Classes} {
		for i := range list {
			if all > 0 {
				list[i].Share = float64(list[i].TracedNS) / float64(all)
			}
		}
	}
	slices.SortFunc(in.Tiers, func(a, b Total) int { return cmp.Compare(a.Tier, b.Tier) })
	slices.SortFunc(in.Classes, func(a, b Total) int {
		return cmp.Or(cmp.Compare(b.TracedNS, a.TracedNS), cmp.Compare(a.Tier, b.Tier), cmp.Compare(a.Class, b.Class))
	})
	top = min(max(top, 0), len(s.Signatures))
	in.Top = s.Signatures[:top] // the set is sorted by traced time
	return in
}

// WriteText prints an inspection as aligned text.
func (in *Inspection) WriteText(w io.Writer) error {
	ew := &errw.Writer{W: w}
	src := in.Source
	fmt.Fprintf(ew, "%s: workload %s", src.File, src.Workload)
	if src.WorldSize > 1 {
		fmt.Fprintf(ew, ", rank %d of %d", src.Rank, src.WorldSize)
	}
	if g := src.GPU(); g != "" {
		fmt.Fprintf(ew, ", %s", g)
	}
	if src.CUDADriver != "" {
		fmt.Fprintf(ew, ", CUDA driver %s runtime %s", src.CUDADriver, src.CUDARuntime)
	}
	fmt.Fprintf(ew, "\n%d events, %.1f MB; %d GPU activities: %d linked by External id, %d by correlation, %d unlinked\n",
		src.Events, float64(src.Bytes)/1e6, in.Links.Activities, in.Links.ByExternalID, in.Links.ByCorrelation, in.Links.Unlinked)
	for _, d := range in.Summary {
		fmt.Fprintf(ew, "device %d: wall %s, busy %s (%.1f%%), idle %s, %d activities\n",
			d.Device, dur(d.WallNS), dur(d.BusyNS), 100*d.BusyFraction, dur(d.IdleNS), d.Activities)
	}
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\ntier\tclass\tsignatures\tcount\ttraced\tshare\t")
	for _, t := range in.Tiers {
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%s\t%.1f%%\t\n", t.Tier, "all", t.Signatures, t.Count, dur(t.TracedNS), 100*t.Share)
	}
	for _, c := range in.Classes {
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%s\t%.1f%%\t\n", c.Tier, c.Class, c.Signatures, c.Count, dur(c.TracedNS), 100*c.Share)
	}
	tw.Flush()
	if g := in.Graph; g.Signatures > 0 {
		fmt.Fprintf(ew, "CUDA graphs ran %d signatures (%d invocations, %s, %.1f%% of the traced time): the trace records no op shapes for them; their captured binaries replay them (kreplay capture)\n",
			g.Signatures, g.Count, dur(g.TracedNS), 100*g.Share)
	}
	if in.Unreplayable > 0 {
		fmt.Fprintf(ew, "%d signatures unreplayable (see -json)\n", in.Unreplayable)
	}
	if c := in.Communication; c != nil {
		fmt.Fprintf(ew, "collectives (paired with the other ranks): %d calls, traced %s = transfer %s + waiting for other ranks %s\n",
			c.Collectives, dur(c.TracedNS), dur(c.TransferNS), dur(c.WaitNS))
	}
	if len(in.Paths) > 0 {
		tw = tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "\nreplay path\tsignatures\ttraced\tshare\t")
		for _, p := range in.Paths {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%.1f%%\t\n", p.Path, p.Signatures, dur(p.TracedNS), 100*p.Share)
		}
		tw.Flush()
	}
	if len(in.Top) > 0 {
		tw = tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		path := ""
		if in.PathOf != nil {
			path = "path\t"
		}
		fmt.Fprintf(tw, "\ntop %d signatures by traced time\nid\ttier\tclass\tcount\ttotal\tmean\t%slabel\n", len(in.Top), path)
		for _, s := range in.Top {
			p := ""
			if in.PathOf != nil {
				p = truncate(in.PathOf[s.ID], 48) + "\t"
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%s\t%s\t%s%s\n", s.ID, s.Tier, s.Class, s.Count,
				dur(s.TracedNS.Total), dur(s.TracedNS.Mean), p, truncate(s.Label, 90))
		}
		tw.Flush()
	}
	return ew.Err
}

func dur(ns int64) string {
	d := time.Duration(ns)
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.3fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.3fms", float64(d)/1e6)
	default:
		return fmt.Sprintf("%.2fµs", float64(d)/1e3)
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.TrimSpace(s[:n-3]) + "..."
}
