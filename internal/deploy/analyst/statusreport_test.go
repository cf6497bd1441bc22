package analyst

import (
	"testing"

	"github.com/fedecdf/fedecdf/internal/protocol"
)

// TestStatusProcessesWithholdUploads: a server's processes are listed
// with their roles and addresses whoever asks, and the uploads each
// acknowledged only when report counts are shown (to an operator, or
// under replace-one): under add/remove an analyst learns no count of
// uploads from the process list either.
func TestStatusProcessesWithholdUploads(t *testing.T) {
	sv := protocol.ServerState{Role: "leader", Processes: []protocol.ProcessState{
		{ID: "a/1-00", Coordinator: true, UploadAddr: "10.0.0.1:7401", Uploads: 12, Started: 1_800_000_000, Seen: 1_800_000_100},
		{ID: "b/2-01", UploadAddr: "10.0.0.3:7401", Uploads: 30, Seen: 1_800_000_099},
	}}
	for _, counts := range []bool{false, true} {
		got := serverStatus(sv, counts).Processes
		if len(got) != 2 || got[0].ID != "a/1-00" || !got[0].Coordinator || got[1].Coordinator || got[1].UploadAddr != "10.0.0.3:7401" || got[0].Seen != "2027-01-15T08:01:40Z" {
			t.Fatalf("counts shown %v: processes %+v", counts, got)
		}
		for k, p := range got {
			switch {
			case !counts && p.Uploads != nil:
				t.Errorf("counts withheld, yet process %s shows %d uploads", p.ID, *p.Uploads)
			case counts && (p.Uploads == nil || *p.Uploads != sv.Processes[k].Uploads):
				t.Errorf("counts shown: process %s uploads %v, want %d", p.ID, p.Uploads, sv.Processes[k].Uploads)
			}
		}
	}
	if got := serverStatus(protocol.ServerState{Role: "helper"}, true).Processes; got != nil {
		t.Errorf("a server of one process lists processes %+v, want none (the JSON key omitted)", got)
	}
}
