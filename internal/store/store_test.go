package store

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/fedecdf/fedecdf/internal/payload"
)

func openTemp(t *testing.T) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "server.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return s, path
}

func reportID(i byte) payload.ReportID { return payload.ReportID{i, 0xaa} }

func TestFileMode(t *testing.T) {
	s, path := openTemp(t)
	s.Close()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("store file mode %v, want 0600", fi.Mode().Perm())
	}
}

// savedRelease is a stored release record: the store keeps the server's
// encoding (server.ReleaseRecord) as opaque bytes.
type savedRelease struct {
	id     payload.ReleaseID
	record []byte
}

func TestOpenRefusesUnsafeOrForeignFiles(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, path string)
		want    error
	}{
		{"group-readable", createWithMode(0o640), ErrPermissions},
		{"world-writable", createWithMode(0o602), ErrPermissions},
		{"written before format versions", rawUpdate(func(tx *bolt.Tx) error {
			_, err := tx.CreateBucket(reportsBucket)
			return err
		}), ErrFormat},
		{"format 3, reports keyed by report ID", rawUpdate(func(tx *bolt.Tx) error {
			meta, err := tx.CreateBucket(metaBucket)
			if err == nil {
				err = meta.Put(formatKey, []byte{3})
			}
			var d *bolt.Bucket
			if err == nil {
				d, err = tx.CreateBucket(reportsBucket)
			}
			if err == nil {
				d, err = d.CreateBucket([]byte("d"))
			}
			if err == nil {
				id := reportID(1)
				err = d.Put(id[:], []byte("upload"))
			}
			return err
		}), ErrFormat},
		{"another format version", func(t *testing.T, path string) {
			s, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			err = s.db.Update(func(tx *bolt.Tx) error {
				return tx.Bucket(metaBucket).Put(formatKey, []byte{FormatVersion + 1})
			})
			s.Close()
			if err != nil {
				t.Fatal(err)
			}
		}, ErrFormat},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "server.db")
			tt.prepare(t, path)
			s, err := Open(path)
			if err == nil {
				s.Close()
				t.Fatalf("Open accepted the file")
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("Open: %v, want an error wrapping %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name the file", err)
			}
			if tt.want == ErrFormat && !strings.Contains(err.Error(), "format") {
				t.Errorf("error %q does not name the format", err)
			}
		})
	}
}

// rawUpdate returns a preparation that writes the file at path with
// bbolt directly, in one transaction fn, as another program might.
func rawUpdate(fn func(tx *bolt.Tx) error) func(t *testing.T, path string) {
	return func(t *testing.T, path string) {
		t.Helper()
		db, err := bolt.Open(path, 0o600, nil)
		if err == nil {
			err = db.Update(fn)
			err = errors.Join(err, db.Close())
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// createWithMode returns a preparation that creates a store and then
// gives its file mode perm.
func createWithMode(perm os.FileMode) func(t *testing.T, path string) {
	return func(t *testing.T, path string) {
		s, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		if err := os.Chmod(path, perm); err != nil {
			t.Fatal(err)
		}
	}
}

func TestOpenCreatesPrivateVersionedFile(t *testing.T) {
	s, path := openTemp(t)
	defer s.Close()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("new store has mode %v, want 0600", perm)
	}
	err = s.db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(metaBucket).Get(formatKey); !bytes.Equal(v, Seal("meta", formatKey, []byte{FormatVersion})) {
			t.Errorf("format version %v, want %d", v, FormatVersion)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestOpenRefusesDamagedRecords: a report record too short to hold its
// report ID and receipt time, or under a key that is no sequence number,
// is refused at open, naming the file and the dataset.
func TestOpenRefusesDamagedRecords(t *testing.T) {
	for _, c := range []struct{ name, key, value string }{
		{"short record", "\x00\x00\x00\x00\x00\x00\x00\x01", "short"},
		{"key of 16 bytes", string(make([]byte, 16)), string(make([]byte, 40))},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, path := openTemp(t)
			err := s.db.Update(func(tx *bolt.Tx) error {
				d, err := tx.Bucket(reportsBucket).CreateBucket([]byte("d"))
				if err != nil {
					return err
				}
				return d.Put([]byte(c.key), []byte(c.value))
			})
			s.Close()
			if err != nil {
				t.Fatal(err)
			}
			s, err = Open(path)
			if err == nil {
				s.Close()
				t.Fatal("Open accepted a damaged record")
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), `dataset "d"`) || !strings.Contains(err.Error(), "damaged") {
				t.Errorf("Open: %v; want an error naming the file, the dataset and the damage", err)
			}
		})
	}
}
