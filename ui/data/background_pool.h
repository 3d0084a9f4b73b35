// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

class QThreadPool;

namespace probe::data {

// The pool our heavy data work runs on (loads, sorts, comparisons, big frees). Not Qt's global
// pool: Qt's raster engine draws large fills on the global pool and the GUI thread waits for
// them, so a long job of ours there froze painting until it finished (a 60 ms stall per sort).
// Call from the GUI thread; it lives until the application ends, which waits for its jobs.
QThreadPool* backgroundPool();

}  // namespace probe::data
