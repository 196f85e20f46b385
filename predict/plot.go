package predict

import (
	"fmt"
	"math"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/kreplay/kreplay/signatures"
)

// WritePlots writes two or three plots per workload into dir, each as SVG
// and PNG, and returns the files' paths:
//
//   - WORKLOAD-classes: per tier and class, horizontal bars of the traced
//     time, the traced time of the measured signatures and the predicted
//     time, in ms per inference;
//   - WORKLOAD-signatures: per measured signature, replay time per
//     invocation against traced time per invocation, log-log, with the
//     bounds of the replay time as error bars and the line y = x;
//   - WORKLOAD-roofline, when the output has the GPU's peaks: per
//     signature with FLOPs, achieved TFLOP/s against arithmetic
//     intensity, log-log, marked by bound, under the roof of each dtype's
//     peak (rooflinePlot).
func (p *Prediction) WritePlots(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var files []string
	for _, wp := range p.Workloads {
		for name, mk := range map[string]func(*WorkloadPrediction) (*plot.Plot, error){
			"classes": classPlot, "signatures": sigPlot, "roofline": rooflinePlot,
		} {
			pl, err := mk(wp)
			if err != nil {
				return files, fmt.Errorf("%s %s plot: %w", wp.Workload, name, err)
			}
			if pl == nil {
				continue
			}
			for _, ext := range []string{".svg", ".png"} {
				path := filepath.Join(dir, wp.Workload+"-"+name+ext)
				if err := pl.Save(8*vg.Inch, 6*vg.Inch, path); err != nil {
					return files, err
				}
				files = append(files, path)
			}
		}
	}
	return files, nil
}

func classPlot(wp *WorkloadPrediction) (*plot.Plot, error) {
	classes := wp.Classes
	if len(classes) == 0 {
		return nil, nil
	}
	n := len(classes)
	names := make([]string, n)
	traced, covered, predicted := make(plotter.Values, n), make(plotter.Values, n), make(plotter.Values, n)
	for i, g := range classes {
		// Largest at the top: the Y axis counts upwards.
		j := n - 1 - i
		names[j] = fmt.Sprintf("%d %s", g.Tier, g.Class)
		traced[j] = float64(g.TracedNS) / 1e6
		covered[j] = float64(g.CoveredNS) / 1e6
		predicted[j] = g.PredictedNS.Center / 1e6
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: GPU time per class (%.1f%% of the traced time measured)", wp.Workload, 100*wp.Coverage)
	p.X.Label.Text = "ms per inference"
	p.X.Min = 0
	var top float64
	for i := range n {
		top = max(top, traced[i], predicted[i])
	}
	p.X.Max = 1.05 * top
	w := vg.Points(7)
	for i, s := range []struct {
		name string
		v    plotter.Values
	}{{"traced", traced}, {"traced, measured signatures", covered}, {"predicted (replay)", predicted}} {
		b, err := plotter.NewBarChart(s.v, w)
		if err != nil {
			return nil, err
		}
		b.Horizontal = true
		b.Color = plotutil.Color(i)
		b.LineStyle.Width = 0
		b.Offset = vg.Length(1-i) * w
		p.Add(b)
		p.Legend.Add(s.name, b)
	}
	p.Legend.Top = false
	p.Legend.Left = false
	p.NominalY(names...)
	return p, nil
}

// sigPoints are the signatures of one tier: traced and replay time per
// invocation in µs, with the replay's bounds.
type sigPoints struct {
	xy     plotter.XYs
	lo, hi []float64
}

func (s sigPoints) Len() int                        { return len(s.xy) }
func (s sigPoints) XY(i int) (float64, float64)     { return s.xy[i].X, s.xy[i].Y }
func (s sigPoints) YError(i int) (float64, float64) { return s.lo[i], s.hi[i] }

func sigPlot(wp *WorkloadPrediction) (*plot.Plot, error) {
	byTier := map[signatures.Tier]*sigPoints{}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range wp.Sigs {
		x, y := s.TracedPerCallNS/1e3, s.ReplayNS.Center/1e3
		if x <= 0 || y <= 0 {
			continue
		}
		pts := byTier[s.Tier]
		if pts == nil {
			pts = &sigPoints{}
			byTier[s.Tier] = pts
		}
		pts.xy = append(pts.xy, plotter.XY{X: x, Y: y})
		// Error bars may not reach zero on a log axis.
		pts.lo = append(pts.lo, min(y-s.ReplayNS.Lo/1e3, 0.99*y))
		pts.hi = append(pts.hi, max(s.ReplayNS.Hi/1e3-y, 0))
		lo, hi = min(lo, x, y), max(hi, x, y)
	}
	if len(byTier) == 0 {
		return nil, nil
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: replay vs traced time per signature", wp.Workload)
	p.X.Label.Text = "traced µs per invocation (median)"
	p.Y.Label.Text = "replay µs per invocation (ns/op)"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
	diag, err := plotter.NewLine(plotter.XYs{{X: lo / 1.2, Y: lo / 1.2}, {X: hi * 1.2, Y: hi * 1.2}})
	if err != nil {
		return nil, err
	}
	diag.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(diag)
	p.Legend.Add("replay = traced", diag)
	for t := signatures.TierMemory; t <= signatures.TierKernel; t++ {
		pts := byTier[t]
		if pts == nil {
			continue
		}
		sc, err := plotter.NewScatter(pts.xy)
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle.Color = plotutil.Color(int(t) - 1)
		sc.GlyphStyle.Shape = plotutil.Shape(int(t) - 1)
		sc.GlyphStyle.Radius = vg.Points(2.5)
		eb, err := plotter.NewYErrorBars(pts)
		if err != nil {
			return nil, err
		}
		eb.LineStyle.Color = sc.GlyphStyle.Color
		p.Add(eb, sc)
		p.Legend.Add(fmt.Sprintf("tier %d (%d)", t, pts.Len()), sc)
	}
	p.Legend.Top = true
	p.Legend.Left = true
	return p, nil
}
