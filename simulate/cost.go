package simulate

// Cost model: the communication and time of a run (Cost), the phases'
// wall and CPU clocks (phases), and the AES work bound the DCF backend's
// CPU is compared with (AESBound).

import (
	"time"

	"github.com/fedecdf/fedecdf/fss"
	"github.com/fedecdf/fedecdf/internal/bench"
	"github.com/fedecdf/fedecdf/internal/cpuclock"
	"github.com/fedecdf/fedecdf/internal/payload"
)

// Cost is the communication and time of the run.
type Cost struct {
	BytesPerParty  float64            `json:"bytes_per_party"`
	BytesPerServer map[string]int64   `json:"bytes_per_server"`
	BytesTotal     int64              `json:"bytes_total"`
	Rounds         Rounds             `json:"rounds"`
	Seconds        map[string]float64 `json:"seconds"`
	// CPUSeconds is the process CPU time (user + system, all threads)
	// of each phase.
	CPUSeconds map[string]float64 `json:"cpu_seconds"`
	// ServersCPUSeconds is the part of CPUSeconds the two servers spent
	// walking DCF keys in each phase that has servers, from the walking
	// threads' own clocks (server.Server.KeyWalkCPU): with the verified
	// dcf backend each key's field walk and its sketch, with the
	// unverified one the folds; nil for the additive backend and where
	// threads have no clock.
	ServersCPUSeconds map[string]float64 `json:"servers_cpu_seconds,omitempty"`
	// VerifyBytes is the traffic between the two servers while they
	// verified the reports (verified backends only).
	VerifyBytes int64 `json:"verify_bytes,omitempty"`
	// AESBound compares the CPU of the phases that evaluate DCF keys with
	// the AES work an unverified fold cannot avoid (dcf backend only; the
	// verified backend's field walks and sketches are held to the same
	// bound, so its ratio shows what verification costs on top).
	AESBound *AESBound `json:"aes_bound,omitempty"`
}

// AESBound is the AES work bound of the DCF backend: one full-domain walk
// of every key at each server, 2·n·BlocksPerKey AES blocks
// (fss.BatchCost over the N points), at the time per block of crypto/aes's
// CTR keystream measured in the same run (process CPU time, the mean of
// a timing before the first phase and one after the upload).
type AESBound struct {
	NsPerBlock   float64 `json:"aes_ctr_ns_per_block"`
	BlocksPerKey int     `json:"aes_blocks_per_key"`
	Seconds      float64 `json:"seconds"`
	// CPUSeconds is the process CPU of the upload, release and query
	// phases: the servers' folding and answering, plus the parties' key
	// generation and the in-process transport, so an upper bound on the
	// servers' CPU; ProcessRatio is CPUSeconds / Seconds.
	CPUSeconds   float64 `json:"cpu_seconds"`
	ProcessRatio float64 `json:"process_ratio"`
	// ServersCPUSeconds is the servers' share of CPUSeconds: their walks
	// of the keys (Cost.ServersCPUSeconds), the work the bound bounds;
	// OtherCPUSeconds the rest: the parties' key generation and encoding,
	// the in-process transport, the servers' decoding and bookkeeping of
	// each upload, the garbage collector. Ratio is ServersCPUSeconds /
	// Seconds (0 with the other two when threads have no clock).
	ServersCPUSeconds float64 `json:"servers_cpu_seconds"`
	OtherCPUSeconds   float64 `json:"other_cpu_seconds"`
	Ratio             float64 `json:"ratio"`
}

// newAESBound returns the bound for n parties' keys over bins bins, at
// nsPerBlock (aesNsPerBlock).
func newAESBound(nsPerBlock float64, n, bins int) (*AESBound, error) {
	dom, err := fss.NewPrefixDomain(bins)
	if err != nil {
		return nil, err
	}
	points := make([]uint64, bins)
	for j := range points {
		points[j] = uint64(j)
	}
	_, blocks, err := fss.BatchCost(dom.Bits(), payload.NumComponents, points)
	if err != nil {
		return nil, err
	}
	b := &AESBound{NsPerBlock: nsPerBlock, BlocksPerKey: blocks}
	b.Seconds = 2 * float64(n) * float64(blocks) * b.NsPerBlock / 1e9
	return b, nil
}

// aesNsPerBlock times AES on the process CPU clock, between phases:
// nothing else runs then. Run takes the mean of a timing before the
// first phase and one after the upload, so that a shared machine's load
// in the meantime weighs on the bound as on the work it bounds.
func aesNsPerBlock() float64 {
	return bench.AESCTRNsPerBlock(cpuclock.Process, 10*time.Millisecond)
}

// boundPhases are the phases whose CPU the AES bound bounds.
var boundPhases = []string{"upload", "release", "query"}

// compare sets the CPU times and ratios from the phases' process CPU and
// the servers' part of it (nil: not measured).
func (b *AESBound) compare(cpu, servers map[string]float64) {
	for _, p := range boundPhases {
		b.CPUSeconds += cpu[p]
		b.ServersCPUSeconds += servers[p]
	}
	b.ProcessRatio = b.CPUSeconds / b.Seconds
	if servers != nil {
		b.OtherCPUSeconds = b.CPUSeconds - b.ServersCPUSeconds
		b.Ratio = b.ServersCPUSeconds / b.Seconds
	}
}

// Rounds counts the round trips each role initiated.
type Rounds struct {
	PerParty float64 `json:"per_party"`
	Analyst  int64   `json:"analyst"`
	Servers  int64   `json:"leader_to_helper"`
}

// phases times the phases of a run, in wall and process CPU time and
// the servers' CPU once there are servers, and tells cfg.Progress about
// them.
type phases struct {
	progress Progress
	seconds  map[string]float64
	cpu      map[string]float64
	name     string
	start    time.Time
	startCPU time.Duration
	// servers returns the servers' CPU so far (nil: no servers yet);
	// serversCPU holds it per phase from the first phase that ends with
	// it set, and serversUnknown records a failed reading.
	servers        func() (time.Duration, bool)
	serversCPU     map[string]float64
	startServers   time.Duration
	serversUnknown bool
}

func (p *phases) begin(name string, total int) {
	p.name, p.start, p.startCPU = name, time.Now(), cpuclock.Process()
	p.startServers = 0
	if p.servers != nil {
		p.startServers = p.readServers()
	}
	if p.progress != nil {
		p.progress.Start(name, total)
	}
}

// readServers reads the servers' CPU, remembering a failed reading.
func (p *phases) readServers() time.Duration {
	cpu, ok := p.servers()
	p.serversUnknown = p.serversUnknown || !ok
	return cpu
}

func (p *phases) add(k int) {
	if p.progress != nil {
		p.progress.Add(k)
	}
}

func (p *phases) end() {
	p.seconds[p.name] += time.Since(p.start).Seconds()
	p.cpu[p.name] += (cpuclock.Process() - p.startCPU).Seconds()
	if p.servers != nil {
		if p.serversCPU == nil {
			p.serversCPU = map[string]float64{}
		}
		p.serversCPU[p.name] += (p.readServers() - p.startServers).Seconds()
	}
	if p.progress != nil {
		p.progress.Finish()
	}
}
