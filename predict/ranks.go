package predict

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/signatures"
	"github.com/kreplay/kreplay/workload"
)

// RankPrediction compares one rank's predicted GPU time with its trace:
// predicted compute (every signature but the collectives, replay time x
// invocations) plus predicted communication (each collective's replayed
// time per call x calls), against the traced busy time less the time its
// collectives spent waiting for other ranks (signatures.PairCollectives).
type RankPrediction struct {
	Rank int `json:"rank"`
	// ComputeNS and CommNS are the predicted compute and communication.
	ComputeNS float64 `json:"compute_ns"`
	CommNS    float64 `json:"comm_ns"`
	// TracedBusyNS is the rank's traced GPU-busy time; TracedCommNS its
	// collectives' traced time, split into TransferNS and WaitNS.
	TracedBusyNS int64 `json:"traced_busy_ns"`
	TracedCommNS int64 `json:"traced_comm_ns"`
	TransferNS   int64 `json:"transfer_ns"`
	WaitNS       int64 `json:"wait_ns"`
	// Error is (compute + comm) / (busy - wait) - 1.
	Error float64 `json:"error"`
	// Missing counts signatures without a replay; MissingNS is their
	// traced time, left out of the prediction.
	Missing   int   `json:"missing"`
	MissingNS int64 `json:"missing_ns"`

	// BusyJ is the predicted energy of the rank's GPU while busy: each
	// replayed signature's energy per invocation x invocations, a
	// collective's counted per GPU (this rank's GPU's share,
	// replay.Result.RankEnergy). NoEnergy counts replayed signatures without an
	// energy, left out of BusyJ.
	BusyJ    float64 `json:"busy_j"`
	NoEnergy int     `json:"no_energy"`

	// The rest is set by Compare, from the run measured without the
	// profiler: WallNS is its wall time per inference and MeasuredJ its
	// GPU's energy per inference (0 when unknown); IdleW is the GPU's
	// measured idle power, and IdleJ = IdleW x (WallNS - predicted busy),
	// the energy of the GPU while it waits (0 when the prediction is
	// longer than the wall time). EnergyJ = BusyJ + IdleJ is the predicted
	// energy per inference and EnergyError = EnergyJ / MeasuredJ - 1.
	WallNS      float64 `json:"wall_ns,omitempty"`
	MeasuredJ   float64 `json:"measured_j,omitempty"`
	IdleW       float64 `json:"idle_w,omitempty"`
	IdleJ       float64 `json:"idle_j,omitempty"`
	EnergyJ     float64 `json:"energy_j,omitempty"`
	EnergyError float64 `json:"energy_error,omitempty"`
}

// BusyNS is the predicted GPU time: compute plus communication.
func (p *RankPrediction) BusyNS() float64 { return p.ComputeNS + p.CommNS }

// Compare sets the measured wall time and energy per inference of the
// rank (m), the GPU's idle power, and the predicted energy they give
// (see RankPrediction). Without a measured energy, or without replayed
// energies (BusyJ 0), EnergyError is left 0.
func (p *RankPrediction) Compare(m workload.MeasuredRun, idleW float64) {
	p.WallNS, p.MeasuredJ, p.IdleW = m.WallS*1e9, m.EnergyJ, idleW
	p.IdleJ = idleW * max(p.WallNS-p.BusyNS(), 0) / 1e9
	p.EnergyJ = p.BusyJ + p.IdleJ
	p.EnergyError = 0
	if p.MeasuredJ > 0 && p.BusyJ > 0 {
		p.EnergyError = p.EnergyJ/p.MeasuredJ - 1
	}
}

// SetPrediction is a whole multi-rank run: the ranks' predicted busy
// times against their traced ones, and, where measured, the wall time per
// inference and the energy of all the GPUs.
type SetPrediction struct {
	Ranks int `json:"ranks"`
	// BusyNS and TracedBusyNS are the ranks' predicted and traced busy
	// times, in rank order; BusyWaitNS their traced busy time less waiting.
	BusyNS       []float64 `json:"busy_ns"`
	TracedBusyNS []int64   `json:"traced_busy_ns"`
	BusyWaitNS   []int64   `json:"busy_wait_ns"`
	// WallNS is the longest measured wall time per inference of the ranks
	// (0 when not measured).
	WallNS float64 `json:"wall_ns,omitempty"`
	// EnergyJ and MeasuredJ are the predicted and measured energy per
	// inference summed over the ranks' GPUs; EnergyError compares them
	// when Compared: every rank has both a measured energy and replayed
	// energies.
	EnergyJ     float64 `json:"energy_j,omitempty"`
	MeasuredJ   float64 `json:"measured_j,omitempty"`
	EnergyError float64 `json:"energy_error,omitempty"`
	Compared    bool    `json:"compared"`
}

// Whole sums rank predictions into the whole set's.
func Whole(ps []RankPrediction) SetPrediction {
	w := SetPrediction{Ranks: len(ps)}
	w.Compared = len(ps) > 0
	for _, p := range ps {
		w.Compared = w.Compared && p.BusyJ > 0 && p.MeasuredJ > 0
		w.BusyNS = append(w.BusyNS, p.BusyNS())
		w.TracedBusyNS = append(w.TracedBusyNS, p.TracedBusyNS)
		w.BusyWaitNS = append(w.BusyWaitNS, p.TracedBusyNS-p.WaitNS)
		w.WallNS = max(w.WallNS, p.WallNS)
		w.EnergyJ += p.EnergyJ
		w.MeasuredJ += p.MeasuredJ
	}
	if w.Compared {
		w.EnergyError = w.EnergyJ/w.MeasuredJ - 1
	}
	return w
}

