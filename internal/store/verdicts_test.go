package store

import (
	"bytes"
	"errors"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/fedecdf/fedecdf/internal/payload"
)

// TestVerdictsSurviveReopen: saved verdicts are loaded back after the
// store is closed and opened again, a later record replacing an earlier
// one of the same report, per dataset.
func TestVerdictsSurviveReopen(t *testing.T) {
	s, path := openTemp(t)
	for _, save := range []map[payload.ReportID][]byte{
		{reportID(1): {1, 2, 0}, reportID(2): {1, 2, 3}},
		{reportID(2): {1, 1, 3}},
	} {
		if err := s.SaveVerdicts("d", save); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SaveVerdicts("other", map[payload.ReportID][]byte{reportID(3): {9}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := map[payload.ReportID][]byte{}
	if err := s.LoadVerdicts("d", func(id payload.ReportID, rec []byte) error { got[id] = rec; return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !bytes.Equal(got[reportID(1)], []byte{1, 2, 0}) || !bytes.Equal(got[reportID(2)], []byte{1, 1, 3}) {
		t.Errorf("loaded %v", got)
	}
}

// TestCheckVerifyKey: the first key is recorded (as its version byte and
// the key: a known answer), the same key passes again, also after a
// reopen, and another is refused with ErrVerifyKeyChanged.
func TestCheckVerifyKey(t *testing.T) {
	s, path := openTemp(t)
	key := bytes.Repeat([]byte{7}, 32)
	if err := s.CheckVerifyKey("d", key); err != nil {
		t.Fatal(err)
	}
	err := s.db.View(func(tx *bolt.Tx) error {
		if got, want := tx.Bucket(verifyKeyBucket).Get([]byte("d")), Seal("verifykey", []byte("d"), append([]byte{1}, key...)); !bytes.Equal(got, want) {
			t.Errorf("stored key record %x, want %x", got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err = Open(path); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.CheckVerifyKey("d", key); err != nil {
		t.Errorf("same key again: %v", err)
	}
	other := bytes.Repeat([]byte{8}, 32)
	if err := s.CheckVerifyKey("d", other); !errors.Is(err, ErrVerifyKeyChanged) {
		t.Errorf("another key: %v, want ErrVerifyKeyChanged", err)
	}
	if err := s.CheckVerifyKey("e", other); err != nil {
		t.Errorf("another dataset's key: %v", err)
	}
}
