// In the child of fork() only the forking thread exists: the runtime's other threads are gone,
// and their std::thread handles name threads of the parent. Joining or detaching one there is
// undefined (ThreadSanitizer aborts on it); destroying a joinable one terminates. The handle is
// moved into an object that is never destroyed: forgotten, untouched.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <thread>

namespace probe::runtime {

inline void forgetThreadAfterFork(std::thread& thread) {
    if (thread.joinable()) new std::thread(std::move(thread));  // deliberately never freed
}

}  // namespace probe::runtime
