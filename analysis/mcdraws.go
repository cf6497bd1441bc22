package analysis

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
)

// The Monte-Carlo draws behind the intervals are a function of the public
// noise law alone: the samplers' mechanisms, servers and read prefixes,
// the number of draws and the salt of the fixed public seed
// (intervalSeed). Nothing of the release's own values enters them, so
// every interval of releases with one noise law reads the same noise
// vectors: they are drawn once (noiseDraws) and kept in a bounded cache,
// and each interval evaluates its statistic on them. The values are
// exactly those monteCarlo's streams give, so caching changes no interval
// (TestNoiseDrawsCached); it only spares re-drawing every node of every
// draw, which was most of an interval's cost.

// Bounds of the draws cache, in float64 values: a larger set of draws is
// drawn afresh each time (a 2¹⁵-bin ECDF with B = 500 would be 128 MiB),
// and when the total would pass maxCachedValues the oldest sets are
// dropped. The 256-bin ROC box of B = 500 draws holds 2.6·10⁵ values.
const (
	maxCachedDrawValues = 1 << 21 // 16 MiB
	maxCachedValues     = 1 << 23 // 64 MiB
)

// drawCache holds sets of noise draws by key (noiseDraws).
var drawCache = struct {
	sync.Mutex
	sets  map[string]*drawSet
	order []string // keys, oldest first
	size  int      // values held
}{sets: map[string]*drawSet{}}

// drawSet is one cached set of draws, filled once.
type drawSet struct {
	once   sync.Once
	v      [][][]float64
	values int // float64 values v holds once filled
}

// noiseDraws returns draws noise vectors of each of samplers (v[b][s]:
// sampler s's vector of draw b) as monteCarlo draws them with salt: in
// draw b, with the stream of b's worker, the samplers in their order.
// The result is shared and must not be modified.
func noiseDraws(draws int, salt uint64, samplers ...noiseSampler) [][][]float64 {
	values := 0
	for _, s := range samplers {
		values += draws * len(s.prefixes)
	}
	if values > maxCachedDrawValues {
		return drawNoise(draws, salt, samplers)
	}
	key := drawKey(draws, salt, samplers)
	drawCache.Lock()
	set, ok := drawCache.sets[key]
	if !ok {
		set = &drawSet{values: values}
		drawCache.sets[key] = set
		drawCache.order = append(drawCache.order, key)
		drawCache.size += values
		for drawCache.size > maxCachedValues && len(drawCache.order) > 1 {
			old := drawCache.order[0]
			drawCache.order = drawCache.order[1:]
			drawCache.size -= drawCache.sets[old].values
			delete(drawCache.sets, old)
		}
	}
	drawCache.Unlock()
	set.once.Do(func() { set.v = drawNoise(draws, salt, samplers) })
	return set.v
}

// drawNoise draws what noiseDraws returns, without the cache.
func drawNoise(draws int, salt uint64, samplers []noiseSampler) [][][]float64 {
	v := make([][][]float64, draws)
	monteCarlo(draws, salt, func(rng *rand.Rand, b int) float64 {
		v[b] = make([][]float64, len(samplers))
		for s, sm := range samplers {
			v[b][s] = make([]float64, len(sm.prefixes))
			sm.draw(rng, v[b][s])
		}
		return 0
	})
	return v
}

// drawKey identifies a set of draws: draws, salt and each sampler's law
// (noiseSampler.law).
func drawKey(draws int, salt uint64, samplers []noiseSampler) string {
	key := fmt.Sprintf("%d/%d", draws, salt)
	for _, s := range samplers {
		key += "|" + s.law()
	}
	return key
}

// law describes the noise law s draws: the release's mechanism
// parameters and component (which determine its mechanism), the
// mechanism's own name, nodes and mean variance (so that a Release whose
// Spec was changed after it was built cannot alias another law), the
// servers, the component's scale and the read prefixes.
func (s noiseSampler) law() string {
	b := make([]byte, 0, 8*len(s.prefixes))
	for _, i := range s.prefixes {
		b = binary.LittleEndian.AppendUint64(b, uint64(i))
	}
	return fmt.Sprintf("%#v/%d/%s/%d/%x/%d/%x/%x", s.params, s.comp, s.m.Name(), s.m.Nodes(), math.Float64bits(s.m.MeanVariance()), s.servers, math.Float64bits(s.scale), b)
}

// monteCarloOver evaluates f on each of draws (in draw order) on two
// goroutines and returns its values in draw order.
func monteCarloOver(draws [][][]float64, f func(b int, eta [][]float64) float64) []float64 {
	out := make([]float64, len(draws))
	const workers = 2
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for b := w; b < len(draws); b += workers {
				out[b] = f(b, draws[b])
			}
		})
	}
	wg.Wait()
	return out
}
