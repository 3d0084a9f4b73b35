// Names the probe's own threads, so that a user's top -H, gdb or perf tells them apart from the
// model's threads (and a profile of the model shows what the probe's threads cost).
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <pthread.h>

namespace probe::format {

// `name` is at most 15 characters (the kernel's limit); a longer one leaves the thread unnamed.
inline void nameThisThread(const char* name) {
    pthread_setname_np(pthread_self(), name);
}

}  // namespace probe::format
