package schedule

import (
	"math"
	"slices"
	"sort"
)

// result computes the steady-state figures from the simulated times.
func (m *sim) result() Result {
	n := len(m.times)
	r := Result{Inferences: n, FirstSteady: -1, Times: m.times}
	var wall, busy int64
	var tokens int
	walls := make([]float64, 0, n)
	for i, t := range m.times {
		if !t.Steady {
			continue
		}
		from := t.Start // counted over its own span
		if i > 0 && m.times[i-1].End <= t.End && !m.s.Inferences[i].Fresh {
			from = m.times[i-1].End
		}
		wall += t.End - from
		walls = append(walls, float64(t.End-from))
		busy += union(m.spans, from, t.End)
		r.HostWaitNS += float64(t.HostWaitNS)
		r.PeerWaitNS += float64(t.PeerWaitNS)
		tokens += len(t.Tokens)
		r.Steady++
		if r.FirstSteady < 0 {
			r.FirstSteady = i
		}
	}
	steady := float64(r.Steady)
	r.WallNS = float64(wall) / steady
	r.WallQ = quantiles(walls)
	r.BusyNS = float64(busy) / steady
	r.HostWaitNS /= steady
	r.PeerWaitNS /= steady
	r.GPUIdleNS = max(r.WallNS-r.BusyNS-r.PeerWaitNS, 0)
	r.Tokens = float64(tokens) / steady
	r.Bound = "gpu"
	if r.GPUIdleNS > r.HostWaitNS {
		r.Bound = "host"
	}
	for _, l := range m.order {
		sh := m.shares[l]
		sh.Ops /= steady
		sh.FrameworkNS /= steady
		sh.LaunchNS /= steady
		sh.WaitNS /= steady
		r.Host.add(sh.HostSplit)
		r.Shares = append(r.Shares, *sh)
	}
	sort.SliceStable(r.Shares, func(a, b int) bool { return r.Shares[a].total() > r.Shares[b].total() })
	r.TTFT, r.TPOT = tokenTimes(m.times)
	return r
}

func (h HostSplit) total() float64 { return h.FrameworkNS + h.LaunchNS + h.WaitNS }

// tokenTimes returns the quantiles of the time to first token and of the
// time per output token over the inferences.
func tokenTimes(times []InferenceTimes) (ttft, tpot Quantiles) {
	var first, per []float64
	for _, t := range times {
		for k, at := range t.Tokens {
			if k == 0 {
				first = append(first, float64(at-t.Start))
			} else {
				per = append(per, float64(at-t.Tokens[k-1]))
			}
		}
	}
	return quantiles(first), quantiles(per)
}

// quantiles returns the median and the 10th and 90th percentiles
// (nearest rank), sorting v.
func quantiles(v []float64) Quantiles {
	if len(v) == 0 {
		return Quantiles{}
	}
	slices.Sort(v)
	n := len(v)
	med := v[n/2]
	if n%2 == 0 {
		med = (v[n/2-1] + v[n/2]) / 2
	}
	rank := func(p float64) float64 { return v[max(int(math.Ceil(p*float64(n)))-1, 0)] }
	return Quantiles{P10: rank(0.1), Median: med, P90: rank(0.9)}
}

// union is the length of the union of the spans within [from, to]. Spans
// come in launch order, which is start order on one stream; they are
// sorted only when they are not.
func union(spans [][2]int64, from, to int64) int64 {
	if !slices.IsSortedFunc(spans, func(a, b [2]int64) int { return cmpInt(a[0], b[0]) }) {
		spans = slices.Clone(spans)
		slices.SortFunc(spans, func(a, b [2]int64) int { return cmpInt(a[0], b[0]) })
	}
	var total int64
	curS, curE := int64(math.MinInt64), int64(math.MinInt64)
	for _, sp := range spans {
		s, e := max(sp[0], from), min(sp[1], to)
		if e <= s {
			continue
		}
		if s > curE {
			if curE > curS {
				total += curE - curS
			}
			curS, curE = s, e
		} else {
			curE = max(curE, e)
		}
	}
	if curE > curS {
		total += curE - curS
	}
	return total
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
