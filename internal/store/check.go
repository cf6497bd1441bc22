package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"runtime/debug"

	bolt "go.etcd.io/bbolt"
)

// The bbolt file layout checkFile reads (bbolt v1.5, format version 2,
// little-endian as written on amd64 and arm64): every page starts with a
// 16-byte header (id uint64, flags uint16, count uint16, overflow
// uint32); pages 0 and 1 are meta pages, whose meta follows the header:
// magic, version, page size, flags (uint32 each), the root bucket (root
// page, sequence), the freelist page, the high-water page count pgid and
// the transaction ID (uint64 each), then an FNV-64a checksum of the
// preceding 56 bytes. A branch page holds count elements (pos, ksize
// uint32, child page uint64), a leaf page count elements (flags, pos,
// ksize, vsize uint32), pos counted from the element itself; a leaf
// element with flag 1 is a bucket, its value the bucket's root page and
// sequence, followed, when the root is 0, by an inline leaf page.
const (
	boltMagic        = 0xED0CDAED
	boltVersion      = 2
	pageHeaderLen    = 16
	elementLen       = 16
	metaLen          = 64
	metaSumLen       = 56
	branchFlag       = 0x01
	leafFlag         = 0x02
	metaFlag         = 0x04
	freelistFlag     = 0x10
	bucketLeafFlag   = 0x01
	noFreelist       = ^uint64(0)
	minPageSize      = 1024
	maxPageSize      = 1 << 24
	maxBucketNesting = 64
)

// boltMeta is a meta page's fields checkFile uses.
type boltMeta struct {
	pageSize         uint64
	root, freelist   uint64
	pgid, txid       uint64
	sumOK, magicOK   bool
	versionSupported bool
}

// parseMeta reads the meta of the page in b (at least pageHeaderLen +
// metaLen bytes).
func parseMeta(b []byte) boltMeta {
	m := b[pageHeaderLen : pageHeaderLen+metaLen]
	le := binary.LittleEndian
	h := fnv.New64a()
	h.Write(m[:metaSumLen])
	return boltMeta{
		magicOK:          le.Uint32(m[0:]) == boltMagic,
		versionSupported: le.Uint32(m[4:]) == boltVersion,
		pageSize:         uint64(le.Uint32(m[8:])),
		root:             le.Uint64(m[16:]),
		freelist:         le.Uint64(m[32:]),
		pgid:             le.Uint64(m[40:]),
		txid:             le.Uint64(m[48:]),
		sumOK:            le.Uint64(m[metaSumLen:]) == h.Sum64() && le.Uint16(b[8:]) == metaFlag,
	}
}

// checkFile checks the bbolt file f before bbolt maps it, so that
// a damaged file is refused with ErrDamaged naming it rather than crash
// the process (bbolt panics on an invalid freelist page, and faults on a
// page beyond a truncated file): both meta pages' magic, version and
// checksum, their page size, the file's size against the high-water page
// count, and the structure of every page the newer meta reaches — the
// freelist, and each bucket's B+tree: page IDs in range and matching
// their headers, page types, elements within their page, keys ascending
// and within their parent's bounds, no page reached twice nor both free
// and in use. An empty file is new (bbolt initialises it). Record contents are checked by their seals (Seal),
// when read.
func checkFile(f *os.File) (err error) {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() == 0 {
		return nil
	}
	c := &fileCheck{r: f, size: uint64(fi.Size()), seen: make(map[uint64]bool)}
	var unmap func()
	c.mapped, unmap = mapFile(f, fi.Size())
	defer unmap()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil { // the file shrank under the mapping
			err = fmt.Errorf("%w: reading it: %v", ErrDamaged, r)
		}
	}()
	if err := c.run(); err != nil {
		return fmt.Errorf("%w: %w", ErrDamaged, err)
	}
	return nil
}

// fileCheck is one run of checkFile.
type fileCheck struct {
	r        io.ReaderAt
	mapped   []byte // the file mapped read-only (nil: read with r)
	size     uint64
	pageSize uint64
	pgid     uint64
	seen     map[uint64]bool // pages in use or free
}

