package predict

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/kreplay/kreplay/replay"
)

// ProgressLine is one line of a run's progress file (`kreplay run -out`,
// `kreplay predict`): an entry as soon as it is measured, with the set it
// belongs to, so that an interrupted run keeps every result and a resumed
// one continues from it.
type ProgressLine struct {
	File     string       `json:"file"`
	Workload string       `json:"workload"`
	Entry    replay.Entry `json:"entry"`
}

// ReadProgress reads the lines of a progress file from r; name says where
// in errors. A torn last line (the run was killed while writing it) is
// ignored; any other bad line is an error naming the line.
func ReadProgress(r io.Reader, name string) ([]ProgressLine, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var out []ProgressLine
	var bad error
	for n := 1; sc.Scan(); n++ {
		if bad != nil {
			return nil, bad // a bad line that was not the last
		}
		var l ProgressLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || l.Entry.ID == "" {
			bad = fmt.Errorf("%s:%d: not a kreplay run line", name, n)
			continue
		}
		out = append(out, l)
	}
	return out, sc.Err()
}
