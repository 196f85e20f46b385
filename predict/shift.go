package predict

import (
	"math"
	"slices"
)

// ratioInterval estimates the ratio new/old of two samples of positive
// values and its confidence interval without assuming a distribution: the
// Hodges-Lehmann estimate, the median of the ratios y/x of every pair of
// an old value x and a new value y, and the interval of the ratios r for
// which the Mann-Whitney U test (two-sided, at 1 - conf) would not tell
// old x r from new, the order statistics k and mn+1-k of the m x n pair
// ratios (Bauer 1972). The test is the one Diff's p-values come from, so
// with Alpha = 1 - conf the interval leaves out 1 about when the change is
// significant (benchmath's test handles ties its own way). With too few
// values for the confidence (3 + 3 at 95%), rangeOnly is true and the
// bounds are the smallest and the largest pair ratio. The results are
// relative changes, ratio - 1; ok is false when a sample is empty or holds
// a value that is not positive.
func ratioInterval(old, new []float64, conf float64) (iv Interval, rangeOnly, ok bool) {
	m, n := len(old), len(new)
	if m == 0 || n == 0 {
		return iv, false, false
	}
	d := make([]float64, 0, m*n)
	for _, x := range old {
		for _, y := range new {
			if !(x > 0) || !(y > 0) || math.IsInf(x, 0) || math.IsInf(y, 0) {
				return iv, false, false
			}
			d = append(d, math.Log(y/x))
		}
	}
	slices.Sort(d)
	center := d[len(d)/2]
	if len(d)%2 == 0 {
		center = (d[len(d)/2-1] + d[len(d)/2]) / 2
	}
	k := uCritical(m, n, (1-conf)/2)
	lo, hi := d[0], d[len(d)-1]
	if k < 1 {
		rangeOnly = true
	} else {
		lo, hi = d[k-1], d[len(d)-k]
	}
	return Interval{math.Exp(center) - 1, math.Exp(lo) - 1, math.Exp(hi) - 1}, rangeOnly, true
}

// uCritical is the largest k with P(U <= k-1) <= tail, U the Mann-Whitney
// statistic of samples of m and n values under the null hypothesis (no
// ties): 0 when even P(U = 0) is above tail. It is exact up to m x n =
// 2^20, from a normal approximation beyond.
func uCritical(m, n int, tail float64) int {
	if m*n > 1<<20 {
		mu := float64(m*n) / 2
		sd := math.Sqrt(float64(m*n) * float64(m+n+1) / 12)
		z := math.Sqrt2 * math.Erfinv(1-2*tail)
		return max(0, int(math.Floor(mu-z*sd+0.5)))
	}
	p := uDistribution(m, n)
	k, cum := 0, 0.0
	for k < len(p) && cum+p[k] <= tail {
		cum += p[k]
		k++
	}
	return k
}

// uDistribution is the null distribution of the Mann-Whitney U statistic
// of samples of m and n values: P(U = u) for u = 0 ... m x n. The number
// of arrangements with U = u is the coefficient of q^u in the Gaussian
// binomial coefficient [m+n choose m]_q = prod_{i=1..m} (1 - q^(n+i)) /
// (1 - q^i), built up factor by factor as power series truncated at
// degree m x n (truncation is exact: a coefficient depends only on those
// below it).
func uDistribution(m, n int) []float64 {
	size := m*n + 1
	c := make([]float64, size)
	c[0] = 1
	for i := 1; i <= m; i++ {
		for d := i; d < size; d++ { // divide by 1 - q^i
			c[d] += c[d-i]
		}
		for d := size - 1; d >= n+i; d-- { // multiply by 1 - q^(n+i)
			c[d] -= c[d-n-i]
		}
	}
	var total float64
	for _, v := range c {
		total += v
	}
	for i := range c {
		c[i] /= total
	}
	return c
}
