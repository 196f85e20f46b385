package whatif

import (
	"bytes"
	"io"
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
	data []byte
	err  error
}

// llamaSet imports the embedded Llama-7B prefill trace (a fresh set each
// call: tests may change it).
func llamaSet(t testing.TB) *signatures.Set {
	t.Helper()
	llamaOnce.Do(func() { llamaOnce.data, llamaOnce.err = traces.ReadFile(llamaTrace) })
	if llamaOnce.err != nil {
		t.Fatal(llamaOnce.err)
	}
	set, err := signatures.Import(bytesReader(llamaOnce.data), llamaTrace, signatures.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
