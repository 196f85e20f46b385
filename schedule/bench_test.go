package schedule

import (
	"testing"
)

// bigSchedule is n inferences of calls launches on two streams with an
// event between them and a sync at the end.
func bigSchedule(n, calls int) (*Schedule, [][]Op) {
	s := &Schedule{Version: Version, Source: SourceRecorder, Names: map[uint32]string{1: "k"}}
	ops := make([][]Op, n)
	var start int64
	for i := 0; i < n; i++ {
		inf := Inference{Start: start}
		var t int64
		for k := 0; k < calls; k++ {
			c := Call{Kind: Launch, Enter: t, Exit: t + 3000, Stream: uint64(k % 2), Name: 1, Grid: [3]uint32{1, 1, 1}, Block: [3]uint32{1, 1, 1}}
			switch k % 50 {
			case 10:
				c = Call{Kind: Record, Enter: t, Exit: t + 500, Handle: 0xe}
			case 11:
				c = Call{Kind: StreamWait, Enter: t, Exit: t + 500, Stream: 1, Handle: 0xe}
			case 49:
				c = Call{Kind: Wait, Enter: t, Exit: t + 20000, Target: OnStream}
			}
			if c.Kind.GPU() {
				ops[i] = append(ops[i], Op{DurNS: []int64{int64(2000 + k%7*1000)}, Label: "k"})
			}
			inf.Calls = append(inf.Calls, c)
			t = c.Exit + 1000
		}
		inf.End = t
		s.Inferences = append(s.Inferences, inf)
		start += t + 5000
	}
	return s, ops
}

func BenchmarkSimulate(b *testing.B) {
	s, ops := bigSchedule(5, 40000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Simulate(s, ops, Constants{SubmitNS: 4000, QueueGapNS: 1000, WakeNS: 3000, MaxCallNS: 20000}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/200000, "ns/call")
}
