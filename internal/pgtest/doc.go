// Package pgtest gives tests a PostgreSQL database of their own: a
// fresh schema in the database named by FEDECDF_TEST_POSTGRES, dropped
// when the test ends. Without that variable the test is skipped with a
// message, unless CI=true, where the skip is a failure: a CI run must
// not pass with its PostgreSQL half silently left out. .ci/run starts a
// throwaway cluster and sets the variable; README, "Running a server on
// PostgreSQL", gives the commands.
package pgtest
