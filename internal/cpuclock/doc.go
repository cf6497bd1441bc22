// Package cpuclock reads the CPU time of the process and of the calling
// thread.
//
// The process clock is getrusage; the thread clock is
// clock_gettime(CLOCK_THREAD_CPUTIME_ID) on Linux. The servers use the
// thread clock to account their key walks apart from everything else a
// process does; the benchmarks and simulate report process CPU time,
// the robust figure on a shared machine.
package cpuclock