func (c *fileCheck) run() error {
	first := make([]byte, pageHeaderLen+metaLen)
	if _, err := c.r.ReadAt(first, 0); err != nil {
		return fmt.Errorf("the file has %d bytes, too few for a bbolt file", c.size)
	}
	m0 := parseMeta(first)
	if !m0.magicOK {
		return fmt.Errorf("it is not a bbolt file (no magic number in its first page)")
	}
	if !m0.versionSupported {
		return fmt.Errorf("its first meta page is of another bbolt format version")
	}
	if m0.pageSize < minPageSize || m0.pageSize > maxPageSize || m0.pageSize&(m0.pageSize-1) != 0 {
		return fmt.Errorf("its first meta page gives the page size %d", m0.pageSize)
	}
	c.pageSize = m0.pageSize
	if c.size < 2*c.pageSize {
		return fmt.Errorf("the file has %d bytes, fewer than its two %d-byte meta pages", c.size, c.pageSize)
	}
	second := make([]byte, pageHeaderLen+metaLen)
	if _, err := c.r.ReadAt(second, int64(c.pageSize)); err != nil {
		return err
	}
	m1 := parseMeta(second)
	for i, m := range []boltMeta{m0, m1} {
		if !m.sumOK || !m.magicOK || !m.versionSupported || m.pageSize != c.pageSize {
			return fmt.Errorf("meta page %d fails its checksum (the last commit may be lost)", i)
		}
	}
	m := m0
	if m1.txid > m0.txid {
		m = m1
	}
	if m.pgid < 2 || m.pgid > c.size/c.pageSize {
		return fmt.Errorf("the file has %d bytes, its meta page counts %d pages of %d bytes: the file is truncated", c.size, m.pgid, c.pageSize)
	}
	c.pgid = m.pgid
	c.seen[0], c.seen[1] = true, true
	if m.freelist != noFreelist {
		if err := c.freelist(m.freelist); err != nil {
			return err
		}
	}
	return c.tree(m.root, nil, nil, 0)
}

// page reads page id with its overflow pages, checking its header.
func (c *fileCheck) page(id uint64, what string) ([]byte, error) {
	if id < 2 || id >= c.pgid {
		return nil, fmt.Errorf("%s page %d is beyond the file's %d pages", what, id, c.pgid)
	}
	b, err := c.read(id, 1)
	if err != nil {
		return nil, err
	}
	overflow := uint64(binary.LittleEndian.Uint32(b[12:]))
	if got := binary.LittleEndian.Uint64(b); got != id || id+overflow >= c.pgid {
		return nil, fmt.Errorf("%s page %d holds page %d of %d pages (beyond the file's %d)", what, id, got, overflow+1, c.pgid)
	}
	for p := id; p <= id+overflow; p++ {
		if c.seen[p] {
			return nil, fmt.Errorf("page %d is reached twice (in use twice, or both free and in use)", p)
		}
		c.seen[p] = true
	}
	if overflow > 0 {
		return c.read(id, overflow+1)
	}
	return b, nil
}

// read returns n pages from page id on (within the file): a slice of
// the mapping, or read into a new slice.
func (c *fileCheck) read(id, n uint64) ([]byte, error) {
	off, end := id*c.pageSize, (id+n)*c.pageSize
	if c.mapped != nil {
		return c.mapped[off:end:end], nil
	}
	b := make([]byte, end-off)
	_, err := c.r.ReadAt(b, int64(off))
	return b, err
}

// freelist checks the freelist page id: its IDs in range, none twice.
func (c *fileCheck) freelist(id uint64) error {
	b, err := c.page(id, "freelist")
	if err != nil {
		return err
	}
	if flags := binary.LittleEndian.Uint16(b[8:]); flags != freelistFlag {
		return fmt.Errorf("freelist page %d has page type %#x", id, flags)
	}
	start, n := uint64(pageHeaderLen), uint64(binary.LittleEndian.Uint16(b[10:]))
	if n == 0xFFFF {
		n, start = binary.LittleEndian.Uint64(b[pageHeaderLen:]), pageHeaderLen+8
	}
	if n > (uint64(len(b))-start)/8 {
		return fmt.Errorf("freelist page %d counts %d free pages, more than it holds", id, n)
	}
	for i := range n {
		free := binary.LittleEndian.Uint64(b[start+8*i:])
		if free < 2 || free >= c.pgid || c.seen[free] {
			return fmt.Errorf("freelist page %d lists page %d, beyond the file's %d pages or listed twice", id, free, c.pgid)
		}
		c.seen[free] = true
	}
	return nil
}

// tree checks the B+tree rooted at page id, whose keys lie in [lo, hi)
// (nil: unbounded), at bucket nesting depth.
func (c *fileCheck) tree(id uint64, lo, hi []byte, depth int) error {
	b, err := c.page(id, "tree")
	if err != nil {
		return err
	}
	return c.node(b, id, lo, hi, depth)
}

