package tier3

import (
	"strconv"
	"strings"

	"github.com/kreplay/kreplay/signatures"
)

// normShape is the part of a layer or RMS norm's input that is
// normalized: its trailing dims, named by the normalized_shape argument.
type normShape struct {
	axis   int   // the first normalized dim
	n      int64 // elements per row
	nshape []int64
}

// parseNormShape reads the normalized_shape argument of sig (its second
// input, "[d0, d1, ...]"), which must end the shape of the input x.
func parseNormShape(sig *signatures.Signature, x signatures.Input) (normShape, error) {
	var s normShape
	raw := rdArg(sig, 1).Value
	ns := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(raw), "["), "]"))
	if ns == "" {
		return s, rdUnsupported("%s: normalized_shape %q unreadable", sig.Op, raw)
	}
	for _, f := range strings.Split(ns, ",") {
		d, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		if err != nil {
			return s, rdUnsupported("%s: normalized_shape %q unreadable", sig.Op, raw)
		}
		s.nshape = append(s.nshape, d)
	}
	s.axis = len(x.Shape) - len(s.nshape)
	if s.axis < 0 {
		return s, rdUnsupported("%s: normalized_shape %v longer than input %v", sig.Op, s.nshape, x.Shape)
	}
	s.n = 1
	for i, d := range s.nshape {
		if x.Shape[s.axis+i] != d {
			return s, rdUnsupported("%s: normalized_shape %v does not end input %v", sig.Op, s.nshape, x.Shape)
		}
		s.n *= d
	}
	return s, nil
}

// statShape is the shape of a norm's per-row statistics (mean, rstd): the
// input's leading dims, then ones for the normalized dims.
func (s normShape) statShape(shape []int64) []int64 {
	out := append([]int64{}, shape[:s.axis]...)
	for range s.nshape {
		out = append(out, 1)
	}
	return out
}

// parseNormEps reads a norm's eps argument v, already trimmed and not
// empty.
func parseNormEps(sig *signatures.Signature, v string) (float64, error) {
	eps, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, rdUnsupported("%s: eps %q unreadable", sig.Op, v)
	}
	return eps, nil
}
