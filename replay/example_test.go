package replay_test

import (
	"fmt"
	"log"

	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/signatures"
)

// Replay the largest GEMM of a trace and compare it with the trace. (It
// needs a GPU, so it is compiled but not run by go test.)
func Example() {
	set, err := signatures.ImportFile("h100_llama-7b_prefill.trace.json.gz", signatures.Options{})
	if err != nil {
		log.Fatal(err)
	}
	dev, err := replay.Open(0)
	if err != nil {
		log.Fatal(err) // no driver or no GPU: a clear error, no panic
	}
	defer dev.Close()
	for _, sig := range set.Signatures {
		if sig.Class != signatures.ClassGEMM {
			continue
		}
		p, err := dev.Prepare(sig) // rotating buffers: weights come from DRAM
		if err != nil {
			log.Fatal(err)
		}
		defer p.Close()
		r, err := dev.Measure(p, replay.Options{})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: traced %.1f µs, replayed %.1f µs (kernel time %.1f µs), %.0f TFLOP/s\n",
			sig.Label, float64(sig.TracedNS.Median)/1e3, r.MedianNS/1e3, r.KernelMedianNS/1e3, r.TFLOPs())
		break
	}
}
