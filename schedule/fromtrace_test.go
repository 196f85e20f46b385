package schedule

import (
	"reflect"
	"strings"
	"testing"
)

// tinyTrace is a Kineto trace with each mapping FromTrace makes: a plain
// launch, a driver launch nested in a runtime one, an event record and a
// stream wait before a launch on another stream, event queries (busy and
// ready by the trace's GPU times), a synchronous copy, a stream sync, and
// calls it drops (an error string, another thread's query).
const tinyTrace = `{"traceEvents": [
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1000.0,"dur":5,"args":{"correlation":1}},
{"ph":"X","cat":"kernel","name":"k_a","pid":0,"tid":7,"ts":1010,"dur":100,"args":{"correlation":1,"stream":7,"device":0,"grid":[1,1,1],"block":[32,1,1]}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernelExC_v11060","pid":1,"tid":1,"ts":1006,"dur":10,"args":{"correlation":2}},
{"ph":"X","cat":"cuda_driver","name":"cuLaunchKernelEx","pid":1,"tid":1,"ts":1007,"dur":5,"args":{"correlation":3}},
{"ph":"X","cat":"kernel","name":"k_b","pid":0,"tid":7,"ts":1110,"dur":50,"args":{"correlation":3,"stream":7,"device":0,"grid":[4,1,1],"block":[128,1,1]}},
{"ph":"X","cat":"cuda_runtime","name":"cudaEventRecord","pid":1,"tid":1,"ts":1020,"dur":1,"args":{"correlation":4}},
{"ph":"X","cat":"cuda_runtime","name":"cudaStreamWaitEvent","pid":1,"tid":1,"ts":1022,"dur":1,"args":{"correlation":5}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1024,"dur":2,"args":{"correlation":6}},
{"ph":"X","cat":"kernel","name":"k_a","pid":0,"tid":9,"ts":1160,"dur":10,"args":{"correlation":6,"stream":9,"device":0,"grid":[2,1,1],"block":[64,1,1]}},
{"ph":"X","cat":"cuda_runtime","name":"cudaEventQuery","pid":1,"tid":1,"ts":1030,"dur":1,"args":{"correlation":7}},
{"ph":"X","cat":"cuda_runtime","name":"cudaGetErrorString","pid":1,"tid":1,"ts":1032,"dur":1,"args":{"correlation":11}},
{"ph":"X","cat":"cuda_runtime","name":"cudaEventQuery","pid":1,"tid":99,"ts":1033,"dur":1,"args":{"correlation":12}},
{"ph":"X","cat":"cuda_runtime","name":"cudaMemcpy","pid":1,"tid":1,"ts":1040,"dur":150,"args":{"correlation":8}},
{"ph":"X","cat":"gpu_memcpy","name":"Memcpy DtoH (Device -> Pageable)","pid":0,"tid":7,"ts":1170,"dur":5,"args":{"correlation":8,"stream":7,"device":0,"bytes":64}},
{"ph":"X","cat":"cuda_runtime","name":"cudaEventQuery","pid":1,"tid":1,"ts":1200,"dur":1,"args":{"correlation":9}},
{"ph":"X","cat":"cuda_runtime","name":"cudaStreamSynchronize","pid":1,"tid":1,"ts":1210,"dur":1,"args":{"correlation":10}}
]}`

func TestFromTraceMapping(t *testing.T) {
	s, err := FromTrace(strings.NewReader(tinyTrace), "tiny.json")
	if err != nil {
		t.Fatal(err)
	}
	one := [3]uint32{1, 1, 1}
	want := []Call{
		{Kind: Launch, Enter: 0, Exit: 5000, Stream: 7, Name: 0, Grid: one, Block: [3]uint32{32, 1, 1}},
		// The driver launch nested in cudaLaunchKernelExC is its launch.
		{Kind: Launch, Enter: 6000, Exit: 16000, Stream: 7, Name: 1, Grid: [3]uint32{4, 1, 1}, Block: [3]uint32{128, 1, 1}},
		// Recorded on the last launch's stream; stream 9, launched to
		// next, waits.
		{Kind: Record, Enter: 20000, Exit: 21000, Stream: 7},
		{Kind: StreamWait, Enter: 22000, Exit: 23000, Stream: 9},
		{Kind: Launch, Enter: 24000, Exit: 26000, Stream: 9, Name: 0, Grid: [3]uint32{2, 1, 1}, Block: [3]uint32{64, 1, 1}},
		// The event completes with stream 7's k_b at 1160 µs: busy at
		// 1031 µs.
		{Kind: Query, Enter: 30000, Exit: 31000, Target: OnEvent},
		{Kind: Copy, Enter: 40000, Exit: 190000, Stream: 7, Bytes: 64, Dir: DtoH, Sync: true},
		{Kind: Query, Enter: 200000, Exit: 201000, Target: OnEvent, Ready: true},
		{Kind: Wait, Enter: 210000, Exit: 211000, Target: OnStream, Stream: 7},
	}
	inf := s.Inferences[0]
	if !reflect.DeepEqual(inf.Calls, want) {
		t.Errorf("records\n%+v\nwant\n%+v", inf.Calls, want)
	}
	if inf.Start != 1000000 || inf.End != 211000 {
		t.Errorf("start %d end %d, want 1000000 and 211000", inf.Start, inf.End)
	}
	if !reflect.DeepEqual(s.Names, map[uint32]string{0: "k_a", 1: "k_b"}) || s.Source != SourceTrace {
		t.Errorf("names %v source %q", s.Names, s.Source)
	}
}

func TestFromTraceErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"not a trace", `[1,2]`, "not a Kineto trace"},
		{"no calls", `{"traceEvents": []}`, "no CUDA call"},
		{"negative duration", `{"traceEvents": [{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","ts":1,"dur":-1}]}`, "absurd"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := FromTrace(strings.NewReader(tc.in), "bad.json"); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v, want an error saying %q", err, tc.want)
			}
		})
	}
}
