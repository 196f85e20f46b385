package signatures

import (
	"slices"
	"strings"
	"testing"
)

func TestDeriveTensorElementwise(t *testing.T) {
	bf := func(shape ...int64) Input { return Input{Type: "c10::BFloat16", Shape: shape} }
	tests := []struct {
		name  string
		ins   []Input
		shape []int64
		err   string
	}{
		{"same shapes", []Input{bf(4, 8), bf(4, 8)}, []int64{4, 8}, ""},
		{"broadcast", []Input{bf(4, 8), bf(1, 8)}, []int64{4, 8}, ""},
		// The FP8 prefill's amax path: abs(w, out=torch.empty(0)).
		{"empty out= resized", []Input{bf(2048, 2048), bf(0)}, []int64{2048, 2048}, ""},
		{"no broadcast", []Input{bf(4, 8), bf(3, 8)}, nil, "do not broadcast"},
		{"empty out= and no broadcast", []Input{bf(4, 8), bf(3, 8), bf(0)}, nil, "do not broadcast"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := deriveTensor(ClassElementwise, "aten::abs", tc.ins)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(p.Shape, tc.shape) {
				t.Errorf("shape %v, want %v", p.Shape, tc.shape)
			}
		})
	}
}
