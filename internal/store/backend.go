package store

import (
	"strings"
	"time"

	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/internal/payload"
)

// Backend is a server's durable state, whichever store holds it: the
// embedded bbolt file (Store, the default) or a PostgreSQL database
// (Postgres). Both keep the same records (records.go) under the same
// FormatVersion and pass one contract test suite; every write is
// committed before its method returns nil, so a server acknowledging
// after it never acknowledges what a crash of the server or of the
// database could lose.
type Backend interface {
	ledger.Ledger

	// PutReport records the upload of report id once (a second write
	// of the same ID writes nothing and keeps the first) and returns
	// after the commit holding it; concurrent calls share a commit.
	PutReport(dataset string, id payload.ReportID, upload []byte) error
	// Reports calls fn with every recorded upload of dataset, in the
	// order first recorded.
	Reports(dataset string, fn func(id payload.ReportID, upload []byte) error) error
	// Uploads calls fn with the upload of each of ids, in the order
	// given; a report not recorded is an error naming it.
	Uploads(dataset string, ids []payload.ReportID, fn func(id payload.ReportID, upload []byte) error) error
	// ReceivedAt returns when each of ids was first recorded (the zero
	// time if it is not).
	ReceivedAt(dataset string, ids []payload.ReportID) ([]time.Time, error)
	// DeleteReports removes ids in one transaction and returns how many
	// were held.
	DeleteReports(dataset string, ids []payload.ReportID) (int, error)
	// NumReports returns the number of recorded reports of dataset.
	NumReports(dataset string) (int, error)

	// Total and SetTotal read and record the total budget the ledger of
	// dataset is kept under.
	Total(dataset string) (ledger.Budget, bool, error)
	SetTotal(dataset string, total ledger.Budget) error

	// SaveRelease, DeleteRelease and LoadReleases keep the server's
	// encoded release records (server.ReleaseStore), loaded in release
	// ID order.
	SaveRelease(dataset string, release payload.ReleaseID, record []byte) error
	DeleteRelease(dataset string, release payload.ReleaseID) error
	LoadReleases(dataset string, fn func(release payload.ReleaseID, record []byte) error) error

	// SaveVerdicts and LoadVerdicts keep the verification verdicts
	// (server.VerdictStore): a later record of a report replaces the
	// earlier ones. CheckVerifyKey records the first verify key of
	// dataset and refuses another (ErrVerifyKeyChanged).
	SaveVerdicts(dataset string, records map[payload.ReportID][]byte) error
	LoadVerdicts(dataset string, fn func(id payload.ReportID, record []byte) error) error
	CheckVerifyKey(dataset string, key []byte) error

	// Config and SetConfig read and record the store's configuration
	// record: the manifest fields it was created under, compared at
	// every start before anything stored is read. HasReleases reports
	// whether dataset has the record of any release (created or
	// pending).
	Config() ([]byte, bool, error)
	SetConfig(rec []byte) error
	HasReleases(dataset string) (bool, error)

	// Close commits the writes queued, refuses further ones (ErrClosed)
	// and releases the store.
	Close() error
}

var (
	_ Backend = (*Store)(nil)
	_ Backend = (*Postgres)(nil)
)

// IsPostgres reports whether a --store value names a PostgreSQL
// database (a postgres:// or postgresql:// URL) rather than a bbolt file.
func IsPostgres(spec string) bool {
	return strings.HasPrefix(spec, "postgres://") || strings.HasPrefix(spec, "postgresql://")
}

// Name is how an error names the store spec: a bbolt file by its path,
// a PostgreSQL database as "database" and its DSN without the query
// (which may name files and options; it holds no password: ErrPassword).
func Name(spec string) string {
	if IsPostgres(spec) {
		return "database " + redact(spec)
	}
	return spec
}

// OpenBackend opens the store spec names: a PostgreSQL database for a
// postgres:// URL (OpenPostgres, its password read from passwordFile if
// not empty, else from PGPASSWORD or ~/.pgpass), a bbolt file otherwise
// (Open; passwordFile must then be empty).
func OpenBackend(spec, passwordFile string) (Backend, error) {
	if IsPostgres(spec) {
		return OpenPostgres(spec, passwordFile)
	}
	if passwordFile != "" {
		return nil, errPasswordForFile
	}
	s, err := Open(spec)
	if err != nil {
		return nil, err
	}
	return s, nil
}
