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
	"else compute at or above the ridge point, memory below it\n"+
	"hw %% = the same share against the hardware's roofs, the ones to compare with Nsight Compute's throughput percentages: "+
	"the DRAM bandwidth (NVML: max memory clock x bus width x 2 / 8) and SMs x data-sheet FLOPs per SM per clock x the SM clock "+
	"(\"probe\": measured on the GPU during the replay, SM cycles over its global timer; \"nvml\": NVML's mean during the replay; "+
	"\"max\": the device's maximum, assumed)",
	100*LatencyShare, 100*ShortShare, ShortNS/1e3)

// Row is one signature in a roofline table.
type Row struct {
	ID    string           `json:"id"`
	Class signatures.Class `json:"class,omitempty"`
	Label string           `json:"label"`
	// Point places it; nil when it is not placed, and Why says why.
	Point *Point `json:"point,omitempty"`
	Why   string `json:"why,omitempty"`
	// ClockErr says why the clock probe did not measure its replay's SM
	// clock (replay.Result.ClockErr), where it was asked to; its hardware
	// roof then takes the next clock PickClock prefers.
	ClockErr string `json:"clock_error,omitempty"`
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
// (replay.Entry.ReplayNS), the hardware roof at the SM clock PickClock
// prefers: the clock probe's (replay.Result.SMClockMHz), else the mean
// NVML sampled (replay.Result.GPU). Entries that are part of another, or
// did not replay, are left out.
func EntryRows(p *Peaks, set *signatures.Set, entries []replay.Entry) []Row {
	var rows []Row
	for i := range entries {
		e := &entries[i]
		if e.PartOf != "" || e.Result == nil {
			continue
		}
		row := Row{ID: e.ID, Class: e.Class, Label: e.Label, ClockErr: e.Result.ClockErr}
		sig := set.ByID(e.ID)
		if sig == nil {
			row.Why = "not in the set"
		} else {
			w := Work{Bytes: float64(e.Result.Work.Bytes), FLOPs: float64(e.Result.Work.FLOPs), NS: e.ReplayNS(),
				ProbeClockMHz: e.Result.SMClockMHz}
			if g := e.Result.GPU; g != nil {
				w.SMClockMHz = g.MeanSMClockMHz
			}
			row.Point, row.Why = PlaceSignature(p, sig, w)
		}
		rows = append(rows, row)
	}
	return rows
}

// WriteTable prints one line per row: the peak its FLOPs are held to, the
// replay time, the arithmetic intensity, the achieved rates, the roof
// (TFLOP/s for work with FLOPs, else the copy bandwidth in GB/s), the
// memory and compute shares, the share of the roof, the bound, the share
// of the hardware roof ("hw %", "-" without one) and the SM clock it was
// taken at, with its source ("1536 probe", "1980 nvml", "1980 max");
// then a line for each row whose clock probe failed, saying why.
func WriteTable(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "id\tclass\tpeak\treplay/call\tFLOP/B\tGB/s\tTFLOP/s\troof\tof copy\tof peak\tshare of roof\tbound\thw %\tSM MHz\tlabel")
	for _, r := range rows {
		label := r.Label
		if rs := []rune(label); len(rs) > 60 {
			label = string(rs[:57]) + "..."
		}
		pt := r.Point
		if pt == nil {
			fmt.Fprintf(tw, "%s\t%s\t\t\t\t\t\t\t\t\t\tnot placed: %s\t\t\t%s\n", r.ID, r.Class, r.Why, label)
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
		hw, clock := hwColumns(pt)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.4g\t%s\t%s\t%.1f%%\t%s\t%.1f%%\t%s\t%s\t%s\t%s\n", r.ID, r.Class, peak, formatNS(pt.NS),
			ai, pt.GBps, tflops, roof, 100*pt.MemoryShare, ofPeak, 100*pt.Share, pt.Bound, hw, clock, label)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range rows {
		if r.ClockErr != "" {
			if _, err := fmt.Fprintf(w, "%s: no probed SM clock: %s\n", r.ID, r.ClockErr); err != nil {
				return err
			}
		}
	}
	return nil
}

// hwColumns are a point's hardware share ("-" without one) and the SM
// clock it was taken at with its source ("1536 probe", "1552 nvml",
// "1980 max" where assumed, "-").
func hwColumns(pt *Point) (hw, clock string) {
	hw, clock = "-", "-"
	if pt.HWShare > 0 {
		hw = fmt.Sprintf("%.1f%%", 100*pt.HWShare)
	}
	if pt.ClockMHz > 0 {
		clock = fmt.Sprintf("%.0f", pt.ClockMHz) + clockTag(pt)
	}
	return hw, clock
}

// clockTag names a point's clock source in the table: " probe", " nvml",
// " max" (assumed), or "" for a point made before sources were named.
func clockTag(pt *Point) string {
	switch {
	case pt.ClockSource == ClockMax || pt.ClockAssumed:
		return " max"
	case pt.ClockSource != "":
		return " " + pt.ClockSource
	}
	return ""
}

// formatNS writes a time in µs, or ms from a millisecond on.
func formatNS(ns float64) string {
	if ns >= 1e6 {
		return fmt.Sprintf("%.3fms", ns/1e6)
	}
	return fmt.Sprintf("%.2fµs", ns/1e3)
}