// node checks the branch or leaf page b (page id; 0: an inline page,
// on the page id of its parent bucket).
func (c *fileCheck) node(b []byte, id uint64, lo, hi []byte, depth int) error {
	le := binary.LittleEndian
	flags, n := le.Uint16(b[8:]), uint64(le.Uint16(b[10:]))
	if flags != branchFlag && flags != leafFlag {
		return fmt.Errorf("page %d has page type %#x, want a branch or leaf", id, flags)
	}
	if pageHeaderLen+n*elementLen > uint64(len(b)) {
		return fmt.Errorf("page %d counts %d elements, more than it holds", id, n)
	}
	var prev []byte
	next := pageHeaderLen + n*elementLen // bbolt packs the data in element order
	for i := range n {
		e := pageHeaderLen + i*elementLen
		pos, ksize := uint64(le.Uint32(b[e+4:])), uint64(le.Uint32(b[e+8:]))
		vsize := uint64(0)
		if flags == branchFlag {
			pos, ksize = uint64(le.Uint32(b[e:])), uint64(le.Uint32(b[e+4:]))
		} else {
			vsize = uint64(le.Uint32(b[e+12:]))
		}
		if e+pos != next || e+pos+ksize+vsize > uint64(len(b)) {
			return fmt.Errorf("page %d: element %d is not where the elements before it end, or lies beyond the page", id, i)
		}
		next += ksize + vsize
		key := b[e+pos : e+pos+ksize]
		if (prev != nil && bytes.Compare(key, prev) <= 0) || (lo != nil && bytes.Compare(key, lo) < 0) || (hi != nil && bytes.Compare(key, hi) >= 0) {
			return fmt.Errorf("page %d: key %d out of order", id, i)
		}
		prev = key
		if flags == branchFlag {
			var bound []byte
			if i+1 < n {
				f := pageHeaderLen + (i+1)*elementLen
				p, k := uint64(le.Uint32(b[f:])), uint64(le.Uint32(b[f+4:]))
				if f+p+k > uint64(len(b)) {
					return fmt.Errorf("page %d: element %d lies beyond the page", id, i+1)
				}
				bound = b[f+p : f+p+k]
			} else {
				bound = hi
			}
			if err := c.tree(le.Uint64(b[e+8:]), key, bound, depth); err != nil {
				return err
			}
			continue
		}
		switch le.Uint32(b[e:]) {
		case 0:
		case bucketLeafFlag:
			if err := c.bucket(b[e+pos+ksize:e+pos+ksize+vsize], id, depth+1); err != nil {
				return err
			}
		default:
			return fmt.Errorf("page %d: element %d has flags %#x", id, i, le.Uint32(b[e:]))
		}
	}
	if id == 0 && next != uint64(len(b)) { // an inline page is its data exactly
		return fmt.Errorf("an inline bucket of %d bytes holds %d", len(b), next)
	}
	return nil
}

// bucket checks a bucket's value v (on page id): its root page's tree,
// or its inline page.
func (c *fileCheck) bucket(v []byte, id uint64, depth int) error {
	if len(v) < 16 || depth > maxBucketNesting {
		return fmt.Errorf("page %d: a bucket value of %d bytes (nesting %d)", id, len(v), depth)
	}
	if root := binary.LittleEndian.Uint64(v); root != 0 {
		return c.tree(root, nil, nil, depth)
	}
	inline := v[16:]
	if len(inline) < pageHeaderLen || binary.LittleEndian.Uint16(inline[8:]) != leafFlag {
		return fmt.Errorf("page %d: an inline bucket that is no leaf page", id)
	}
	return c.node(inline, 0, nil, nil, depth)
}

// checkRecords checks the seal of every record of the store but the
// meta bucket's (whose format version initBuckets checks) and the
// reports' (whose seals the index's load checks): the verdicts'
// (parseRecord), the others' under the path of their bucket and their
// key; and that no appended bucket's sequence is below its last
// record's (a lowered sequence would have the next record overwrite an
// older one). A record under a damaged key fails its seal here, rather
// than go unseen by a lookup of the right key.
func checkRecords(tx *bolt.Tx) error {
	return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
		switch {
		case bytes.Equal(name, metaBucket):
			return nil
		case bytes.Equal(name, reportsBucket), bytes.Equal(name, verdictsBucket):
			return checkAppended(string(name), b)
		}
		return checkBucket(string(name), b)
	})
}

// checkAppended checks each dataset's bucket of appended records in b
// (name: reports or verdicts): its sequence, and the verdicts' seals.
func checkAppended(name string, b *bolt.Bucket) error {
	return b.ForEachBucket(func(dataset []byte) error {
		d := b.Bucket(dataset)
		if last, _ := d.Cursor().Last(); len(last) == seqLen && binary.BigEndian.Uint64(last) > d.Sequence() {
			return fmt.Errorf("%w: %s/%s: its sequence %d is below its last record %d", ErrDamaged, name, dataset, d.Sequence(), binary.BigEndian.Uint64(last))
		}
		if name != string(verdictsBucket) {
			return nil
		}
		return d.ForEach(func(k, v []byte) error {
			_, _, _, err := parseRecord(string(dataset), "verdict", k, v)
			return err
		})
	})
}

// checkBucket checks the seals of the records of bucket b at path, and
// its buckets'.
func checkBucket(path string, b *bolt.Bucket) error {
	return b.ForEach(func(k, v []byte) error {
		if v == nil {
			return checkBucket(path+"/"+string(k), b.Bucket(k))
		}
		_, err := Unseal(path, k, v)
		return err
	})
}
