package tier3

import (
	"math"
	"testing"
)

// The float64 reference of attention (attnReferenceHead) that the GPU
// tests compare with, and its own test against hand-computed heads.

// attnData is a q, k, v or output tensor as float64 in row-major order of
// its shape, [B, H, S, D] or, for bshd, [B, S, H, D].
type attnData struct {
	x       []float64
	h, s, d int64
	bshd    bool
}

func (a attnData) at(b, h, s, d int64) float64 {
	if a.bshd {
		return a.x[((b*a.s+s)*a.h+h)*a.d+d]
	}
	return a.x[((b*a.h+h)*a.s+s)*a.d+d]
}

// attnBiasData is an attention bias as float64 in row-major order of its
// shape [B or 1, H or 1, Sq or 1, Sk or 1]; a dim of 1 broadcasts.
type attnBiasData struct {
	x     []float64
	shape [4]int64
}

// at is bias element (b, h, i, j); 0 for a nil bias.
func (a *attnBiasData) at(b, h, i, j int64) float64 {
	if a == nil {
		return 0
	}
	var off int64
	for d, x := range [4]int64{b, h, i, j} {
		if a.shape[d] == 1 {
			x = 0
		}
		off = off*a.shape[d] + x
	}
	return a.x[off]
}

// attnReferenceHead computes one (batch, head) of softmax(scale q k^T +
// bias + mask) v in float64 (bias nil: none): out [Sq*D] and lse [Sq]. A
// row that sees no key gets zeros and lse +inf.
func attnReferenceHead(p *attnParams, q, k, v attnData, bias *attnBiasData, b, h int64) (out, lse []float64) {
	out = make([]float64, p.Sq*p.D)
	lse = make([]float64, p.Sq)
	hk := h / (p.Hq / p.Hk)
	s := make([]float64, p.Sk)
	for i := int64(0); i < p.Sq; i++ {
		n := p.Sk
		if p.Causal {
			n = min(max(i+p.Offset+1, 0), p.Sk)
		}
		if n == 0 {
			lse[i] = math.Inf(1)
			continue
		}
		mx := math.Inf(-1)
		for j := int64(0); j < n; j++ {
			var dot float64
			for d := int64(0); d < p.D; d++ {
				dot += q.at(b, h, i, d) * k.at(b, hk, j, d)
			}
			s[j] = dot*p.Scale + bias.at(b, h, i, j)
			mx = max(mx, s[j])
		}
		var sum float64
		for j := int64(0); j < n; j++ {
			s[j] = math.Exp(s[j] - mx)
			sum += s[j]
		}
		for j := int64(0); j < n; j++ {
			w := s[j] / sum
			for d := int64(0); d < p.D; d++ {
				out[i*p.D+d] += w * v.at(b, hk, j, d)
			}
		}
		lse[i] = mx + math.Log(sum)
	}
	return out, lse
}

