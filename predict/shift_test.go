package predict

import (
	"math"
	"slices"
	"testing"
)

// uDistribution against counting every arrangement of m old and n new
// values (each subset of positions for the old ones, U the number of
// (old, new) pairs with the new one first), and the binomial total.
func TestUDistribution(t *testing.T) {
	for _, sz := range [][2]int{{1, 1}, {2, 3}, {3, 3}, {4, 4}, {3, 7}, {6, 6}, {5, 8}} {
		m, n := sz[0], sz[1]
		counts := make([]float64, m*n+1)
		for mask := 0; mask < 1<<(m+n); mask++ {
			if popcount(mask) != m {
				continue
			}
			u, newSeen := 0, 0
			for pos := 0; pos < m+n; pos++ {
				if mask&(1<<pos) != 0 {
					u += newSeen
				} else {
					newSeen++
				}
			}
			counts[u]++
		}
		var total float64
		for _, c := range counts {
			total += c
		}
		got := uDistribution(m, n)
		for u := range counts {
			if math.Abs(got[u]-counts[u]/total) > 1e-12 {
				t.Errorf("m=%d n=%d: P(U=%d) = %g, want %g", m, n, u, got[u], counts[u]/total)
			}
		}
	}
}

func popcount(x int) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

// The critical values of the two-sided Mann-Whitney test at 0.05 (the
// tables' largest U that rejects, plus one): none for 3 + 3 runs, the
// whole range for 4 + 4, the 6th pair from each end for 6 + 6.
func TestUCritical(t *testing.T) {
	for _, tc := range []struct{ m, n, want int }{
		{3, 3, 0}, {4, 4, 1}, {5, 5, 3}, {6, 6, 6}, {8, 8, 14}, {10, 10, 24}, {20, 20, 128},
	} {
		if got := uCritical(tc.m, tc.n, 0.025); got != tc.want {
			t.Errorf("uCritical(%d, %d) = %d, want %d", tc.m, tc.n, got, tc.want)
		}
	}
	// The normal approximation, used for very large samples, lands near
	// the exact value.
	exact := uCritical(60, 60, 0.025)
	mu, sd := 1800.0, math.Sqrt(3600*121/12.0)
	approx := int(math.Floor(mu - 1.959964*sd + 0.5))
	if d := exact - approx; d < -3 || d > 3 {
		t.Errorf("exact %d, normal approximation %d", exact, approx)
	}
}

// The interval of the ratio: SYNTHETIC samples, a 20% change with the
// jitter of jitter6, and the edge cases.
func TestRatioInterval(t *testing.T) {
	old := make([]float64, 6)
	cur := make([]float64, 6)
	for i, j := range jitter6 {
		old[i] = 1e6 * (1 + j)
		cur[i] = 1.2e6 * (1 + jitter6[(i+2)%6])
	}
	iv, rng, ok := ratioInterval(old, cur, 0.95)
	if !ok || rng || !(iv.Lo < 0.2 && 0.2 < iv.Hi) || !(iv.Lo <= iv.Center && iv.Center <= iv.Hi) || iv.Lo < 0.1 || iv.Hi > 0.3 {
		t.Errorf("6+6 runs, +20%%: %+v range %v ok %v", iv, rng, ok)
	}
	// The same as the 6th smallest and 6th largest of the 36 pair ratios.
	var d []float64
	for _, x := range old {
		for _, y := range cur {
			d = append(d, y/x-1)
		}
	}
	slices.Sort(d)
	if !near(iv.Lo, d[5], 1e-12) || !near(iv.Hi, d[30], 1e-12) {
		t.Errorf("bounds %g %g, want the pair ratios %g %g", iv.Lo, iv.Hi, d[5], d[30])
	}
	// No change: the interval holds 0.
	if iv, _, _ := ratioInterval(old, old, 0.95); !(iv.Lo < 0 && iv.Hi > 0) || iv.Center != 0 {
		t.Errorf("no change: %+v", iv)
	}
	// 3 + 3 runs cannot give a 95% interval: the range of the pair ratios.
	if iv, rng, ok := ratioInterval(old[:3], cur[:3], 0.95); !ok || !rng || !near(iv.Lo, 1.2*0.99/1.01-1, 1e-12) || !near(iv.Hi, 1.2*1.03/0.98-1, 1e-12) {
		t.Errorf("3+3 runs: %+v range %v", iv, rng)
	}
	for _, bad := range [][2][]float64{{nil, {1}}, {{1}, {0}}, {{-1}, {1}}, {{math.Inf(1)}, {1}}} {
		if _, _, ok := ratioInterval(bad[0], bad[1], 0.95); ok {
			t.Errorf("ratioInterval(%v, %v) ok", bad[0], bad[1])
		}
	}
}
