package whatif

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/kreplay/kreplay/internal/errtest"
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

// inputCase is a bad input of a prediction: an edit of a good input and
// what the prediction's error says.
type inputCase[In any] struct {
	name string
	edit func(*In)
	want string
}

// checkInputErrors fails the test unless predict takes ok and refuses ok
// edited by each case with an error saying the case's want.
func checkInputErrors[In, Out any](t *testing.T, ok In, predict func(In) (Out, error), cases []inputCase[In]) {
	t.Helper()
	if _, err := predict(ok); err != nil {
		t.Fatalf("the good input: %v", err)
	}
	for _, c := range cases {
		in := ok
		c.edit(&in)
		_, err := predict(in)
		errtest.Check(t, c.name, err, c.want)
	}
}

// readResult reads the recorded Result testdata/file.
func readResult(t *testing.T, file string) Result {
	t.Helper()
	var r Result
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return r
}
