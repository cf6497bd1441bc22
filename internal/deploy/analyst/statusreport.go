package analyst

import (
	"context"
	"fmt"
	"slices"
	"time"

	ma "github.com/multiformats/go-multiaddr"

	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/p2p"
	"github.com/fedecdf/fedecdf/internal/protocol"
)

// Status is a deployment's state as fedecdf status prints it, from the
// leader and, through it, the helper (JSON keys: docs/json.md). Counts
// of reports, and the servers' last errors, are given only when
// CountsPublic: to an operator of the manifest, and to an analyst under
// replace-one neighbours, where n is public; they are null otherwise
// (the servers' own logs and metrics have them).
type Status struct {
	Dataset  string `json:"dataset"`
	Protocol int    `json:"protocol"`
	// CountsPublic: report counts and error lines are shown (to an
	// operator, or under replace-one, where n is public).
	CountsPublic bool `json:"counts_public"`
	// ReportsBoth is the number of reports both servers know: hold, or,
	// for a verified dataset, have decided (null when
	// withheld, or when the helper could not be compared).
	ReportsBoth *int `json:"reports_both"`
	// LeaderReachesHelper: the leader reached the helper for this status.
	LeaderReachesHelper bool           `json:"leader_reaches_helper"`
	Servers             []ServerStatus `json:"servers"`
}

// ServerStatus is one server's part of a Status.
type ServerStatus struct {
	Role string `json:"role"`
	// Reachable is false for a helper the leader could not reach; Error
	// then says why, and the other fields are empty.
	Reachable bool   `json:"reachable"`
	Error     string `json:"error,omitempty"`
	Version   string `json:"version,omitempty"`
	// Reports counted (folded, or verified and accepted); Held: of a
	// verified dataset, received and not yet decided; OneServerOnly: of
	// those held, the ones the other server did not know at the
	// comparison at ComparedAt (RFC 3339).
	Reports       *int            `json:"reports"`
	Held          *int            `json:"held"`
	OneServerOnly *int            `json:"one_server_only"`
	ComparedAt    string          `json:"compared_at,omitempty"`
	Spent         manifest.Budget `json:"spent"`
	Total         manifest.Budget `json:"total"`
	Releases      []ReleaseState  `json:"releases"`
	// LastErrors are the server's last warnings and errors, oldest first,
	// one log line each (null when withheld).
	LastErrors []string `json:"last_errors"`
	// PeerContact is, at the leader, when it last checked the helper; at
	// the helper, when it last heard from the leader (RFC 3339).
	PeerContact string `json:"peer_contact,omitempty"`
	// Rejected counts the reports the server rejected at verification,
	// per reason (null when none were, or when withheld).
	Rejected map[string]int `json:"rejected"`
	// Processes are the server's processes when several serve it on one
	// PostgreSQL database (omitted for a server of one process), the
	// coordinator first.
	Processes []ProcessState `json:"processes,omitempty"`
}

// ProcessState is one process of a server run by several: its ID
// (host/pid-random), whether it coordinates (else it stands by), its
// sealed-upload and libp2p listen addresses (a standby has no libp2p
// host), the uploads it acknowledged since it started (null when
// withheld), and when it started and last recorded itself (RFC 3339).
type ProcessState struct {
	ID          string  `json:"id"`
	Coordinator bool    `json:"coordinator"`
	UploadAddr  string  `json:"upload_addr,omitempty"`
	Listen      string  `json:"listen,omitempty"`
	Uploads     *uint64 `json:"uploads"`
	Started     string  `json:"started"`
	Seen        string  `json:"seen"`
}

// ReleaseState is one release a server recorded, when and what it
// charged. Created is when the server created it (RFC 3339; "" when
// unknown: a release recorded by a fedecdf older than the time).
type ReleaseState struct {
	Release    string   `json:"release"`
	Created    string   `json:"created,omitempty"`
	Mechanism  string   `json:"mechanism"`
	Neighbours string   `json:"neighbours"`
	Components []string `json:"components"`
	Epsilon    float64  `json:"epsilon"`
	Delta      float64  `json:"delta"`
	Reports    *int     `json:"reports"`
}

