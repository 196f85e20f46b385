package replay

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/kreplay/kreplay/signatures"
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
}

// PredictRanks predicts each rank's GPU time from its suite's entries
// (entries[i] belongs to sets[i]) and splits its traced communication.
func PredictRanks(sets []*signatures.Set, entries [][]Entry) ([]RankPrediction, error) {
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
		}
		if target := float64(p.TracedBusyNS - p.WaitNS); target > 0 {
			p.Error = (p.ComputeNS+p.CommNS)/target - 1
		}
		out[i] = p
	}
	return out, nil
}

// WriteRanks prints rank predictions as a table.
func WriteRanks(w io.Writer, ps []RankPrediction) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rank\tcompute_ms\tcomm_ms\tpredicted_ms\ttraced_busy_ms\ttraced_comm_ms\ttransfer_ms\twait_ms\tbusy-wait_ms\terror\tmissing\t")
	for _, p := range ps {
		fmt.Fprintf(tw, "%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%+.1f%%\t%d\t\n", p.Rank,
			p.ComputeNS/1e6, p.CommNS/1e6, (p.ComputeNS+p.CommNS)/1e6, float64(p.TracedBusyNS)/1e6,
			float64(p.TracedCommNS)/1e6, float64(p.TransferNS)/1e6, float64(p.WaitNS)/1e6,
			float64(p.TracedBusyNS-p.WaitNS)/1e6, 100*p.Error, p.Missing)
	}
	return tw.Flush()
}
