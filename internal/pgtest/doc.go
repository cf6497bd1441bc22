// Package pgtest gives tests a PostgreSQL database of their own: a
// fresh schema in the database named by FEDECDF_TEST_POSTGRES, dropped
// when the test ends. Without that variable the test is skipped with a
// message, unless CI=true, where the skip is a failure: a CI run must
// not pass with its PostgreSQL half silently left out. .ci/run starts a
// throwaway cluster and sets the variable; README, "Running a server on
// PostgreSQL", gives the commands.
//
// go test runs packages in parallel processes on one cluster, and a test
// that restarts it (Restart, FEDECDF_TEST_POSTGRES_RESTART) would cut
// the connections of every other package's tests: each test using the
// cluster holds a shared flock on a lock file named after the DSN while
// it runs, and a restarting test an exclusive one.
//
// A test that cuts one live process from the database (a coordinator,
// for a standby to take over) does so with a Partition, a login role of
// that process's own that it cannot log in as while cut: ending its
// sessions alone lets it reconnect first, a race the load decides.
package pgtest
