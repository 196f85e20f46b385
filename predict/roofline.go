package predict

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/kreplay/kreplay/roofline"
	"github.com/kreplay/kreplay/signatures"
)

// BoundShare is the predicted time of the signatures of one bound.
type BoundShare struct {
	// Bound is "memory", "compute", "latency" (roofline.Bound) or "not
	// placed".
	Bound       string  `json:"bound"`
	Signatures  int     `json:"signatures"`
	PredictedNS float64 `json:"predicted_ns"`
	Share       float64 `json:"share"`
}

// notPlaced is the BoundShare of signatures without a roofline point.
const notPlaced = "not placed"

// perOp is the median over the runs of a rate times the run's ns/op,
// times k: the work per invocation (GB/s x ns = bytes; TFLOP/s x ns x
// 1e3 = FLOPs). Runs are paired by order; when the counts differ, the
// medians are multiplied instead.
func perOp(rates, ns []float64, k float64) float64 {
	if len(rates) == 0 || len(ns) == 0 {
		return 0
	}
	if len(rates) != len(ns) {
		return median(rates) * median(ns) * k
	}
	v := make([]float64, len(rates))
	for i := range rates {
		v[i] = rates[i] * ns[i] * k
	}
	return median(v)
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// place puts each measured signature on the roofline of the output's
// peaks (none without peaks): its bytes and FLOPs per invocation from its
// GB/s and TFLOP/s over its runs' ns/op, over its replay time (the center
// of ReplayNS), at the median of its runs' sm-MHz (none: the hardware
// roof assumes the maximum SM clock); and splits the predicted time by
// bound.
func (wp *WorkloadPrediction) place(w *WorkloadResults, set *signatures.Set) {
	if w.Peaks == nil {
		return
	}
	wp.Peaks = w.Peaks
	by := map[string]*BoundShare{}
	for _, sp := range wp.Sigs {
		smp := w.Sigs[sp.ID]
		work := roofline.Work{Bytes: perOp(smp.GBps, smp.NS, 1), FLOPs: perOp(smp.TFLOPs, smp.NS, 1e3), NS: sp.ReplayNS.Center}
		if len(smp.SMMHz) > 0 {
			work.SMClockMHz = median(smp.SMMHz)
		}
		switch sig := set.ByID(sp.ID); {
		case sig == nil:
			sp.NotPlaced = "not in the set"
		case work.Bytes == 0 && work.FLOPs == 0:
			sp.NotPlaced = "no GB/s or TFLOP/s in the output"
		default:
			sp.Roofline, sp.NotPlaced = roofline.PlaceSignature(w.Peaks, sig, work)
		}
		key := notPlaced
		if sp.Roofline != nil {
			key = string(sp.Roofline.Bound)
		}
		b := by[key]
		if b == nil {
			b = &BoundShare{Bound: key}
			by[key] = b
		}
		b.Signatures++
		b.PredictedNS += sp.PredictedNS.Center
	}
	for _, k := range []string{string(roofline.Memory), string(roofline.Compute), string(roofline.Latency), notPlaced} {
		if b := by[k]; b != nil {
			if wp.PredictedNS.Center > 0 {
				b.Share = b.PredictedNS / wp.PredictedNS.Center
			}
			wp.ByBound = append(wp.ByBound, *b)
		}
	}
}

// writeRoofline prints the peaks, the rule, the top signatures' places on
// the roofline and the predicted time by bound; nothing without peaks.
func (wp *WorkloadPrediction) writeRoofline(w io.Writer) {
	if wp.Peaks == nil {
		return
	}
	fmt.Fprintf(w, "\nroofline: peaks %s\n%s\n", wp.Peaks.Summary(), roofline.Rule)
	var parts []string
	for _, b := range wp.ByBound {
		parts = append(parts, fmt.Sprintf("%s %.1f%% (%d signatures)", b.Bound, 100*b.Share, b.Signatures))
	}
	fmt.Fprintf(w, "predicted time by bound: %s\n", strings.Join(parts, ", "))
	if len(wp.Top) == 0 {
		return
	}
	rows := make([]roofline.Row, len(wp.Top))
	for i, s := range wp.Top {
		rows[i] = roofline.Row{ID: s.ID, Class: s.Class, Label: s.Label, Point: s.Roofline, Why: s.NotPlaced}
	}
	fmt.Fprintf(w, "top %d signatures by predicted time on the roofline\n", len(rows))
	roofline.WriteTable(w, rows)
}

// rooflinePlot draws the signatures with FLOPs on the roofline, log-log:
// arithmetic intensity against achieved TFLOP/s, by bound, under the
// roofs of each dtype's peak (the copy bandwidth's slope up to the peak).
// Nil without peaks or without a signature with FLOPs.
func rooflinePlot(wp *WorkloadPrediction) (*plot.Plot, error) {
	if wp.Peaks == nil {
		return nil, nil
	}
	byBound := map[roofline.Bound]plotter.XYs{}
	lo, hi, ylo := math.Inf(1), 0.0, math.Inf(1)
	left := 0 // placed without FLOPs: not on a log-log plot
	for _, s := range wp.Sigs {
		pt := s.Roofline
		switch {
		case pt == nil:
			continue
		case pt.AI <= 0 || pt.TFLOPs <= 0:
			left++
			continue
		}
		byBound[pt.Bound] = append(byBound[pt.Bound], plotter.XY{X: pt.AI, Y: pt.TFLOPs})
		lo, hi, ylo = min(lo, pt.AI), max(hi, pt.AI), min(ylo, pt.TFLOPs)
	}
	if len(byBound) == 0 {
		return nil, nil
	}
	bw := wp.Peaks.CopyGBps / 1e3 // TFLOP/s per FLOP/B
	top := 0.0
	for _, d := range wp.Peaks.PeakDTypes() {
		top = max(top, wp.Peaks.TFLOPs[d])
		hi = max(hi, 4*roofline.RidgeAI(wp.Peaks.TFLOPs[d], wp.Peaks.CopyGBps))
	}
	xlo, xhi := lo/2, hi*2
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: roofline (copy %.0f GB/s read + written)", wp.Workload, wp.Peaks.CopyGBps)
	if left > 0 {
		p.Title.Text += fmt.Sprintf("; %d signatures without FLOPs not shown", left)
	}
	p.X.Label.Text = "arithmetic intensity (FLOP per byte read + written)"
	p.Y.Label.Text = "achieved TFLOP/s"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
	p.X.Min, p.X.Max = xlo, xhi
	p.Y.Min, p.Y.Max = min(ylo/2, xlo*bw), 1.5*max(top, xlo*bw)
	for i, d := range wp.Peaks.PeakDTypes() {
		peak := wp.Peaks.TFLOPs[d]
		ridge := roofline.RidgeAI(peak, wp.Peaks.CopyGBps)
		xy := plotter.XYs{{X: xlo, Y: min(peak, xlo*bw)}}
		if ridge > xlo && ridge < xhi {
			xy = append(xy, plotter.XY{X: ridge, Y: peak})
		}
		xy = append(xy, plotter.XY{X: xhi, Y: min(peak, xhi*bw)})
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, err
		}
		// Roofs in grays, told apart by their dashes; the points in colors.
		l.LineStyle.Color = color.Gray{Y: uint8(min(40*i, 160))}
		l.LineStyle.Dashes = plotutil.Dashes(i)
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("roof %s (%.0f TFLOP/s)", d, peak), l)
	}
	for i, b := range []roofline.Bound{roofline.Memory, roofline.Compute, roofline.Latency} {
		xy := byBound[b]
		if len(xy) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(xy)
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle.Color = plotutil.Color(i)
		sc.GlyphStyle.Shape = plotutil.Shape(i)
		sc.GlyphStyle.Radius = vg.Points(2.5)
		p.Add(sc)
		p.Legend.Add(fmt.Sprintf("%s bound (%d)", b, len(xy)), sc)
	}
	// Bottom right: far under the roofs at high intensity, where points
	// are rare.
	p.Legend.Top = false
	p.Legend.Left = false
	return p, nil
}
