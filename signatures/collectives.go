package signatures

import (
	"fmt"
	"sort"
)

// CollectiveCall is one collective of a multi-rank run, paired across the
// ranks' traces: the k-th collective of a process group on every rank.
type CollectiveCall struct {
	// Index is the call's position among its group's collectives.
	Index  int    `json:"index"`
	Group  string `json:"group"`
	Op     string `json:"op"`
	Nelems int64  `json:"nelems"`
	DType  string `json:"dtype"`
	// Ranks holds each rank's invocation, in rank order.
	Ranks []RankCall `json:"ranks"`
	// SkewNS is how long the earliest rank waited for the latest to
	// arrive: latest start - earliest start.
	SkewNS int64 `json:"skew_ns"`
	// TransferNS is the collective's own time once every rank is there:
	// the latest end - the latest start.
	TransferNS int64 `json:"transfer_ns"`
}

// RankCall is one rank's invocation of a paired collective.
type RankCall struct {
	Rank  int    `json:"rank"`
	SigID string `json:"sig"`
	Start int64  `json:"start_ns"`
	Dur   int64  `json:"dur_ns"`
	// WaitNS is how long this rank's kernel waited for later ranks.
	WaitNS int64 `json:"wait_ns"`
}

// CommSummary splits one rank's traced communication time.
type CommSummary struct {
	Rank        int   `json:"rank"`
	Collectives int   `json:"collectives"`
	TracedNS    int64 `json:"traced_ns"`
	TransferNS  int64 `json:"transfer_ns"`
	WaitNS      int64 `json:"wait_ns"`
}

// PairCollectives pairs the collectives of one multi-rank run, given one
// set per rank (traces of one host share a clock, so start times compare).
// Calls pair by order within their process group; a mismatch in count, op,
// element count or dtype is an error naming the call.
func PairCollectives(sets []*Set) ([]CollectiveCall, []CommSummary, error) {
	if len(sets) < 2 {
		return nil, nil, fmt.Errorf("pairing collectives needs two or more ranks, got %d", len(sets))
	}
	sets = append([]*Set(nil), sets...)
	sort.SliceStable(sets, func(i, j int) bool { return sets[i].Source.Rank < sets[j].Source.Rank })
	type call struct {
		sig *Signature
		inv Invocation
	}
	perRank := make([]map[string][]call, len(sets))
	var groups []string
	seen := map[string]bool{}
	for r, s := range sets {
		if r > 0 && s.Source.Rank == sets[r-1].Source.Rank {
			return nil, nil, fmt.Errorf("%s and %s are both rank %d", sets[r-1].Source.File, s.Source.File, s.Source.Rank)
		}
		perRank[r] = map[string][]call{}
		for _, inv := range s.Timeline {
			sig := s.Signatures[inv.Sig]
			if sig.Collective == nil {
				continue
			}
			g := sig.Collective.Group
			perRank[r][g] = append(perRank[r][g], call{sig, inv})
			if !seen[g] {
				seen[g] = true
				groups = append(groups, g)
			}
		}
	}
	var calls []CollectiveCall
	sums := make([]CommSummary, len(sets))
	for r := range sums {
		sums[r].Rank = sets[r].Source.Rank
	}
	for _, g := range groups {
		n := len(perRank[0][g])
		for r := range sets {
			if len(perRank[r][g]) != n {
				return nil, nil, fmt.Errorf("process group %q: rank %d has %d collectives, rank %d has %d",
					g, sets[0].Source.Rank, n, sets[r].Source.Rank, len(perRank[r][g]))
			}
		}
		for k := 0; k < n; k++ {
			first := perRank[0][g][k].sig.Collective
			c := CollectiveCall{Index: k, Group: g, Op: first.Op, Nelems: first.Nelems, DType: first.DType}
			var latestStart, latestEnd, earliest int64
			for r := range sets {
				x := perRank[r][g][k]
				cc := x.sig.Collective
				if cc.Op != c.Op || cc.Nelems != c.Nelems || cc.DType != c.DType {
					return nil, nil, fmt.Errorf("process group %q call %d: rank %d runs %s %s[%d], rank %d runs %s %s[%d]",
						g, k, sets[0].Source.Rank, c.Op, c.DType, c.Nelems, sets[r].Source.Rank, cc.Op, cc.DType, cc.Nelems)
				}
				c.Ranks = append(c.Ranks, RankCall{Rank: sets[r].Source.Rank, SigID: x.sig.ID, Start: x.inv.Start, Dur: x.inv.Dur})
				if r == 0 || x.inv.Start > latestStart {
					latestStart = x.inv.Start
				}
				if r == 0 || x.inv.Start < earliest {
					earliest = x.inv.Start
				}
				if end := x.inv.Start + x.inv.Dur; r == 0 || end > latestEnd {
					latestEnd = end
				}
			}
			c.SkewNS = latestStart - earliest
			c.TransferNS = max(latestEnd-latestStart, 0)
			for r := range c.Ranks {
				rc := &c.Ranks[r]
				rc.WaitNS = min(latestStart-rc.Start, rc.Dur)
				s := &sums[r]
				s.Collectives++
				s.TracedNS += rc.Dur
				s.WaitNS += rc.WaitNS
				s.TransferNS += rc.Dur - rc.WaitNS
			}
			calls = append(calls, c)
		}
	}
	return calls, sums, nil
}
