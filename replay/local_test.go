package replay

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSameKind(t *testing.T) {
	h200 := func(i int) LocalGPU { return LocalGPU{Index: i, Name: "NVIDIA H200"} }
	h100 := func(i int) LocalGPU { return LocalGPU{Index: i, Name: "NVIDIA H100 80GB HBM3"} }
	tests := []struct {
		name       string
		gpus       []LocalGPU
		first      int
		wantSame   []int
		wantOthers []LocalGPU
	}{
		{"one", []LocalGPU{h200(0)}, 0, []int{0}, nil},
		{"two alike", []LocalGPU{h200(0), h200(1)}, 0, []int{0, 1}, nil},
		{"first not 0", []LocalGPU{h200(0), h200(1), h200(2)}, 1, []int{1, 0, 2}, nil},
		{"mixed", []LocalGPU{h200(0), h100(1), h200(2)}, 0, []int{0, 2}, []LocalGPU{h100(1)}},
		{"first of the other kind", []LocalGPU{h200(0), h100(1), h200(2)}, 1, []int{1}, []LocalGPU{h200(0), h200(2)}},
		{"first missing", []LocalGPU{h200(0)}, 3, []int{3}, nil},
		{"none", nil, 0, []int{0}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			same, others := SameKind(tt.gpus, tt.first)
			if diff := cmp.Diff(tt.wantSame, same); diff != "" {
				t.Errorf("same (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantOthers, others); diff != "" {
				t.Errorf("others (-want +got):\n%s", diff)
			}
		})
	}
}
