package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"

	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/signatures"
)

// progressLine is one line of `kreplay run -out`: an entry as soon as it
// is measured, with the set it belongs to, so that an interrupted run
// keeps every result and `-resume` continues from it.
type progressLine struct {
	File     string       `json:"file"`
	Workload string       `json:"workload"`
	Entry    replay.Entry `json:"entry"`
}

// progressFile appends entries to a JSON-lines file, one line per entry,
// synced to disk as they come.
type progressFile struct {
	mu sync.Mutex
	f  *os.File
}

func openProgress(path string) (*progressFile, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	return &progressFile{f: f}, nil
}

func (p *progressFile) add(src signatures.Source, e replay.Entry) error {
	b, err := json.Marshal(progressLine{File: src.File, Workload: src.Workload, Entry: e})
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, err := p.f.Write(append(b, '\n')); err != nil {
		return err
	}
	return p.f.Sync()
}

func (p *progressFile) Close() error { return p.f.Close() }

// readProgress reads the entries of an earlier run's -out file, by set
// file and signature ID; a missing file is an empty run. A torn last line
// (the run was killed while writing it) is ignored; any other bad line is
// an error naming the line.
func readProgress(path string) (map[string]map[string]replay.Entry, error) {
	out := map[string]map[string]replay.Entry{}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var bad error
	for n := 1; sc.Scan(); n++ {
		if bad != nil {
			return nil, bad // a bad line that was not the last
		}
		var l progressLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || l.Entry.ID == "" {
			bad = fmt.Errorf("%s:%d: not a kreplay run line", path, n)
			continue
		}
		if out[l.File] == nil {
			out[l.File] = map[string]replay.Entry{}
		}
		out[l.File][l.Entry.ID] = l.Entry
	}
	return out, sc.Err()
}
