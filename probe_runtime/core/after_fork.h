// In the child of fork() only the forking thread exists: the runtime's other threads are gone,
// and their std::thread handles name threads of the parent. Joining or detaching one there is
// undefined (ThreadSanitizer aborts on it); destroying a joinable one terminates. The handle is
// moved into a list that is never destroyed: forgotten, untouched, and still reachable (so that
// LeakSanitizer, at the child's exit, does not take it for a leak).
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <memory>
#include <thread>
#include <vector>

namespace probe::runtime {

inline std::vector<std::unique_ptr<std::thread>>& threadsForgottenAfterFork() {
    static auto* forgotten = new std::vector<std::unique_ptr<std::thread>>();  // never freed
    return *forgotten;
}

inline void forgetThreadAfterFork(std::thread& thread) {
    if (thread.joinable())
        threadsForgottenAfterFork().push_back(std::make_unique<std::thread>(std::move(thread)));
}

// The same for a handle the runtime holds by pointer (the pointer is cleared).
inline void forgetThreadAfterFork(std::thread*& thread) {
    if (thread) threadsForgottenAfterFork().emplace_back(thread);
    thread = nullptr;
}

}  // namespace probe::runtime
