package whatif

import (
	"bytes"
	"io"
	"slices"
	"sync"
	"testing"

	"github.com/kreplay/kreplay/internal/traces"
	"github.com/kreplay/kreplay/signatures"
)

// llamaTrace is the embedded Llama-7B prefill, whose every RMSNorm is the
// llama-rmsnorm chain.
const llamaTrace = "h100_llama-7b_prefill.trace.json.gz"

var llamaOnce struct {
	sync.Once
	set *signatures.Set
	err error
}

// llamaSet returns the embedded Llama-7B prefill trace's set, imported
// once: a copy whose signatures, their inputs and tensor parameters a
// test may change (the timeline is shared: do not change it).
func llamaSet(t testing.TB) *signatures.Set {
	t.Helper()
	llamaOnce.Do(func() {
		data, err := traces.ReadFile(llamaTrace)
		if err == nil {
			llamaOnce.set, err = signatures.Import(bytesReader(data), llamaTrace, signatures.Options{})
		}
		llamaOnce.err = err
	})
	if llamaOnce.err != nil {
		t.Fatal(llamaOnce.err)
	}
	set := *llamaOnce.set
	set.Signatures = make([]*signatures.Signature, len(llamaOnce.set.Signatures))
	for i, s := range llamaOnce.set.Signatures {
		c := *s
		c.Inputs = slices.Clone(s.Inputs)
		for j := range c.Inputs {
			c.Inputs[j].Shape = slices.Clone(c.Inputs[j].Shape)
			c.Inputs[j].Strides = slices.Clone(c.Inputs[j].Strides)
		}
		if s.Tensor != nil {
			tp := *s.Tensor
			tp.Dims = slices.Clone(tp.Dims)
			c.Tensor = &tp
		}
		set.Signatures[i] = &c
	}
	return &set
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
