// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What an op-level config dumps, said in a line: the op tree's config bar and the launch form
// describe a config in the same words.

#include <QString>

#include "probe/format/op_config.h"

namespace probe::widgets {

// Which ops in which rounds: "dumps every layer-level op", "2 ticked ops (ids 2, 3_1), 1 name
// prefix (mlp), with everything inside them in rounds 0 to 4", led by "dumping off (dump_enable
// is false); once on, " when dumping is off.
QString describeDumpedOps(const format::OpConfig& config);

// What is written for them: "statistics", "tensors and statistics", "tensors", "overflow check".
QString describeDumpTask(format::DumpTask task);

}  // namespace probe::widgets
