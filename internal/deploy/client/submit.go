package client

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"

	"golang.org/x/crypto/chacha20"

	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/p2p"
	"github.com/fedecdf/fedecdf/party"
)

// SubmitAll submits one report per instance, each a separate party with
// its own report ID and, when ownHost is set, its own libp2p host (a
// fresh identity), at most concurrency at a time. It returns the number
// of reports both servers acknowledged and the first error (naming the
// instance by its 1-based position).
func SubmitAll(ctx context.Context, m *manifest.Manifest, inst []party.Instance, tc p2p.Config, concurrency int, ownHost bool) (int, error) {
	return SubmitAllProgress(ctx, m, inst, tc, concurrency, ownHost, nil)
}

// SubmitAllProgress is SubmitAll calling acked, if not nil, after each
// report both servers acknowledged (for a progress display).
func SubmitAllProgress(ctx context.Context, m *manifest.Manifest, inst []party.Instance, tc p2p.Config, concurrency int, ownHost bool, acked func()) (int, error) {
	if concurrency < 1 {
		concurrency = 1
	}
	var shared *Party
	if !ownHost {
		var err error
		if shared, err = NewParty(m, nil, tc); err != nil {
			return 0, err
		}
		defer shared.Close()
	}
	var (
		mu       sync.Mutex
		done     int
		firstErr error
		wg       sync.WaitGroup
		sem      = make(chan struct{}, concurrency)
	)
	for k, x := range inst {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			err := submitOne(ctx, m, shared, tc, x)
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				done++
				if acked != nil {
					acked()
				}
			} else if firstErr == nil {
				firstErr = fmt.Errorf("instance %d: %w", k+1, err)
			}
		}()
	}
	wg.Wait()
	return done, firstErr
}

func submitOne(ctx context.Context, m *manifest.Manifest, p *Party, tc p2p.Config, x party.Instance) error {
	if p == nil {
		var err error
		if p, err = NewParty(m, nil, tc); err != nil {
			return err
		}
		defer p.Close()
	}
	_, err := p.Submit(ctx, x)
	return err
}

// DemoInstances returns n seeded instances for demonstrations: label
// y ~ Bernoulli(0.3), score the 2nd (y = 0) or 5th (y = 1) of six
// uniforms, i.e. Beta(2, 5) or Beta(5, 2), probability = score.
func DemoInstances(n int, seed uint64) []party.Instance {
	rng := rand.New(rand.NewPCG(seed, 0x64656d6f))
	inst := make([]party.Instance, n)
	for k := range inst {
		var u [6]float64
		for j := range u {
			u[j] = rng.Float64()
		}
		slices.Sort(u[:])
		y, s := 0, u[1]
		if rng.Float64() < 0.3 {
			y, s = 1, u[4]
		}
		inst[k] = party.Instance{Score: s, Label: y, Probability: s, HasProbability: true}
	}
	return inst
}

// ValidateRows checks every instance against the manifest's grid and
// payload rules (party.New) and returns the first bad one, naming its
// 1-based row, so that nothing is uploaded from a file with a bad row.
func ValidateRows(m *manifest.Manifest, inst []party.Instance) error {
	g, err := m.NewGrid()
	if err != nil {
		return fmt.Errorf("manifest grid: %w", err)
	}
	for k, x := range inst {
		if _, err := party.New(x, g); err != nil {
			return fmt.Errorf("data row %d: %w", k+1, err)
		}
	}
	return nil
}

// rowReport is the report of row k, the occ-th (0-based) of the rows
// equal to x: its ID is RowReportID, and its verified report's keys and
// randomness are drawn from a ChaCha20 stream keyed by the row's MAC
// under another label, so a rerun sends byte-identical uploads and the
// two servers never hold halves of two different key pairs under one ID.
func (p *Party) rowReport(key []byte, k, occ int, x party.Instance) (*Report, error) {
	pt, err := party.New(x, p.grid)
	if err != nil {
		return nil, fmt.Errorf("data row %d: %w", k+1, err)
	}
	seed := rowMAC(key, rowKeysLabel, p.m.Dataset, occ, x)
	var nonce [chacha20.NonceSize]byte
	stream, err := chacha20.NewUnauthenticatedCipher(seed, nonce[:])
	if err != nil {
		return nil, err
	}
	r, err := p.report(pt, RowReportID(key, p.m.Dataset, occ, x), streamReader{stream})
	if err != nil {
		return nil, fmt.Errorf("data row %d: %w", k+1, err)
	}
	return r, nil
}

// streamReader reads a cipher's keystream.
type streamReader struct{ c *chacha20.Cipher }

func (r streamReader) Read(b []byte) (int, error) {
	clear(b)
	r.c.XORKeyStream(b, b)
	return len(b), nil
}

// RowResult is the outcome of SubmitRows: which servers hold row k
// (Held[k]; HeldByBoth once it is stored) and how many of the rows both
// hold they already held (Duplicates).
type RowResult struct {
	Held       []Held
	Duplicates int
}

// Count returns the number of rows both servers hold.
func (r *RowResult) Count() int {
	n := 0
	for _, h := range r.Held {
		if h == HeldByBoth {
			n++
		}
	}
	return n
}

// Rows returns which rows are held by exactly the servers h.
func (r *RowResult) Rows(h Held) []bool {
	rows := make([]bool, len(r.Held))
	for k, held := range r.Held {
		rows[k] = held == h
	}
	return rows
}

// SubmitRows submits one report per row of a party's file, at most
// concurrency at a time, with IDs and keys derived from key and each
// row's content and occurrence number (RowReportID), so that running it
// again on the same rows, in any order, stores each row exactly once. It validates every row before the first upload;
// each upload retries within tc's retry window (p2p.Config.RetryWindow);
// it stops at the first row that still fails (no new row is started;
// rows in flight finish), and calls stored, if not nil, after each row
// both servers acknowledged. The result says which servers hold each
// row, also on failure: an *UploadError names a row one server holds.
func SubmitRows(ctx context.Context, m *manifest.Manifest, inst []party.Instance, key []byte, tc p2p.Config, concurrency int, stored func(k int, dup bool)) (*RowResult, error) {
	res := &RowResult{Held: make([]Held, len(inst))}
	if len(key) < 16 {
		return res, fmt.Errorf("row key of %d bytes is too short: give at least 16 secret bytes", len(key))
	}
	if err := ValidateRows(m, inst); err != nil {
		return res, err
	}
	p, err := NewParty(m, nil, tc)
	if err != nil {
		return res, err
	}
	defer p.Close()
	occ := RowOccurrences(inst)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
		sem      = make(chan struct{}, max(concurrency, 1))
	)
	for k, x := range inst {
		sem <- struct{}{}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			r, err := p.rowReport(key, k, occ[k], x)
			dup := false
			if err == nil {
				dup, err = p.Send(ctx, r)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if ue := (*UploadError)(nil); errors.As(err, &ue) {
					res.Held[k] = ue.Held
				}
				if firstErr == nil {
					firstErr = fmt.Errorf("data row %d: %w", k+1, err)
					cancel()
				}
				return
			}
			res.Held[k] = HeldByBoth
			if dup {
				res.Duplicates++
			}
			if stored != nil {
				stored(k, dup)
			}
		}()
	}
	wg.Wait()
	if firstErr == nil && ctx.Err() != nil {
		firstErr = ctx.Err()
	}
	return res, firstErr
}
