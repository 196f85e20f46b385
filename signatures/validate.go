package signatures

import (
	"errors"
	"fmt"
)

// Validate checks what the rest of kreplay assumes of a set: a known
// format version; every signature present, with a unique ID, a known
// tier, a count of at least 1, and non-negative sizes (input shapes and
// strides, launch dimensions, bytes, GEMM and collective sizes, traced
// times); part_of naming another signature of the set, without cycles;
// and timeline entries naming a signature of the set, with non-negative
// durations. Its error names the signature (by ID, or by index when it
// has none) and the field. ReadSet calls it on every set it reads.
func (s *Set) Validate() error {
	if s.Version != FormatVersion {
		return fmt.Errorf("signature set version %d, want %d", s.Version, FormatVersion)
	}
	ids := make(map[string]int, len(s.Signatures))
	for i, sig := range s.Signatures {
		if sig == nil || sig.ID == "" {
			return fmt.Errorf("signature %d has no id", i)
		}
		if j, dup := ids[sig.ID]; dup {
			return fmt.Errorf("signature %s: id also used by signature %d (of %d)", sig.ID, j, i)
		}
		ids[sig.ID] = i
		if err := sig.validate(); err != nil {
			return fmt.Errorf("signature %s: %w", sig.ID, err)
		}
	}
	if err := s.validatePartOf(ids); err != nil {
		return err
	}
	for i, inv := range s.Timeline {
		if inv.Sig < 0 || inv.Sig >= len(s.Signatures) {
			return fmt.Errorf("timeline entry %d names signature %d of %d", i, inv.Sig, len(s.Signatures))
		}
		if inv.Dur < 0 {
			return fmt.Errorf("timeline entry %d (signature %s): dur_ns %d, negative", i, s.Signatures[inv.Sig].ID, inv.Dur)
		}
	}
	return nil
}

// validatePartOf checks that every part_of names another signature of the
// set and that following part_of from any signature ends.
func (s *Set) validatePartOf(ids map[string]int) error {
	for _, sig := range s.Signatures {
		if _, ok := ids[sig.PartOf]; sig.PartOf != "" && !ok {
			return fmt.Errorf("signature %s: part_of %q names no signature of the set", sig.ID, sig.PartOf)
		}
	}
	for _, sig := range s.Signatures {
		seen := map[string]bool{sig.ID: true}
		for p := sig.PartOf; p != ""; p = s.Signatures[ids[p]].PartOf {
			if seen[p] {
				return fmt.Errorf("signature %s: part_of makes a cycle through %s", sig.ID, p)
			}
			seen[p] = true
		}
	}
	return nil
}

// validate checks one signature's own fields.
func (sig *Signature) validate() error {
	if sig.Tier < TierMemory || sig.Tier > TierKernel {
		return fmt.Errorf("tier %d", sig.Tier)
	}
	if sig.Count < 1 {
		return fmt.Errorf("count %d, want at least 1", sig.Count)
	}
	var errs []error
	nonNeg := func(field string, vs ...int64) {
		for _, v := range vs {
			if v < 0 {
				errs = append(errs, fmt.Errorf("%s %d, negative", field, v))
				return
			}
		}
	}
	for i, in := range sig.Inputs {
		nonNeg(fmt.Sprintf("inputs[%d].shape", i), in.Shape...)
		nonNeg(fmt.Sprintf("inputs[%d].strides", i), in.Strides...)
		for j, t := range in.List {
			nonNeg(fmt.Sprintf("inputs[%d].list[%d].shape", i, j), t.Shape...)
			nonNeg(fmt.Sprintf("inputs[%d].list[%d].strides", i, j), t.Strides...)
		}
	}
	if l := sig.Launch; l != nil {
		nonNeg("launch.grid", l.Grid[:]...)
		nonNeg("launch.block", l.Block[:]...)
		nonNeg("launch.shared_mem", l.SharedMem)
		nonNeg("launch.registers", l.Registers)
	}
	t := sig.TracedNS
	nonNeg("traced_ns", t.Total, t.Min, t.Median, t.Mean, t.Max)
	if m := sig.Memory; m != nil {
		nonNeg("memory.bytes", m.Bytes)
	}
	if g := sig.GEMM; g != nil {
		nonNeg("gemm.m/n/k/batch", g.M, g.N, g.K, g.Batch)
		nonNeg("gemm.lda/ldb/ldc", g.LDA, g.LDB, g.LDC)
		nonNeg("gemm.stride_a/b/c", g.StrideA, g.StrideB, g.StrideC)
	}
	if c := sig.Collective; c != nil {
		nonNeg("collective.nelems/out_nelems/ranks", c.Nelems, c.OutNelems, c.Ranks)
	}
	if tp := sig.Tensor; tp != nil {
		nonNeg("tensor.numel", tp.Numel)
		nonNeg("tensor.shape", tp.Shape...)
		nonNeg("tensor.bytes", tp.Bytes)
	}
	return errors.Join(errs...)
}
