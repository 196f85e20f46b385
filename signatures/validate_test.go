package signatures

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// validSet is a small set that passes Validate: a GEMM, a reduce kernel
// part of it, and a memset, with a timeline over the three.
func validSet() *Set {
	return &Set{
		Version: FormatVersion,
		Signatures: []*Signature{
			{ID: "gemm", Tier: TierLibrary, Count: 2, Op: "aten::mm",
				Inputs: []Input{{Type: "c10::Half", Shape: []int64{64, 32}, Strides: []int64{32, 1}},
					{Type: "TensorList", List: []Tensor{{Shape: []int64{4}, Strides: []int64{1}}}}},
				Launch:   &Launch{Grid: [3]int64{4, 1, 1}, Block: [3]int64{128, 1, 1}},
				TracedNS: Stats{Total: 20, Min: 10, Median: 10, Mean: 10, Max: 10},
				GEMM:     &GEMM{M: 64, N: 64, K: 32, Batch: 1, LDA: 64, LDB: 32, LDC: 64}},
			{ID: "reduce", Tier: TierKernel, Count: 2, PartOf: "gemm",
				Tensor: &TensorParams{Numel: 4096, Shape: []int64{64, 64}, Dims: []int64{-1}}},
			{ID: "memset", Tier: TierMemory, Count: 1, Memory: &MemoryOp{Bytes: 256}},
		},
		Timeline: Timeline{{Sig: 0, Dur: 10}, {Sig: 1, Dur: 1}, {Sig: 0, Dur: 10}, {Sig: 1, Dur: 1}, {Sig: 2, Dur: 2}},
	}
}

// Each rule of Validate refuses a set that breaks it, with an error
// naming the signature and the field; a negative reduction dim (counted
// from the end) is not refused.
func TestValidate(t *testing.T) {
	if err := validSet().Validate(); err != nil {
		t.Fatalf("the valid set: %v", err)
	}
	for _, tc := range []struct {
		name   string
		break_ func(s *Set)
		want   string
	}{
		{"version", func(s *Set) { s.Version = 7 }, "signature set version 7, want 1"},
		{"nil signature", func(s *Set) { s.Signatures[1] = nil }, "signature 1 has no id"},
		{"no id", func(s *Set) { s.Signatures[2].ID = "" }, "signature 2 has no id"},
		{"duplicate id", func(s *Set) { s.Signatures[2].ID = "gemm"; s.Signatures[2].PartOf = "" }, "signature gemm: id also used by signature 0"},
		{"tier", func(s *Set) { s.Signatures[0].Tier = 9 }, "signature gemm: tier 9"},
		{"count zero", func(s *Set) { s.Signatures[2].Count = 0 }, "signature memset: count 0, want at least 1"},
		{"count negative", func(s *Set) { s.Signatures[0].Count = -3 }, "signature gemm: count -3, want at least 1"},
		{"shape", func(s *Set) { s.Signatures[0].Inputs[0].Shape[1] = -32 }, "signature gemm: inputs[0].shape -32, negative"},
		{"strides", func(s *Set) { s.Signatures[0].Inputs[0].Strides[0] = -1 }, "signature gemm: inputs[0].strides -1, negative"},
		{"list shape", func(s *Set) { s.Signatures[0].Inputs[1].List[0].Shape[0] = -4 }, "signature gemm: inputs[1].list[0].shape -4, negative"},
		{"list strides", func(s *Set) { s.Signatures[0].Inputs[1].List[0].Strides[0] = -1 }, "signature gemm: inputs[1].list[0].strides -1, negative"},
		{"grid", func(s *Set) { s.Signatures[0].Launch.Grid[2] = -1 }, "signature gemm: launch.grid -1, negative"},
		{"block", func(s *Set) { s.Signatures[0].Launch.Block[0] = -128 }, "signature gemm: launch.block -128, negative"},
		{"shared mem", func(s *Set) { s.Signatures[0].Launch.SharedMem = -1 }, "signature gemm: launch.shared_mem -1, negative"},
		{"traced", func(s *Set) { s.Signatures[0].TracedNS.Min = -5 }, "signature gemm: traced_ns -5, negative"},
		{"gemm m", func(s *Set) { s.Signatures[0].GEMM.M = -64 }, "signature gemm: gemm.m/n/k/batch -64, negative"},
		{"gemm ld", func(s *Set) { s.Signatures[0].GEMM.LDC = -1 }, "signature gemm: gemm.lda/ldb/ldc -1, negative"},
		{"gemm stride", func(s *Set) { s.Signatures[0].GEMM.StrideB = -2 }, "signature gemm: gemm.stride_a/b/c -2, negative"},
		{"memory bytes", func(s *Set) { s.Signatures[2].Memory.Bytes = -256 }, "signature memset: memory.bytes -256, negative"},
		{"collective", func(s *Set) { s.Signatures[2].Collective = &Collective{Nelems: -1} }, "signature memset: collective.nelems/out_nelems/ranks -1, negative"},
		{"tensor numel", func(s *Set) { s.Signatures[1].Tensor.Numel = -1 }, "signature reduce: tensor.numel -1, negative"},
		{"tensor shape", func(s *Set) { s.Signatures[1].Tensor.Shape[0] = -64 }, "signature reduce: tensor.shape -64, negative"},
		{"part_of missing", func(s *Set) { s.Signatures[1].PartOf = "nope" }, `signature reduce: part_of "nope" names no signature of the set`},
		{"part_of self", func(s *Set) { s.Signatures[2].PartOf = "memset" }, "signature memset: part_of makes a cycle through memset"},
		{"part_of cycle", func(s *Set) { s.Signatures[0].PartOf = "reduce" }, "signature gemm: part_of makes a cycle through gemm"},
		{"timeline index", func(s *Set) { s.Timeline[3].Sig = 3 }, "timeline entry 3 names signature 3 of 3"},
		{"timeline negative index", func(s *Set) { s.Timeline[0].Sig = -1 }, "timeline entry 0 names signature -1 of 3"},
		{"timeline dur", func(s *Set) { s.Timeline[4].Dur = -2 }, "timeline entry 4 (signature memset): dur_ns -2, negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := validSet()
			tc.break_(s)
			err := s.Validate()
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("error %v, want one starting %q", err, tc.want)
			}
			var buf bytes.Buffer
			if err := json.NewEncoder(&buf).Encode(s); err != nil {
				t.Fatal(err)
			}
			_, err = ReadSet(&buf, "x.json")
			if err == nil || !strings.HasPrefix(err.Error(), "x.json: "+tc.want) {
				t.Errorf("ReadSet's error %v, want one starting %q", err, "x.json: "+tc.want)
			}
		})
	}
}

