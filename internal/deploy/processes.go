package deploy

// Processes of a role: each process on a shared PostgreSQL database
// records its state every Heartbeat interval (store.Postgres.Heartbeat),
// and the coordinator lists the processes seen lately in its part of
// fedecdf status.

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/store"
)

// DefaultHeartbeat is how often a process of a shared database records
// its state; fedecdf status lists the processes seen within three
// heartbeats of its question (a process killed drops out of the list
// within three seconds), and a process's beat deletes the rows of those
// unseen for processForget.
const (
	DefaultHeartbeat = time.Second
	processForget    = time.Hour
)

// newProcessID returns an ID for this process start: host, process ID
// and 4 random bytes (a restart with the same process ID is another
// process).
func newProcessID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "host"
	}
	var b [4]byte
	rand.Read(b[:])
	return fmt.Sprintf("%s/%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// startHeartbeat records this process's state now and every Heartbeat
// interval until Close, which deletes its row; nothing for a store of
// one process.
func (s *Server) startHeartbeat() {
	if s.shared == nil {
		return
	}
	s.procID = newProcessID()
	s.heartbeat()
	s.loops.Go(func() {
		t := time.NewTicker(s.cfg.Heartbeat)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				if err := s.shared.Leave(s.procID); err != nil {
					s.log.Debug("removing this process from the database's list", "err", err)
				}
				return
			case <-t.C:
				s.heartbeat()
			}
		}
	})
}

// heartbeat records this process's state.
func (s *Server) heartbeat() {
	pr := store.Process{ID: s.procID, Coordinator: s.active.Load() && s.shared.Coordinating(), UploadAddr: s.uploadAddr(), Uploads: s.counters.accepted.Load()}
	var addrs []string
	for _, a := range s.Addrs() {
		addrs = append(addrs, a.String())
	}
	pr.Listen = strings.Join(addrs, " ")
	if err := s.shared.Heartbeat(pr, processForget); err != nil {
		s.log.Debug("recording this process's state", "err", err)
	}
}

// fillProcesses lists in st the processes of the role seen lately, the
// coordinator first; none for a store of one process. At the
// coordinator, the coordinator is the process answering (the one
// holding the database's lock), not whatever a former coordinator,
// killed, last recorded of itself; at a standby, the process whose
// last heartbeat says it coordinated.
func (s *Server) fillProcesses(st *protocol.ServerState) error {
	if s.shared == nil {
		return nil
	}
	ps, _, err := s.shared.Processes(3 * s.cfg.Heartbeat)
	if err != nil {
		return err
	}
	active := s.active.Load()
	coordinates := func(p store.Process) bool {
		if active {
			return p.ID == s.procID
		}
		return p.Coordinator
	}
	slices.SortStableFunc(ps, func(a, b store.Process) int {
		return cmp.Compare(b2i(coordinates(b)), b2i(coordinates(a)))
	})
	for _, p := range ps[:min(len(ps), protocol.MaxStatusProcs)] {
		st.Processes = append(st.Processes, protocol.ProcessState{
			ID: p.ID, Coordinator: coordinates(p), UploadAddr: p.UploadAddr, Listen: p.Listen,
			Uploads: uint64(p.Uploads), Started: p.Started.Unix(), Seen: p.Seen.Unix(),
		})
	}
	return nil
}

// b2i is 1 for true, 0 for false.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
