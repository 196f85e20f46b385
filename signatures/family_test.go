package signatures

import (
	"fmt"
	"slices"
	"testing"
)

// famSig is a tier-3 cat of a KV cache [1,16,n,64] and one new row, with
// its traced total time.
func famSig(id string, n int64, mod func(*Signature)) *Signature {
	s := &Signature{
		ID: id, Label: fmt.Sprintf("cat n=%d", n), Tier: TierKernel, Class: ClassCat, Activity: ActivityKernel,
		Count: 24, Kernel: "CatArrayBatchedCopy", Op: "aten::cat",
		Inputs: []Input{{Type: "TensorList", List: []Tensor{
			{Shape: []int64{1, 16, n, 64}, Strides: []int64{16 * n * 64, n * 64, 64, 1}},
			{Shape: []int64{1, 16, 1, 64}, Strides: []int64{1024, 64, 64, 1}},
		}}, {Type: "Scalar", Value: "-2"}},
		Launch:   &Launch{Grid: [3]int64{(n + 7) / 8, 2, 1}, Block: [3]int64{512, 1, 1}, Registers: 25},
		TracedNS: Stats{Total: 1000 * n, Median: 40 * n},
		Tensor:   &TensorParams{Numel: 1024 * (n + 1), Shape: []int64{1, 16, n + 1, 64}, Dims: []int64{-2}, Bytes: 4096 * (n + 1)},
	}
	if mod != nil {
		mod(s)
	}
	return s
}

// famSet is a set of cats for n = 10, 11, ... with mod applied to the
// i-th.
func famSet(k int, mod func(i int, s *Signature)) *Set {
	set := &Set{}
	for i := range k {
		s := famSig(fmt.Sprintf("s%d", i), int64(10+i), nil)
		if mod != nil {
			mod(i, s)
		}
		set.Signatures = append(set.Signatures, s)
	}
	return set
}

func TestFamilies(t *testing.T) {
	tests := []struct {
		name string
		set  *Set
		want string // the families' members as [id:n ...], one [] per family
	}{
		{"one family", famSet(5, nil), "[[s0:10 s1:11 s2:12 s3:13 s4:14]]"},
		{"too few", famSet(3, nil), "[]"},
		{"unsorted, sorted by n", famSet(4, func(i int, s *Signature) { *s = *famSig(s.ID, int64(20-i), nil) }),
			"[[s3:17 s2:18 s1:19 s0:20]]"},
		{"n plus a constant", famSet(4, func(i int, s *Signature) {
			s.Inputs[0].List[1].Shape[2] = int64(13 + i)
			s.Inputs[0].List[1].Strides = []int64{16 * 64 * int64(13+i), 64 * int64(13+i), 64, 1}
		}), "[[s0:10 s1:11 s2:12 s3:13]]"},
		{"n plus a varying amount", famSet(4, func(i int, s *Signature) { s.Inputs[0].List[1].Shape[2] = int64(13 + 2*i) }), "[]"},
		{"two varying dims in a tensor", famSet(4, func(i int, s *Signature) { s.Inputs[0].List[0].Shape[3] = int64(64 + i) }), "[]"},
		{"a stride not affine", famSet(4, func(i int, s *Signature) { s.Inputs[0].List[0].Strides[0] = int64(i * i) }), "[]"},
		{"a size not affine", famSet(4, func(i int, s *Signature) { s.Tensor.Bytes = int64(i * i) }), "[]"},
		{"another kernel splits", famSet(8, func(i int, s *Signature) {
			if i%2 == 1 {
				s.Kernel = "other"
			}
		}), "[[s1:11 s3:13 s5:15 s7:17] [s0:10 s2:12 s4:14 s6:16]]"},
		{"another block splits", famSet(5, func(i int, s *Signature) {
			if i == 4 {
				s.Launch.Block[0] = 256
			}
		}), "[[s0:10 s1:11 s2:12 s3:13]]"},
		{"another scalar splits", famSet(5, func(i int, s *Signature) {
			if i == 4 {
				s.Inputs[1].Value = "-1"
			}
		}), "[[s0:10 s1:11 s2:12 s3:13]]"},
		{"the prefill's left out", famSet(6, func(i int, s *Signature) {
			if i == 2 {
				s.Inputs[0].List[1].Shape[2] = 12
			}
		}), "[[s0:10 s1:11 s3:13 s4:14 s5:15]]"},
		{"two outliers: none", famSet(6, func(i int, s *Signature) {
			if i == 2 || i == 4 {
				s.Inputs[0].List[1].Shape[2] = 12
			}
		}), "[]"},
		{"an integer scalar that follows n", famSet(4, func(i int, s *Signature) {
			s.Inputs = append(s.Inputs, Input{Type: "Scalar", Value: fmt.Sprint(10 + i)}) // an attention's maximum KV length
		}), "[[s0:10 s1:11 s2:12 s3:13]]"},
		{"an integer scalar not affine in n", famSet(4, func(i int, s *Signature) {
			s.Inputs = append(s.Inputs, Input{Type: "Scalar", Value: fmt.Sprint(i * i)})
		}), "[]"},
		{"another non-integer scalar splits", famSet(5, func(i int, s *Signature) {
			s.Inputs = append(s.Inputs, Input{Type: "Scalar", Value: "0.125"})
			if i == 4 {
				s.Inputs[2].Value = "0.25"
			}
		}), "[[s0:10 s1:11 s2:12 s3:13]]"},
		{"parts and their owners left out", famSet(6, func(i int, s *Signature) {
			if i == 5 {
				s.PartOf = "s4"
			}
		}), "[[s0:10 s1:11 s2:12 s3:13]]"},
		{"unreplayable left out", famSet(5, func(i int, s *Signature) {
			if i == 0 {
				s.Unreplayable = "unreplayable: no"
			}
		}), "[[s1:11 s2:12 s3:13 s4:14]]"},
		{"shapes equal: no family", famSet(5, func(i int, s *Signature) { *s = *famSig(s.ID, 10, nil) }), "[]"},
		{"shapes equal, a view's stride follows n", famSet(4, func(i int, s *Signature) {
			*s = *famSig(s.ID, 10, nil)
			s.Inputs[0].List[0].Strides[2] = int64(70 + i) // a row of a buffer the cache's length
		}), "[[s0:70 s1:71 s2:72 s3:73]]"},
		{"shapes equal, a stride not affine", famSet(4, func(i int, s *Signature) {
			*s = *famSig(s.ID, 10, nil)
			s.Inputs[0].List[0].Strides[2] = int64(70 + i*i)
			s.Inputs[0].List[0].Strides[3] = int64(1 + i)
		}), "[]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := familyIDs(Families(tt.set)); got != tt.want {
				t.Errorf("families %s, want %s", got, tt.want)
			}
		})
	}
}