// ReadSet never panics; a set it accepts passes Validate and reads back
// the same after WriteSet.
func FuzzReadSet(f *testing.F) {
	var buf bytes.Buffer
	if err := WriteSet(&buf, validSet()); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add(bytes.Replace(buf.Bytes(), []byte(`"count": 1`), []byte(`"count": 0`), 1))
	f.Add(bytes.Replace(buf.Bytes(), []byte(`"part_of": "gemm"`), []byte(`"part_of": "reduce"`), 1))
	set, err := Import(strings.NewReader(trace(goodOp, goodKernel)), "t.json", Options{})
	if err != nil {
		f.Fatal(err)
	}
	buf.Reset()
	if err := WriteSet(&buf, set); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	buf.Reset()
	if err := WriteSet(&buf, setPrefix(importEmbedded(f, "h100_bloom-560m_prefill.trace.json.gz"))); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ReadSet(bytes.NewReader(data), "fuzz.json")
		if err != nil {
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("ReadSet accepted a set that does not validate: %v", err)
		}
		var out bytes.Buffer
		if err := WriteSet(&out, s); err != nil {
			t.Fatalf("an accepted set does not write: %v", err)
		}
		back, err := ReadSet(bytes.NewReader(out.Bytes()), "back.json")
		if err != nil {
			t.Fatalf("an accepted set does not read back: %v", err)
		}
		if d := cmp.Diff(s, back, cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("round trip differs (-read +back):\n%s", d)
		}
	})
}

// setPrefix is a small valid part of an imported set: its signatures up
// to the first one part of another and that one (a part_of the set keeps),
// and the timeline entries of those.
func setPrefix(set *Set) *Set {
	n := min(len(set.Signatures), 6)
	for i, sig := range set.Signatures {
		if sig.PartOf != "" {
			n = max(i, indexOf(set, sig.PartOf)) + 1
			break
		}
	}
	out := *set
	out.Signatures, out.Timeline = nil, nil
	kept := map[string]bool{}
	for _, sig := range set.Signatures[:n] {
		kept[sig.ID] = true
	}
	for _, sig := range set.Signatures[:n] {
		c := *sig
		if !kept[c.PartOf] {
			c.PartOf = ""
		}
		out.Signatures = append(out.Signatures, &c)
	}
	for _, inv := range set.Timeline {
		if inv.Sig < n && len(out.Timeline) < 64 {
			out.Timeline = append(out.Timeline, inv)
		}
	}
	return &out
}

func indexOf(set *Set, id string) int {
	for i, sig := range set.Signatures {
		if sig.ID == id {
			return i
		}
	}
	return 0
}

// The trimmed set the fuzz seeds hold is valid and keeps a part_of.
func TestSetPrefix(t *testing.T) {
	s := setPrefix(importEmbedded(t, "h100_bloom-560m_prefill.trace.json.gz"))
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	parts := 0
	for _, sig := range s.Signatures {
		if sig.PartOf != "" {
			parts++
		}
	}
	if parts == 0 || len(s.Timeline) == 0 {
		t.Errorf("%d signatures, %d parts, %d timeline entries", len(s.Signatures), parts, len(s.Timeline))
	}
}
