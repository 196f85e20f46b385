package tier3

import (
	"errors"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/launch"
	"github.com/kreplay/kreplay/signatures"
)

// NewWith builds every buffer set with the builder given, takes the
// footprint and work from its tensors, and returns the builder's error
// (ErrUnsupported included) instead of a stand-in. The builders here
// allocate nothing, so no GPU is needed.
func TestNewWith(t *testing.T) {
	sig := &signatures.Signature{ID: "whatif", Tier: signatures.TierKernel, Op: "whatif::k"}
	x := &Tensor{Shape: []int64{4, 8}, Strides: []int64{8, 1}, DType: "f16", Span: 32}
	y := &Tensor{Shape: []int64{4, 8}, Strides: []int64{8, 1}, DType: "f32", Span: 32}
	calls := 0
	ok := func(e *Env, s *signatures.Signature) (*Instance, error) {
		calls++
		if s != sig || e.Stream != nil {
			t.Errorf("builder got %v, stream %v", s, e.Stream)
		}
		return &Instance{Inputs: []*Tensor{x}, Outputs: []*Tensor{y}, FLOPs: 96, Launch: func(*cuda.Stream) error { return nil }}, nil
	}
	for _, c := range []struct {
		name string
		b    Builder
		err  string
	}{
		{"builds", ok, ""},
		{"no builder", nil, "no builder"},
		{"unsupported", func(*Env, *signatures.Signature) (*Instance, error) { return nil, ErrUnsupported }, ErrUnsupported.Error()},
		{"no launch", func(*Env, *signatures.Signature) (*Instance, error) { return &Instance{}, nil }, "made no launch"},
	} {
		calls = 0
		k, err := NewWith(sig, c.b, Device{}, launch.Options{Sets: 3}, nil)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.name, err, c.err)
			}
			if c.name == "unsupported" && !errors.Is(err, ErrUnsupported) {
				t.Errorf("%s: %v does not wrap ErrUnsupported", c.name, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if calls != 3 || k.Sets() != 3 || k.Approximate() != "" {
			t.Errorf("%s: %d builder calls, %d sets, approximate %q", c.name, calls, k.Sets(), k.Approximate())
		}
		if w := k.Work(); k.Footprint() != 64+128 || w.Bytes != 192 || w.FLOPs != 96 {
			t.Errorf("%s: footprint %d, work %+v", c.name, k.Footprint(), w)
		}
		if err := k.Close(); err != nil {
			t.Error(err)
		}
	}
}