// AskStatus asks the leader of m, under the key of an analyst or an
// operator of m, how the deployment is: the leader compares its report
// set with the helper's (within its bounded peer timeout) and answers for
// both. tc sets timeouts and retries; its Key, Peers and Listen are set
// here.
func AskStatus(ctx context.Context, m *manifest.Manifest, id *manifest.Identity, tc p2p.Config) (*Status, error) {
	return AskStatusAt(ctx, m, id, tc, nil)
}

// AskStatusAt is AskStatus asking the leader process at first (a
// standby's query address, which answers from the database: see
// fedecdf server --query-listen) instead of the manifest's leader
// addresses; the manifest's if first is empty.
func AskStatusAt(ctx context.Context, m *manifest.Manifest, id *manifest.Identity, tc p2p.Config, first []ma.Multiaddr) (*Status, error) {
	if pid := id.PeerID.String(); !slices.Contains(m.Analysts, pid) && !slices.Contains(m.Operators, pid) {
		return nil, fmt.Errorf("the key's peer ID %s %w", pid, ErrNotStatusKey)
	}
	book, err := leaderAt(m, first)
	if err != nil {
		return nil, err
	}
	tc.Key, tc.Peers, tc.Listen = id.Key, book, nil
	h, err := p2p.New(tc)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	st, err := protocol.Call[*protocol.Status](ctx, h.Conn(p2p.QueryProtocol), manifest.LeaderName, &protocol.StatusRequest{Dataset: m.Dataset})
	if err != nil {
		return nil, err
	}
	return newStatus(st), nil
}

// newStatus turns the leader's answer into a Status.
func newStatus(st *protocol.Status) *Status {
	out := &Status{Dataset: st.Dataset, Protocol: protocol.Version, CountsPublic: st.Counts}
	if st.Counts && st.Compared {
		out.ReportsBoth = &st.Both
	}
	for i, sv := range st.Servers {
		out.Servers = append(out.Servers, serverStatus(sv, st.Counts))
		if i == 0 && sv.Role == "leader" {
			out.LeaderReachesHelper = sv.PeerReachable
		}
	}
	if len(st.Servers) == 1 && st.Servers[0].Role == "leader" {
		out.Servers = append(out.Servers, ServerStatus{Role: "helper", Error: st.Servers[0].PeerError})
	}
	return out
}

func serverStatus(sv protocol.ServerState, counts bool) ServerStatus {
	out := ServerStatus{
		Role: sv.Role, Reachable: true, Version: sv.Version,
		Spent:       manifest.Budget{Epsilon: sv.SpentEpsilon, Delta: sv.SpentDelta},
		Total:       manifest.Budget{Epsilon: sv.TotalEpsilon, Delta: sv.TotalDelta},
		ComparedAt:  unixTime(sv.ComparedAt),
		PeerContact: unixTime(sv.PeerCheckedAt),
		Releases:    []ReleaseState{},
	}
	if counts {
		out.Reports, out.Held, out.OneServerOnly, out.LastErrors = &sv.Reports, &sv.Held, &sv.OneServer, sv.Errors
		if out.LastErrors == nil {
			out.LastErrors = []string{}
		}
		for _, rj := range sv.Rejected {
			if out.Rejected == nil {
				out.Rejected = map[string]int{}
			}
			out.Rejected[rj.Reason] = rj.Count
		}
	}
	for _, p := range sv.Processes {
		ps := ProcessState{ID: p.ID, Coordinator: p.Coordinator, UploadAddr: p.UploadAddr, Listen: p.Listen, Started: unixTime(p.Started), Seen: unixTime(p.Seen)}
		if counts {
			ps.Uploads = &p.Uploads
		}
		out.Processes = append(out.Processes, ps)
	}
	for _, r := range sv.Releases {
		rs := ReleaseState{
			Release: r.Release.String(), Created: unixTime(r.Created), Mechanism: r.Mechanism.Name, Neighbours: r.Mechanism.Relation.String(),
			Epsilon: r.ChargeEpsilon, Delta: r.ChargeDelta,
		}
		for _, c := range r.Components {
			rs.Components = append(rs.Components, c.String())
		}
		if counts {
			rs.Reports = &r.Reports
		}
		out.Releases = append(out.Releases, rs)
	}
	return out
}

// unixTime formats Unix seconds as RFC 3339 in UTC ("" for 0: never).
func unixTime(sec int64) string {
	if sec == 0 {
		return ""
	}
	return time.Unix(sec, 0).UTC().Format(time.RFC3339)
}
