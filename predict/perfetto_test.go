package predict

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/kreplay/kreplay/signatures"
)

// The export is the Trace Event Format (an object with traceEvents, each
// with a name, a phase, a time, a pid and a tid; complete events with a
// duration), and kreplay's own reader reads it back: every traced
// activity, none of the replayed ones, on the same devices and streams,
// with the same busy time. On the real BLOOM-560M prefill set with
// SYNTHETIC replay times (1.25 x each signature's traced median).
func TestWriteTimeline(t *testing.T) {
	set := prefillSet(t)
	view := TimelineView{ReplayNS: map[string]float64{}, Path: map[string]string{}}
	for _, s := range set.Signatures {
		view.ReplayNS[s.ID] = 1.25 * float64(s.TracedNS.Median)
		view.Path[s.ID] = "own kernel"
	}
	var buf bytes.Buffer
	if err := WriteTimeline(&buf, set, view); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []map[string]any `json:"traceEvents"`
		Unit        string           `json:"displayTimeUnit"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	count := map[string]int{}
	for i, e := range doc.TraceEvents {
		for _, k := range []string{"name", "ph", "ts", "pid", "tid"} {
			if _, ok := e[k]; !ok {
				t.Fatalf("event %d lacks %q: %v", i, k, e)
			}
		}
		ph := e["ph"].(string)
		switch ph {
		case "X":
			if d, ok := e["dur"].(float64); !ok || d < 0 {
				t.Fatalf("complete event %d without a duration: %v", i, e)
			}
			count[e["cat"].(string)]++
			if e["cat"] == ReplayCat {
				args := e["args"].(map[string]any)
				want := view.ReplayNS[args["signature"].(string)]
				if got := args["replay_ns"].(float64); got != want || e["dur"].(float64) != want/1e3 || args["path"] != "own kernel" {
					t.Errorf("replayed event %d: %v", i, e)
				}
			}
		case "M":
			count["M"]++
		default:
			t.Fatalf("event %d has phase %q", i, ph)
		}
	}
	n := len(set.Timeline)
	if count[ReplayCat] != n || count["kernel"]+count["gpu_memcpy"]+count["gpu_memset"] != n || count["M"] == 0 || doc.Unit != "ns" {
		t.Errorf("events by category %v for %d invocations", count, n)
	}
	back, err := signatures.Import(bytes.NewReader(buf.Bytes()), "export.json", signatures.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if back.Links.Activities != n || len(back.Timeline) != n {
		t.Errorf("read back %d activities, %d invocations; exported %d", back.Links.Activities, len(back.Timeline), n)
	}
	if len(back.Summary) != len(set.Summary) || back.Summary[0].BusyNS != set.Summary[0].BusyNS {
		t.Errorf("busy time read back %+v, was %+v", back.Summary, set.Summary)
	}
}
