package errcode

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

// TestCodesKnownAnswer pins the numbers of the codes: they are sent on
// the wire, so renumbering one is a breaking change of the protocol.
func TestCodesKnownAnswer(t *testing.T) {
	for _, c := range []struct {
		code Code
		want uint16
	}{
		{Malformed, 1}, {BudgetExhausted, 2}, {ReportMalformed, 3}, {ReportMismatch, 4},
		{ReportProof, 5}, {ReportReplay, 6}, {UnknownDataset, 7}, {UnknownRelease, 8},
		{ReleaseExists, 9}, {NotLeader, 10}, {TooFewReports, 11}, {ReleasePending, 12},
		{ReleaseAborted, 13}, {ManifestMismatch, 14}, {NotCharged, 15}, {ReleaseBusy, 16},
		{Busy, 17}, {Policy, 18}, {TooManyReports, 19}, {Unsealable, 20}, {RelayFailed, 21},
		{ReportsNotKept, 22}, {ConnRefused, 23}, {PeerMismatch, 24}, {NoRoute, 25},
		{DialTimeout, 26}, {ConnReset, 27}, {ResourceLimit, 28},
		{ReportSetChanged, 29}, {LedgerRewound, 30}, {Standby, 31}, {UploadChanged, 32},
	} {
		if uint16(c.code) != c.want {
			t.Errorf("code %d, want %d: codes are never renumbered", c.code, c.want)
		}
	}
}

type carrier struct{ codes []Code }

func (c carrier) Error() string     { return "remote" }
func (c carrier) WireCodes() []Code { return c.codes }

func TestOf(t *testing.T) {
	a, b := New(UnknownDataset, "unknown dataset"), New(Busy, "busy")
	plain := errors.New("busy")
	for _, tt := range []struct {
		name string
		err  error
		want []Code
	}{
		{"nil", nil, nil},
		{"uncoded", plain, nil},
		{"sentinel", a, []Code{UnknownDataset}},
		{"wrapped", fmt.Errorf("x: %w", a), []Code{UnknownDataset}},
		{"text only", fmt.Errorf("x: %v", a), nil},
		{"joined, in order, once", errors.Join(b, fmt.Errorf("%w: %w", a, b)), []Code{Busy, UnknownDataset}},
		{"carrier", fmt.Errorf("y: %w", carrier{[]Code{NotCharged, Busy}}), []Code{NotCharged, Busy}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Of(tt.err); !slices.Equal(got, tt.want) {
				t.Errorf("Of(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

func TestOfCapped(t *testing.T) {
	var errs []error
	for c := Code(1); c <= MaxCodes+4; c++ {
		errs = append(errs, New(c, "e"))
	}
	if got := Of(errors.Join(errs...)); len(got) != MaxCodes {
		t.Errorf("%d codes, want the cap %d", len(got), MaxCodes)
	}
}

// TestMatches: only a coded sentinel matches, by its code, never by its
// text: an uncoded error of the same text and another sentinel of the
// same text do not.
func TestMatches(t *testing.T) {
	busy := New(Busy, "is being created")
	twin := New(ReleaseBusy, "is being created")
	codes := []Code{Busy}
	if !Matches(codes, busy) {
		t.Error("the sentinel of the code does not match")
	}
	if Matches(codes, twin) || Matches(codes, errors.New("is being created")) || Matches(codes, fmt.Errorf("w: %w", busy)) {
		t.Error("matched by text, or through a wrapper")
	}
	if CodeOf(nil) != 0 || Matches(nil, busy) {
		t.Error("nil has a code, or no codes match")
	}
}
