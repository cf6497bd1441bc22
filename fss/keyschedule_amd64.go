//go:build amd64 && !purego

package fss

// expandKey128 returns the FIPS-197 §5.2 key expansion of an AES-128 key:
// the 11 round keys as 176 bytes in order. It runs only on the public
// fixed keys, so its table lookups leak nothing secret.
func expandKey128(key [16]byte) [176]byte {
	sbox := aesSbox()
	var w [176]byte
	copy(w[:16], key[:])
	rcon := byte(1)
	for i := 16; i < 176; i += 4 {
		t := [4]byte{w[i-4], w[i-3], w[i-2], w[i-1]}
		if i%16 == 0 {
			t = [4]byte{sbox[t[1]] ^ rcon, sbox[t[2]], sbox[t[3]], sbox[t[0]]}
			rcon = xtime(rcon)
		}
		for j := range t {
			w[i+j] = w[i-16+j] ^ t[j]
		}
	}
	return w
}

// xtime multiplies by x in GF(2^8) modulo x^8 + x^4 + x^3 + x + 1.
func xtime(b byte) byte {
	return b<<1 ^ (b>>7)*0x1b
}

// aesSbox computes the AES S-box: the multiplicative inverse in GF(2^8)
// followed by the affine map of FIPS-197 §5.1.1. Generator 3 walks the
// multiplicative group, with q = p^{-1} walked in step.
func aesSbox() [256]byte {
	var s [256]byte
	rotl := func(x byte, k uint) byte { return x<<k | x>>(8-k) }
	p, q := byte(1), byte(1)
	for {
		p ^= xtime(p) // p · 3
		q ^= q << 1   // q / 3
		q ^= q << 2
		q ^= q << 4
		if q&0x80 != 0 {
			q ^= 0x09
		}
		s[p] = q ^ rotl(q, 1) ^ rotl(q, 2) ^ rotl(q, 3) ^ rotl(q, 4) ^ 0x63
		if p == 1 {
			break
		}
	}
	s[0] = 0x63
	return s
}
