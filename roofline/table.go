package roofline

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/signatures"
)

// Rule states the bound rule (Classify) in a line, for reports.
var Rule = fmt.Sprintf("share = the time the roofs allow, max(bytes / copy bandwidth, FLOPs / peak), over the replay time; "+
	"bound (a rule of kreplay's): latency under %.0f%% of the roof, or under %.0f%% for a replay under %.0f µs; "+
	"else compute at or above the ridge point, memory below it",
	100*LatencyShare, 100*ShortShare, ShortNS/1e3)

// Row is one signature in a roofline table.
type Row struct {
	ID    string           `json:"id"`
	Class signatures.Class `json:"class,omitempty"`
	Label string           `json:"label"`
	// Point places it; nil when it is not placed, and Why says why.
	Point *Point `json:"point,omitempty"`
	Why   string `json:"why,omitempty"`
}

// PlaceSignature places sig's work on the roofline of peaks with the peak
// PeakDType picks, or says why it cannot.
func PlaceSignature(p *Peaks, sig *signatures.Signature, w Work) (*Point, string) {
	dtype, why := PeakDType(sig)
	if why != "" {
		return nil, why
	}
	pt, err := Place(p, dtype, w)
	if err != nil {
		return nil, strings.TrimPrefix(err.Error(), "roofline: ")
	}
	return &pt, ""
}

// EntryRows places the replayed entries of a suite (replay.Device.RunSet
// of set): each one's work (replay.Result.Work) over its replay time
// (replay.Entry.ReplayNS). Entries that are part of another, or did not
// replay, are left out.
func EntryRows(p *Peaks, set *signatures.Set, entries []replay.Entry) []Row {
	var rows []Row
	for i := range entries {
		e := &entries[i]
		if e.PartOf != "" || e.Result == nil {
			continue
		}
		row := Row{ID: e.ID, Class: e.Class, Label: e.Label}
		sig := set.ByID(e.ID)
		if sig == nil {
			row.Why = "not in the set"
		} else {
			w := Work{Bytes: float64(e.Result.Work.Bytes), FLOPs: float64(e.Result.Work.FLOPs), NS: e.ReplayNS()}
			row.Point, row.Why = PlaceSignature(p, sig, w)
		}
		rows = append(rows, row)
	}
	return rows
}

// WriteTable prints one line per row: the peak its FLOPs are held to, the
// replay time, the arithmetic intensity, the achieved rates, the roof
// (TFLOP/s for work with FLOPs, else the copy bandwidth in GB/s), the
// memory and compute shares, the share of the roof and the bound.
func WriteTable(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "id\tclass\tpeak\treplay/call\tFLOP/B\tGB/s\tTFLOP/s\troof\tof copy\tof peak\tshare of roof\tbound\tlabel")
	for _, r := range rows {
		label := r.Label
		if rs := []rune(label); len(rs) > 60 {
			label = string(rs[:57]) + "..."
		}
		pt := r.Point
		if pt == nil {
			fmt.Fprintf(tw, "%s\t%s\t\t\t\t\t\t\t\t\t\tnot placed: %s\t%s\n", r.ID, r.Class, r.Why, label)
			continue
		}
		peak, ai, tflops, roof, ofPeak := "-", "-", "-", fmt.Sprintf("%.0f GB/s", pt.PeakGBps), "-"
		if pt.DType != "" {
			peak, ai, tflops = pt.DType, fmt.Sprintf("%.3g", pt.AI), fmt.Sprintf("%.3g", pt.TFLOPs)
			roof = fmt.Sprintf("%.4g TFLOP/s", pt.RoofTFLOPs)
			if pt.NoComputePeak {
				peak += " (none)"
			} else {
				ofPeak = fmt.Sprintf("%.1f%%", 100*pt.ComputeShare)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.4g\t%s\t%s\t%.1f%%\t%s\t%.1f%%\t%s\t%s\n", r.ID, r.Class, peak, formatNS(pt.NS),
			ai, pt.GBps, tflops, roof, 100*pt.MemoryShare, ofPeak, 100*pt.Share, pt.Bound, label)
	}
	return tw.Flush()
}

// formatNS writes a time in µs, or ms from a millisecond on.
func formatNS(ns float64) string {
	if ns >= 1e6 {
		return fmt.Sprintf("%.3fms", ns/1e6)
	}
	return fmt.Sprintf("%.2fµs", ns/1e3)
}