// familyIDs writes families as [[id:n ...] ...].
func familyIDs(fs []Family) string {
	out := make([][]string, len(fs))
	for i, f := range fs {
		out[i] = []string{}
		for _, m := range f.Members {
			out[i] = append(out[i], fmt.Sprintf("%s:%d", m.ID, m.N))
		}
	}
	return fmt.Sprint(out)
}

// Families are sorted by their traced time, the largest first.
func TestFamiliesOrder(t *testing.T) {
	set := famSet(8, func(i int, s *Signature) {
		if i >= 4 {
			s.Kernel = "other"
			s.TracedNS.Total *= 10
		}
	})
	if got, want := familyIDs(Families(set)), "[[s4:14 s5:15 s6:16 s7:17] [s0:10 s1:11 s2:12 s3:13]]"; got != want {
		t.Errorf("families %s, want %s", got, want)
	}
}

// The embedded BLOOM-560M generate (a 32-token prompt, 16 new tokens)
// has 27 families of 389 of its 481 signatures, 22.5% of its traced
// time: the decode steps' attention (cat of the KV cache, baddbmm, bmm,
// softmax, the mask's add), masks and positions, each over the cache
// length n (32..47), and ops on equal shapes whose views' strides or
// integer scalars follow it; the prefill's member is left out where it
// has two sizes that vary.
func TestFamiliesGenerate(t *testing.T) {
	set := importEmbedded(t, "h100_bloom-560m_generate.trace.json.gz")
	fs := Families(set)
	members, share := familyShare(t, set, fs)
	if len(fs) != 27 || members != 389 || len(set.Signatures) != 481 {
		t.Errorf("%d families of %d of %d signatures, want 27 of 389 of 481", len(fs), members, len(set.Signatures))
	}
	if share < 0.22 || share > 0.23 {
		t.Errorf("families hold %.1f%% of the traced time, want 22.5%%", 100*share)
	}
	named := []struct {
		label   string
		members int
		lo, hi  int64
	}{
		{"cat [[1,16,32,64] [1,16,1,64]] (n 32..46)", 15, 32, 46},
		{"baddbmm f16[16,1,33] f16[16,1,64] f16[16,64,33] (n 33..47)", 14, 33, 47},
		{"bmm f16[16,1,33] f16[16,33,64] (n 33..47)", 14, 33, 47},
		{"_softmax f16[1,16,1,33] (n 33..47)", 15, 33, 47},
	}
	for i, w := range named {
		j := slices.IndexFunc(fs, func(f Family) bool { return f.Label == w.label })
		if j < 0 {
			t.Errorf("no family %q", w.label)
			continue
		}
		if i == 0 && j != 0 {
			t.Errorf("family %q is number %d, want the first (the most traced time)", w.label, j)
		}
		ms := fs[j].Members
		if len(ms) != w.members || ms[0].N != w.lo || ms[len(ms)-1].N != w.hi {
			t.Errorf("family %q: %d members, n %d..%d; want %d, n %d..%d", w.label, len(ms), ms[0].N, ms[len(ms)-1].N, w.members, w.lo, w.hi)
		}
	}
}

// familyShare checks every family's members (in the set, sorted by n, no
// ID twice) and returns how many there are and their share of the
// traced time.
func familyShare(t *testing.T, set *Set, fs []Family) (int, float64) {
	t.Helper()
	var total, in int64
	for _, s := range set.Signatures {
		total += s.TracedNS.Total
	}
	seen := map[string]bool{}
	members := 0
	for _, f := range fs {
		for i, m := range f.Members {
			s := set.ByID(m.ID)
			if s == nil || seen[m.ID] || (i > 0 && m.N <= f.Members[i-1].N) {
				t.Fatalf("family %s: member %d %s: in the set %v, twice %v, out of order", f.Label, i, m.ID, s != nil, seen[m.ID])
			}
			seen[m.ID] = true
			in += s.TracedNS.Total
			members++
		}
	}
	return members, float64(in) / float64(total)
}
