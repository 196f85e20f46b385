package signatures

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/kreplay/kreplay/internal/traces"
)

// largest is the largest embedded trace (30 MB of JSON uncompressed).
const largest = "h100_bloom-560m_generate.trace.json.gz"

// BenchmarkImport measures import speed in MB/s of uncompressed JSON on
// the largest embedded trace, read from a file on disk as plain JSON and
// as gzip, and reports the peak heap while importing (live and not yet
// collected objects, sampled every millisecond, above the heap before) as
// peak-heap-MB. Nothing but the file name is held between iterations, so
// the heap measured is the importer's own.
func BenchmarkImport(b *testing.B) {
	raw := plainTrace(b, largest)
	size := int64(len(raw))
	dir := b.TempDir()
	plain := filepath.Join(dir, "trace.json")
	if err := os.WriteFile(plain, raw, 0o644); err != nil {
		b.Fatal(err)
	}
	raw = nil
	gzRaw, err := traces.ReadFile(largest)
	if err != nil {
		b.Fatal(err)
	}
	zipped := filepath.Join(dir, "trace.json.gz")
	if err := os.WriteFile(zipped, gzRaw, 0o644); err != nil {
		b.Fatal(err)
	}
	gzRaw = nil
	for _, bc := range []struct{ name, path string }{{"plain", plain}, {"gzip", zipped}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			runtime.GC()
			base := heapBytes()
			stop := samplePeakHeap()
			for b.Loop() {
				if _, err := ImportFile(bc.path, Options{}); err != nil {
					b.Fatal(err)
				}
			}
			peak := stop()
			b.ReportMetric(float64(peak-base)/1e6, "peak-heap-MB")
		})
	}
}

func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// samplePeakHeap samples the live heap until the returned func is called,
// and returns the largest value seen.
func samplePeakHeap() func() uint64 {
	var (
		mu   sync.Mutex
		peak uint64
		done = make(chan struct{})
		wg   sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				h := heapBytes()
				mu.Lock()
				peak = max(peak, h)
				mu.Unlock()
			}
		}
	}()
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak
	}
}
