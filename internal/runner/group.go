package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Group is the runners of one workload, one process per rank, driven in
// lock step: every request goes to every rank before any reply is read
// (a tensor-parallel inference's collectives wait for all ranks), and
// each rank's reply is kept, in rank order. A group of one rank is a
// plain runner: started, loaded and answered as Start's.
//
// The ranks of a larger group meet through torch.distributed's
// environment (RankEnv): MASTER_ADDR 127.0.0.1 and a free MASTER_PORT,
// RANK, WORLD_SIZE, LOCAL_RANK and LOCAL_WORLD_SIZE, and
// KREPLAY_DEVICE, the CUDA device of the rank; Load gives the workload
// spec the same as its "distributed" object (see kreplay_runner.py).
type Group struct {
	ranks   []*Runner
	devices []int
	addr    string
	port    int
	// Grace is how long the other ranks get to reply once one fails a
	// request before the whole group is killed (they may be waiting for
	// the failed rank in a collective); 0 means DefaultGrace.
	Grace time.Duration
}

// DefaultGrace is Group.Grace's default.
const DefaultGrace = 30 * time.Second

// RendezvousAddr is the address the ranks of a group meet at.
const RendezvousAddr = "127.0.0.1"

// Distributed is what a rank of a group is told of its place in it: the
// load request's spec gets it as its "distributed" object, and the
// process's environment as RankEnv's variables.
type Distributed struct {
	Rank       int    `json:"rank"`
	WorldSize  int    `json:"world_size"`
	LocalRank  int    `json:"local_rank"`
	Device     int    `json:"device"`
	MasterAddr string `json:"master_addr"`
	MasterPort int    `json:"master_port"`
	Backend    string `json:"backend"`
}

// Env is d as torch.distributed's environment variables (and
// KREPLAY_DEVICE), "KEY=value".
func (d Distributed) Env() []string {
	return []string{"MASTER_ADDR=" + d.MasterAddr, "MASTER_PORT=" + strconv.Itoa(d.MasterPort),
		"RANK=" + strconv.Itoa(d.Rank), "WORLD_SIZE=" + strconv.Itoa(d.WorldSize),
		"LOCAL_RANK=" + strconv.Itoa(d.LocalRank), "LOCAL_WORLD_SIZE=" + strconv.Itoa(d.WorldSize),
		"KREPLAY_DEVICE=" + strconv.Itoa(d.Device)}
}

// StartGroup starts one runner per device, rank r on devices[r], as
// Start starts one (opt for all, with rankEnv(r) added to rank r's
// environment where rankEnv is not nil), and returns once every rank said
// it is ready. With one device it is Start, with nothing added but
// rankEnv(0). A rank that cannot start fails the group, the rank named,
// and the others are stopped.
func StartGroup(opt StartOptions, devices []int, rankEnv func(rank int) []string) (*Group, error) {
	if len(devices) == 0 {
		return nil, errors.New("runner group: no devices")
	}
	g := &Group{devices: append([]int(nil), devices...)}
	withRank := func(o StartOptions, rank int) StartOptions {
		if rankEnv != nil {
			o.Env = append(append([]string(nil), o.Env...), rankEnv(rank)...)
		}
		return o
	}
	if len(devices) == 1 {
		r, err := Start(withRank(opt, 0))
		if err != nil {
			return nil, err
		}
		g.ranks = []*Runner{r}
		return g, nil
	}
	port, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("runner group: a rendezvous port: %w", err)
	}
	g.addr, g.port = RendezvousAddr, port
	g.ranks = make([]*Runner, len(devices))
	errs := make([]error, len(devices))
	var wg sync.WaitGroup
	for rank := range devices {
		o := withRank(opt, rank)
		o.Env = append(o.Env, g.Distributed(rank).Env()...)
		wg.Add(1)
		go func() {
			defer wg.Done()
			g.ranks[rank], errs[rank] = Start(o)
		}()
	}
	wg.Wait()
	for rank, err := range errs {
		if err != nil {
			g.Close()
			return nil, g.rankError(rank, err)
		}
	}
	return g, nil
}

// freePort returns a TCP port of RendezvousAddr that was free a moment
// ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(RendezvousAddr, "0"))
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Size is the group's number of ranks.
func (g *Group) Size() int { return len(g.ranks) }

// Devices are the ranks' CUDA devices, in rank order.
func (g *Group) Devices() []int { return append([]int(nil), g.devices...) }

// Rank returns rank i's runner.
func (g *Group) Rank(i int) *Runner { return g.ranks[i] }

// Distributed is what rank is told of its place in the group.
func (g *Group) Distributed(rank int) Distributed {
	return Distributed{Rank: rank, WorldSize: len(g.devices), LocalRank: rank, Device: g.devices[rank],
		MasterAddr: g.addr, MasterPort: g.port, Backend: "nccl"}
}

func (g *Group) rankError(rank int, err error) error {
	return fmt.Errorf("rank %d of %d (device %d): %w", rank, len(g.devices), g.devices[rank], err)
}

