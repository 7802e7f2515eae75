// The last flush of a process that a signal is about to end (fatal_signals.h; the
// design: docs/AGENT.md, "Crashes and kills").
//
// It runs in a signal handler, on the thread that crashed, which may hold any lock
// (malloc's included) and may have corrupted the heap. So it allocates nothing, takes
// no lock the program could hold, and calls only async-signal-safe system calls:
// frames are encoded by hand (no std::string) into a buffer mapped at start-up, and
// written with send(2) on the connection the flusher opened, or write(2) to the spill
// file. The one lock it takes is the agent's own flush lock (pthread_mutex_trylock, in
// a loop of at most 5 s): the flusher holds it for milliseconds at a time, and holding
// it keeps the flusher from writing to the same socket meanwhile.
//
// What it sends: for every thread, the nodes, metric increments and counter increments
// since the last flush (the delta builders' records of what was reported), the
// thread's end if it ended, then a Goodbye whose reason names the signal. If the
// connection fails (the aggregator died too), it gives the socket up and writes a
// spill file with the Hello and everything the process recorded (ended threads
// included), so nothing is lost; one line on stderr names the file.
//
// What it cannot do without allocating: discover libraries loaded since the last
// flush (their pcs are sent as absolute addresses, which symbolize as unknown), measure
// the threads' unsampled tails and the CPU of unregistered threads (docs/AGENT.md,
// "Unsampled time"), and encode the work/span tables, which are sent when top-level
// computations end and at exit.
#pragma once

namespace cilkprof::agent {

// Maps the frame buffer. Once, at start-up (not signal-safe). False if mmap failed;
// CrashFlush then does nothing.
bool PrepareCrashFlush();

// The last flush before the process dies of `signo`. Returns when it is done, at once
// if the agent is inactive or another thread already did it (a second crashing thread
// waits, boundedly, for the first one's flush instead: the process is ending), and
// after at most a few seconds in every case. Later calls do nothing.
// Async-signal-safe.
void CrashFlush(int signo);

}  // namespace cilkprof::agent
