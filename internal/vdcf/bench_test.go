package vdcf

import "testing"

// BenchmarkCheck is one server's verification of one report at N = 1024
// bins, its prefix vector evaluated beforehand: Prepare, Exchange, Finish
// against the other server's recorded messages.
func BenchmarkCheck(b *testing.B) {
	f := newFixture(b, 1024, 8)
	r := f.encode(b, 700, true)
	sh, vec := f.evaluate(b, 0, r.Shares[0])
	hsh, hvec := f.evaluate(b, 1, r.Shares[1])
	_, msg, _ := f.srv[0].Prepare(r.Nonce, sh, vec)
	hp, hmsg, _ := f.srv[1].Prepare(r.Nonce, hsh, hvec)
	hsecond, _ := hp.Exchange(msg)
	for b.Loop() {
		p, _, _ := f.srv[0].Prepare(r.Nonce, sh, vec)
		if _, err := p.Exchange(hmsg); err != nil {
			b.Fatal(err)
		}
		if err := p.Finish(hsecond); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncode is the party's side at N = 1024 bins: one report's
// keys and correlated randomness, with and without the probability.
func BenchmarkEncode(b *testing.B) {
	for _, tc := range []struct {
		name string
		f    *fixture
	}{{"count and label", newFixture(b, 1024, 8)}, {"with probability", newProbFixture(b, 1024, 8)}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				tc.f.encodeRecord(b, 700, true, MaxProbability/3)
			}
		})
	}
}
