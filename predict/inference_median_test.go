package predict

import (
	"math"
	"strings"
	"testing"
)

// The report holds the simulated median (median-wall-ns) to the model's
// median inference where the output has it and the model run measured
// its spread, and the mean (ns/op) otherwise, as outputs from before the
// median were judged: their errors and verdicts do not move.
func TestInferenceReportMedian(t *testing.T) {
	const (
		// The prediction: the mean 480 ms, the median 410 ms; traced, the
		// mean 460 ms and the median 405 ms.
		mean   = "BenchmarkInference/workload=w/inference-16 1 4.8e+08 ns/op 4e+07 busy-ns 4.4e+08 gpu-idle-ns 0 host-wait-ns 55 J/op 4.6e+08 traced-wall-ns\n"
		median = "BenchmarkInference/workload=w/inference-16 1 4.8e+08 ns/op 4.1e+08 median-wall-ns 4e+07 busy-ns 4.4e+08 gpu-idle-ns 0 host-wait-ns 55 J/op 4.6e+08 traced-wall-ns 4.05e+08 traced-median-wall-ns\n"
		// A stalled inference below the model's P10.
		low = "BenchmarkInference/workload=w/inference-16 1 4.8e+08 ns/op 3.3e+08 median-wall-ns 4e+07 busy-ns 4.4e+08 gpu-idle-ns 0 host-wait-ns 55 J/op\n"
		// The model run: the median 400 ms, the mean 440 ms, P10-P90 340-550 ms.
		model   = "BenchmarkModel/workload=w/model-16 1 4e+08 ns/op 4.4e+08 mean-ns 55 J/op 3.4e+08 p10-ns 5.5e+08 p90-ns 0.03 proc-spread\n"
		apart   = "BenchmarkModel/workload=w/model-16 1 4e+08 ns/op 4.4e+08 mean-ns 55 J/op 3.4e+08 p10-ns 5.5e+08 p90-ns 0.1 proc-spread\n"
		noSpans = "BenchmarkModel/workload=w/model-16 1 4.4e+08 ns/op 55 J/op\n"
	)
	for _, tc := range []struct {
		name, out       string
		judged          bool
		errWall         float64
		inSpread        *bool
		errMean, errTrc float64 // NaN: none
		verdict         string
		text            []string
	}{{
		name: "before the median", out: mean + model, errWall: 4.8/4 - 1, inSpread: ptr(true), errMean: math.NaN(), errTrc: 4.6/4 - 1,
		verdict: "wall (within 5%) MISSED; energy met",
		text:    []string{"inference wall (predicted)\t480.000ms\tGPU busy 40.000ms", "+20.0% vs the model; inside", "a check, not a prediction; +15.0% vs the model\n"},
	}, {
		name: "median", out: median + model, judged: true, errWall: 4.1/4 - 1, inSpread: ptr(true), errMean: 4.8/4.4 - 1, errTrc: 4.05/4 - 1,
		verdict: "wall (within 5%) met; energy met",
		text: []string{"inference wall (predicted)\t410.000ms\tthe simulated inferences' median; their mean 480.000ms: GPU busy 40.000ms",
			"; the median +2.5% vs the model's median; the mean +9.1% vs the model's mean; inside the model's 10-90% spread",
			"with the trace's kernel times\t405.000ms\tthe median, mean 460.000ms:", "a check, not a prediction; the median +1.2% vs the model's median; the mean +4.5% vs the model's mean\n"},
	}, {
		name: "median outside the spread", out: low + apart, judged: true, errWall: 3.3/4 - 1, inSpread: ptr(false), errMean: 4.8/4.4 - 1, errTrc: math.NaN(),
		verdict: "wall (processes 10% apart: inside the 10-90% spread) MISSED; energy met",
		text:    []string{"; the median -17.5% vs the model's median; the mean +9.1% vs the model's mean; outside the model's 10-90% spread"},
	}, {
		name: "model without spans", out: median + noSpans, errWall: 4.8/4.4 - 1, errMean: math.NaN(), errTrc: 4.6/4.4 - 1,
		verdict: "wall (within 5%) MISSED; energy met",
		text:    []string{"inference wall (predicted)\t410.000ms\tthe simulated inferences' median; their mean 480.000ms", "; the mean +9.1% vs the model\n"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			rs, err := ReadResults([]Input{{Name: "x", Reader: strings.NewReader(tc.out)}})
			if err != nil {
				t.Fatal(err)
			}
			wp := &WorkloadPrediction{}
			wp.inference(rs.Workloads[0], ReportOptions{})
			ir := wp.Inference
			if ir == nil {
				t.Fatal("no inference read")
			}
			same := func(e *float64, want float64) bool {
				if math.IsNaN(want) {
					return e == nil
				}
				return e != nil && math.Abs(*e-want) < 1e-9
			}
			if ir.MedianJudged != tc.judged || !same(ir.ErrWall, tc.errWall) || !same(ir.ErrMeanWall, tc.errMean) || !same(ir.ErrTracedWall, tc.errTrc) {
				t.Errorf("median judged %v, wall error %v, mean's %v, traced %v; want %v, %g, %g, %g",
					ir.MedianJudged, ir.ErrWall, ir.ErrMeanWall, ir.ErrTracedWall, tc.judged, tc.errWall, tc.errMean, tc.errTrc)
			}
			if (ir.InSpread == nil) != (tc.inSpread == nil) || ir.InSpread != nil && *ir.InSpread != *tc.inSpread {
				t.Errorf("in spread %v, want %v", ir.InSpread, tc.inSpread)
			}
			if ir.Verdict != tc.verdict {
				t.Errorf("verdict %q, want %q", ir.Verdict, tc.verdict)
			}
			var text strings.Builder
			ir.writeText(&text)
			for _, want := range tc.text {
				if !strings.Contains(text.String(), want) {
					t.Errorf("text lacks %q:\n%s", want, text.String())
				}
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
