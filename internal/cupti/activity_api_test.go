package cupti

import "testing"

// A driver API record (CUpti_ActivityAPI) is decoded with its call, its
// enter and return, its thread and its correlation id; a runtime API
// record, of the same layout, is still ignored.
func TestDecodeDriverRecord(t *testing.T) {
	Drain()
	before := GetStats()
	d := record(40, [][3]uint64{{0, 4, uint64(KindDriver)}, {4, 4, 307}, {8, 8, 5000}, {16, 8, 7250},
		{24, 4, 4242}, {28, 4, 77}, {32, 4, 103}, {36, 4, 0}})
	if !decodeRaw(d, "", -1) {
		t.Fatal("driver API record not queued")
	}
	rt := record(40, [][3]uint64{{0, 4, uint64(KindRuntime)}, {8, 8, 1}, {16, 8, 2}})
	if decodeRaw(rt, "", -1) {
		t.Fatal("runtime API record was queued")
	}
	recs := Drain()
	if len(recs) != 1 {
		t.Fatalf("drained %d records, want 1: %+v", len(recs), recs)
	}
	want := Record{Kind: KindDriver, Start: 5000, End: 7250, CorrelationID: 103, CallbackID: 307, ThreadID: 77}
	if recs[0] != want {
		t.Errorf("driver record %+v, want %+v", recs[0], want)
	}
	after := GetStats()
	if after.Records-before.Records != 1 || after.Ignored-before.Ignored != 1 {
		t.Errorf("stats before %+v after %+v", before, after)
	}
}
