package store

import (
	"bytes"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// configKey is the meta key of the store's configuration record.
var configKey = []byte("config")

// Config returns the configuration record the store was created under,
// as last recorded by SetConfig, and whether one is recorded. The record
// is opaque here: the server writes the fields of its manifest that
// give the stored reports, releases and ledger their meaning, and
// compares them with its manifest before it reads anything else.
func (s *Store) Config() ([]byte, bool, error) {
	var rec []byte
	err := s.db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(metaBucket).Get(configKey); v != nil {
			rec = bytes.Clone(v)
		}
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("store: reading the configuration record: %w", err)
	}
	return rec, rec != nil, nil
}

// SetConfig records rec as the store's configuration record (Config),
// durably when it returns nil.
func (s *Store) SetConfig(rec []byte) error {
	if rec == nil {
		rec = []byte{}
	}
	err := s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(metaBucket).Put(configKey, rec) })
	if err != nil {
		return fmt.Errorf("store: recording the configuration record: %w", err)
	}
	return nil
}

// HasReleases reports whether the store holds the record of any release
// of dataset (completed or pending): its seed outlives nothing else.
func (s *Store) HasReleases(dataset string) (bool, error) {
	var found bool
	err := s.db.View(func(tx *bolt.Tx) error {
		if d := tx.Bucket(seedsBucket).Bucket([]byte(dataset)); d != nil {
			k, _ := d.Cursor().First()
			found = k != nil
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("store: dataset %q: %w", dataset, err)
	}
	return found, nil
}