func TestAttentionReference(t *testing.T) {
	// One head, D = 1: q = [1, 2], k = [0, 1], v = [10, 20], scale 1.
	// Row 0 scores (0, 1): out = (10 + 20e) / (1 + e), lse = log(1 + e).
	// Row 1 scores (0, 2): out = (10 + 20e^2) / (1 + e^2), lse = log(1 + e^2).
	e := math.E
	q := attnData{x: []float64{1, 2}, h: 1, s: 2, d: 1}
	kv := func(x ...float64) attnData { return attnData{x: x, h: 1, s: int64(len(x)), d: 1} }
	k, v := kv(0, 1), kv(10, 20)
	row0, row1 := (10+20*e)/(1+e), (10+20*e*e)/(1+e*e)
	lse0, lse1 := math.Log(1+e), math.Log(1+e*e)
	for _, tt := range []struct {
		name         string
		p            attnParams
		q            attnData
		k, v         attnData
		bias         *attnBiasData
		out, wantLSE []float64
	}{
		{"full", attnParams{Hq: 1, Hk: 1, Sq: 2, Sk: 2, D: 1, Scale: 1}, q, k, v, nil,
			[]float64{row0, row1}, []float64{lse0, lse1}},
		// Query 0 sees key 0 only.
		{"causal", attnParams{Hq: 1, Hk: 1, Sq: 2, Sk: 2, D: 1, Scale: 1, Causal: true}, q, k, v, nil,
			[]float64{10, row1}, []float64{0, lse1}},
		// One query aligned with the last key sees both.
		{"bottom right", attnParams{Hq: 1, Hk: 1, Sq: 1, Sk: 2, D: 1, Scale: 1, Causal: true, Offset: 1},
			attnData{x: []float64{1}, h: 1, s: 1, d: 1}, k, v, nil, []float64{row0}, []float64{lse0}},
		// Two queries, one key, bottom right: query 0 sees nothing.
		{"no key", attnParams{Hq: 1, Hk: 1, Sq: 2, Sk: 1, D: 1, Scale: 1, Causal: true, Offset: -1}, q,
			kv(0), kv(10), nil, []float64{0, 10}, []float64{math.Inf(1), 0}},
		// Scale 2 on scores (0, 1) is scale 1 on (0, 2).
		{"scale", attnParams{Hq: 1, Hk: 1, Sq: 1, Sk: 2, D: 1, Scale: 2},
			attnData{x: []float64{1}, h: 1, s: 1, d: 1}, k, v, nil, []float64{row1}, []float64{lse1}},
		// A bias (0, 1) on scores (0, 1) gives scores (0, 2); broadcast
		// over rows, row 0's scores (0, 1) become (0, 2) and row 1's (0, 3).
		{"bias", attnParams{Hq: 1, Hk: 1, Sq: 1, Sk: 2, D: 1, Scale: 1},
			attnData{x: []float64{1}, h: 1, s: 1, d: 1}, k, v, &attnBiasData{x: []float64{0, 1}, shape: [4]int64{1, 1, 1, 2}},
			[]float64{row1}, []float64{lse1}},
		{"bias broadcast", attnParams{Hq: 1, Hk: 1, Sq: 2, Sk: 2, D: 1, Scale: 1}, q, k, v,
			&attnBiasData{x: []float64{0, 1}, shape: [4]int64{1, 1, 1, 2}},
			[]float64{row1, (10 + 20*e*e*e) / (1 + e*e*e)}, []float64{lse1, math.Log(1 + e*e*e)}},
		// Bias and causal mask: row 0 sees key 0 only, whatever its bias.
		{"bias causal", attnParams{Hq: 1, Hk: 1, Sq: 2, Sk: 2, D: 1, Scale: 1, Causal: true}, q, k, v,
			&attnBiasData{x: []float64{5, 7, -1, 0}, shape: [4]int64{1, 1, 2, 2}},
			[]float64{10, (10*math.Exp(-1) + 20*e*e) / (math.Exp(-1) + e*e)}, []float64{5, math.Log(math.Exp(-1) + e*e)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, lse := attnReferenceHead(&tt.p, tt.q, tt.k, tt.v, tt.bias, 0, 0)
			for i := range out {
				if math.Abs(out[i]-tt.out[i]) > 1e-12 || !(math.Abs(lse[i]-tt.wantLSE[i]) <= 1e-12 || lse[i] == tt.wantLSE[i]) {
					t.Errorf("row %d: out %v lse %v, want %v %v", i, out[i], lse[i], tt.out[i], tt.wantLSE[i])
				}
			}
		})
	}
	// Grouped query heads: heads 0 and 1 of q read k/v head 0, 2 and 3 head 1.
	p := attnParams{B: 1, Hq: 4, Hk: 2, Sq: 1, Sk: 2, D: 1, Scale: 1}
	q4 := attnData{x: []float64{1, 1, 2, 2}, h: 4, s: 1, d: 1}
	k2 := attnData{x: []float64{0, 1, 0, 1}, h: 2, s: 2, d: 1}
	v2 := attnData{x: []float64{10, 20, 1, 2}, h: 2, s: 2, d: 1}
	for h, want := range []float64{row0, row0, row1 / 10, row1 / 10} {
		if out, _ := attnReferenceHead(&p, q4, k2, v2, nil, 0, int64(h)); math.Abs(out[0]-want) > 1e-12 {
			t.Errorf("head %d: %v, want %v", h, out[0], want)
		}
	}
}
