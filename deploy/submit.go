package deploy

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/fedecdf/fedecdf/internal/p2p"
	"github.com/fedecdf/fedecdf/party"
)

// SubmitAll submits one report per instance, each a separate party with
// its own report ID and, when ownHost is set, its own libp2p host (a
// fresh identity), at most concurrency at a time. It returns the number
// of reports both servers acknowledged and the first error (naming the
// instance by its 1-based position).
func SubmitAll(ctx context.Context, m *Manifest, inst []party.Instance, tc p2p.Config, concurrency int, ownHost bool) (int, error) {
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
			} else if firstErr == nil {
				firstErr = fmt.Errorf("instance %d: %w", k+1, err)
			}
		}()
	}
	wg.Wait()
	return done, firstErr
}

func submitOne(ctx context.Context, m *Manifest, p *Party, tc p2p.Config, x party.Instance) error {
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
