package replay

import (
	"fmt"
	"math"
	"time"

	"github.com/kreplay/kreplay/internal/cuda"
)

// graphProbeNodes are the graph sizes whose launch the host probe times:
// one kernel, and as many as a decode step's forward pass launches.
var graphProbeNodes = []int{1, 256}

// graphProbeRounds is how many launches of each graph are timed.
const graphProbeRounds = 50

// GraphLaunch is the host's cost of launching a CUDA graph: the duration
// of the cuGraphLaunch call, timed on the host (no CUPTI) with the stream
// idle, for graphs of Nodes[i] kernels (Spreads[i]); BaseNS and PerNodeNS
// are the line through the sizes' medians.
type GraphLaunch struct {
	Nodes     []int    `json:"nodes"`
	Spreads   []Spread `json:"spreads"`
	BaseNS    float64  `json:"base_ns"`
	PerNodeNS float64  `json:"per_node_ns"`
}

// CostNS is the launch cost of a graph of n kernels on the line, at least
// the smallest size's median; 0 where nothing was measured.
func (g GraphLaunch) CostNS(n int) int64 {
	if len(g.Spreads) == 0 {
		return 0
	}
	return int64(math.Round(max(g.BaseNS+g.PerNodeNS*float64(n), g.Spreads[0].MedianNS)))
}

// fitGraphLaunch sets the line of g from its first and last sizes.
func (g *GraphLaunch) fit() {
	a, b := 0, len(g.Nodes)-1
	if b <= a || g.Nodes[b] == g.Nodes[a] {
		g.BaseNS = g.Spreads[a].MedianNS
		return
	}
	g.PerNodeNS = max((g.Spreads[b].MedianNS-g.Spreads[a].MedianNS)/float64(g.Nodes[b]-g.Nodes[a]), 0)
	g.BaseNS = g.Spreads[a].MedianNS - g.PerNodeNS*float64(g.Nodes[a])
}

// measureGraphLaunch times the launch of graphs of the probe kernel, run
// for 0 ns (GraphLaunch). Call inside Do.
func (d *Device) measureGraphLaunch(k *hostKernel, o HostProbeOptions, p *HostProbe) error {
	for _, n := range graphProbeNodes {
		ns, err := d.timeGraphLaunch(k, n, o.IdleGap)
		if err != nil {
			return fmt.Errorf("graph launch of %d kernels: %w", n, err)
		}
		p.Graph.Nodes = append(p.Graph.Nodes, n)
		p.Graph.Spreads = append(p.Graph.Spreads, spreadOf(ns))
	}
	p.Graph.fit()
	return nil
}

// timeGraphLaunch captures n launches of k into a graph and times
// graphProbeRounds launches of it, each after the stream went idle and a
// pause of gap.
func (d *Device) timeGraphLaunch(k *hostKernel, n int, gap time.Duration) ([]float64, error) {
	s := d.stream
	if err := s.BeginCapture(cuda.CaptureModeThreadLocal); err != nil {
		return nil, err
	}
	for i := 0; i < n; i++ {
		if err := k.launch(s, 0); err != nil {
			s.EndCapture()
			return nil, err
		}
	}
	g, err := s.EndCapture()
	if err != nil {
		return nil, err
	}
	defer g.Destroy()
	exec, err := g.Instantiate()
	if err != nil {
		return nil, err
	}
	defer exec.Destroy()
	ns := make([]float64, 0, graphProbeRounds)
	for i := 0; i < hostWarmRounds+graphProbeRounds; i++ {
		if err := s.Synchronize(); err != nil {
			return nil, err
		}
		spin(gap)
		t0 := time.Now()
		if err := exec.Launch(s); err != nil {
			return nil, err
		}
		if i >= hostWarmRounds {
			ns = append(ns, float64(time.Since(t0).Nanoseconds()))
		}
	}
	return ns, s.Synchronize()
}