// PredictRanks predicts each rank's GPU time from its suite's entries
// (entries[i] belongs to sets[i]) and splits its traced communication.
func PredictRanks(sets []*signatures.Set, entries [][]replay.Entry) ([]RankPrediction, error) {
	if len(sets) != len(entries) {
		return nil, fmt.Errorf("%d sets but %d entry lists", len(sets), len(entries))
	}
	_, comm, err := signatures.PairCollectives(sets)
	if err != nil {
		return nil, err
	}
	byRank := map[int]signatures.CommSummary{}
	for _, c := range comm {
		byRank[c.Rank] = c
	}
	out := make([]RankPrediction, len(sets))
	for i, set := range sets {
		p := RankPrediction{Rank: set.Source.Rank}
		for _, d := range set.Summary {
			p.TracedBusyNS += d.BusyNS
		}
		c := byRank[p.Rank]
		p.TracedCommNS, p.TransferNS, p.WaitNS = c.TracedNS, c.TransferNS, c.WaitNS
		for _, e := range entries[i] {
			if e.PartOf != "" {
				continue
			}
			if e.Result == nil {
				p.Missing++
				p.MissingNS += e.TracedTotalNS
				continue
			}
			t := e.ReplayNS() * float64(e.Count)
			if e.Class == signatures.ClassCollective {
				p.CommNS += t
			} else {
				p.ComputeNS += t
			}
			if j, ok := rankJoules(e.Result, p.Rank); ok {
				p.BusyJ += j * float64(e.Count)
			} else {
				p.NoEnergy++
			}
		}
		if target := float64(p.TracedBusyNS - p.WaitNS); target > 0 {
			p.Error = (p.ComputeNS+p.CommNS)/target - 1
		}
		out[i] = p
	}
	return out, nil
}

// rankJoules is a result's energy per invocation on one rank's GPU: a
// collective's share of that rank (its RankEnergy, else the sum over its
// GPUs divided among them), a single-GPU signature's own.
func rankJoules(r *replay.Result, rank int) (float64, bool) {
	switch {
	case r.Energy == nil:
		return 0, false
	case rank >= 0 && rank < len(r.RankEnergy):
		return r.RankEnergy[rank].JoulesPerOp, true
	case r.Energy.GPUs > 1:
		return r.Energy.JoulesPerOp / float64(r.Energy.GPUs), true
	}
	return r.Energy.JoulesPerOp, true
}

// WriteRanks prints rank predictions as a table: time per rank; then,
// where energy was measured or the run's wall time and energy are known,
// energy per rank; then the whole set on one line.
func WriteRanks(w io.Writer, ps []RankPrediction) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rank\tcompute_ms\tcomm_ms\tpredicted_ms\ttraced_busy_ms\ttraced_comm_ms\ttransfer_ms\twait_ms\tbusy-wait_ms\terror\tmissing\t")
	energy := false
	for _, p := range ps {
		fmt.Fprintf(tw, "%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%+.1f%%\t%d\t\n", p.Rank,
			p.ComputeNS/1e6, p.CommNS/1e6, p.BusyNS()/1e6, float64(p.TracedBusyNS)/1e6,
			float64(p.TracedCommNS)/1e6, float64(p.TransferNS)/1e6, float64(p.WaitNS)/1e6,
			float64(p.TracedBusyNS-p.WaitNS)/1e6, 100*p.Error, p.Missing)
		energy = energy || p.BusyJ > 0 || p.WallNS > 0
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if energy {
		fmt.Fprintln(w, "\nenergy per inference: busy (replayed energy x invocations) + idle power x (measured wall - predicted busy), against the measured run")
		fmt.Fprintln(tw, "rank\tbusy_J\tno_energy\tidle_W\twall_ms\tidle_J\tpredicted_J\tmeasured_J\terror\t")
		for _, p := range ps {
			fmt.Fprintf(tw, "%d\t%.3f\t%d\t%.1f\t%.3f\t%.3f\t%.3f\t%.3f\t%s\t\n", p.Rank, p.BusyJ, p.NoEnergy,
				p.IdleW, p.WallNS/1e6, p.IdleJ, p.EnergyJ, p.MeasuredJ, percent(p.EnergyError, p.MeasuredJ > 0 && p.BusyJ > 0))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	s := Whole(ps)
	fmt.Fprintf(w, "\nwhole set, %d ranks: predicted busy %s ms against traced busy %s ms (busy-wait %s ms)", s.Ranks,
		joinMS(s.BusyNS), joinMS(s.TracedBusyNS), joinMS(s.BusyWaitNS))
	if s.WallNS > 0 {
		fmt.Fprintf(w, "; measured wall %.3f ms per inference", s.WallNS/1e6)
	}
	if s.MeasuredJ > 0 || s.EnergyJ > 0 {
		fmt.Fprintf(w, "; energy of the %d GPUs predicted %.3f J, measured %.3f J (%s)", s.Ranks, s.EnergyJ, s.MeasuredJ, percent(s.EnergyError, s.Compared))
	}
	_, err := fmt.Fprintln(w)
	return err
}

// percent formats a relative error, "-" when there is nothing to compare.
func percent(e float64, ok bool) string {
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", 100*e)
}

// joinMS formats nanoseconds as milliseconds joined by "/".
func joinMS[T int64 | float64](ns []T) string {
	parts := make([]string, len(ns))
	for i, v := range ns {
		parts[i] = fmt.Sprintf("%.3f", float64(v)/1e6)
	}
	return strings.Join(parts, "/")
}
