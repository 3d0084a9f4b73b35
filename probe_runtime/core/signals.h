// The runtime's signal handlers. A handler only writes the signal's number to the housekeeping
// thread's pipe; that thread does the work (it may lock and allocate, a handler may not):
//  - SIGINT, SIGTERM with the default action (the program would die of it): drain, mark the
//    dump complete, stop the probe, then raise the signal again with that action. With a
//    handler of the program's own (Python's SIGINT one), that handler runs at once, as without
//    the probe, and the probe goes on while the program lives.
//  - SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT (fatal): drain what is queued and mark the dump
//    incomplete, while the handler waits for it on a second pipe with poll() and a bounded
//    timeout (write, poll, clock_gettime, sigaction and raise are async-signal-safe); then the
//    handler restores the disposition the signal had and the program dies of it as it would
//    have. A crash inside the probe's own threads, or a drain that cannot finish (the crashed
//    thread held a lock it needs), costs at most the timeout.
// A signal the program ignores is left ignored; a fatal signal the program handles itself is
// left to it (it may be how the program works, not a crash).
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <sys/types.h>

namespace probe::runtime::signals {

// Installs the handlers (once per start): signal numbers go to `wakeFd`; a fatal signal waits
// up to `fatalWaitMs` for the drain (PROBE_FATAL_DRAIN_MS).
void install(int wakeFd, int fatalWaitMs);
// Restores every disposition the handlers replaced (at stop, in a forked child).
void uninstall();
// Gives `signal` back its disposition from before install(); the caller then raises it.
void restore(int signal);
bool isFatal(int signal);

// The threads a fatal signal must not wait for (they do the draining).
void setHousekeepingThread(pid_t tid);
void setWriterThread(pid_t tid);
// The drain after a fatal signal is done: the waiting handler goes on.
void fatalDrainDone();

pid_t currentThreadId();

}  // namespace probe::runtime::signals