// each runs f on every rank at once and waits for all. Once a rank
// fails, the others get Grace to finish, then the group is killed. The
// error is the first rank's to fail, named (a group of one: its error as
// it is).
func (g *Group) each(f func(rank int, r *Runner) error) error {
	if len(g.ranks) == 1 {
		return f(0, g.ranks[0])
	}
	errs := make([]error, len(g.ranks))
	done := make(chan int, len(g.ranks))
	for i, r := range g.ranks {
		go func() {
			errs[i] = f(i, r)
			done <- i
		}()
	}
	first, killed := -1, false
	var timer <-chan time.Time
	for pending := len(g.ranks); pending > 0; {
		select {
		case i := <-done:
			pending--
			if errs[i] != nil && first < 0 {
				first = i
				t := time.NewTimer(cmpOr(g.Grace, DefaultGrace))
				defer t.Stop()
				timer = t.C
			}
		case <-timer:
			timer, killed = nil, true
			g.Kill()
		}
	}
	if first < 0 {
		return nil
	}
	err := g.rankError(first, errs[first])
	var others []string
	for i, e := range errs {
		if e != nil && i != first {
			others = append(others, strconv.Itoa(i))
		}
	}
	switch {
	case killed:
		err = fmt.Errorf("%w (the group was stopped: ranks %s did not reply within %s of it)", err, strings.Join(others, ", "), cmpOr(g.Grace, DefaultGrace))
	case len(others) > 0:
		err = fmt.Errorf("%w (ranks %s failed too)", err, strings.Join(others, ", "))
	}
	return err
}

func cmpOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// rankSpec is the spec rank gets on load: spec itself in a group of one,
// else spec with "distributed" (Distributed) added.
func (g *Group) rankSpec(spec any, rank int) (any, error) {
	if len(g.ranks) == 1 {
		return spec, nil
	}
	b, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("runner group: the spec is not a JSON object: %w", err)
	}
	m["distributed"] = g.Distributed(rank)
	return m, nil
}

// Load loads the workload on every rank (Runner.Load), each with its
// rankSpec.
func (g *Group) Load(spec any) ([]*Info, error) {
	infos := make([]*Info, len(g.ranks))
	err := g.each(func(i int, r *Runner) error {
		s, err := g.rankSpec(spec, i)
		if err != nil {
			return err
		}
		infos[i], err = r.Load(s)
		return err
	})
	return infos, err
}

// Warmup warms every rank up (Runner.Warmup).
func (g *Group) Warmup(n int, minTime time.Duration) ([]int, error) {
	ns := make([]int, len(g.ranks))
	return ns, g.each(func(i int, r *Runner) (err error) {
		ns[i], err = r.Warmup(n, minTime)
		return err
	})
}

// Run runs every rank's measured run (Runner.Run): each rank's result,
// its own GPU's energy.
func (g *Group) Run(minTicks, minInferences int, maxWait time.Duration) ([]*Result, error) {
	res := make([]*Result, len(g.ranks))
	return res, g.each(func(i int, r *Runner) (err error) {
		res[i], err = r.Run(minTicks, minInferences, maxWait)
		return err
	})
}

// Capture profiles one inference on every rank (Runner.Capture), rank
// i's trace into paths[i].
func (g *Group) Capture(paths []string, warmup int) error {
	if len(paths) != len(g.ranks) {
		return fmt.Errorf("capture: %d trace files for %d ranks", len(paths), len(g.ranks))
	}
	return g.each(func(i int, r *Runner) error { return r.Capture(paths[i], warmup) })
}

// Record runs one inference on every rank with its kernel recorder armed
// (Runner.Record).
func (g *Group) Record(detach bool) error {
	return g.each(func(_ int, r *Runner) error { return r.Record(detach) })
}

// RunRecorded runs every rank's recorded run (Runner.RunRecorded), rank
// i's schedule into reqs[i].
func (g *Group) RunRecorded(minTicks, minInferences int, maxWait time.Duration, reqs []ScheduleRequest) ([]*Result, error) {
	if len(reqs) != len(g.ranks) {
		return nil, fmt.Errorf("run: %d schedules for %d ranks", len(reqs), len(g.ranks))
	}
	res := make([]*Result, len(g.ranks))
	return res, g.each(func(i int, r *Runner) (err error) {
		res[i], err = r.RunRecorded(minTicks, minInferences, maxWait, reqs[i])
		return err
	})
}

// Env returns every rank's environment (Runner.Env).
func (g *Group) Env() ([]map[string]any, error) {
	envs := make([]map[string]any, len(g.ranks))
	return envs, g.each(func(i int, r *Runner) (err error) {
		envs[i], err = r.Env()
		return err
	})
}

// Kill stops every rank at once (Runner.Kill); Close must still be
// called.
func (g *Group) Kill() {
	for _, r := range g.ranks {
		if r != nil {
			r.Kill()
		}
	}
}

// Close stops every rank (Runner.Close, all at once) and returns the
// first rank's error, named.
func (g *Group) Close() error {
	errs := make([]error, len(g.ranks))
	var wg sync.WaitGroup
	for i, r := range g.ranks {
		if r == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = r.Close()
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			if len(g.ranks) == 1 {
				return err
			}
			return g.rankError(i, err)
		}
	}
	return nil
}
