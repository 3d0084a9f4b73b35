// What a comparison found, for people (a terminal report) and for programs (CSV, JSON, and the
// .xlsx in msprobe's column layout). No Qt.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <string>

#include "analysis/compare.h"

namespace probe::analysis {

// The counts, where the first divergence is born (op, tensor, rule, element), the first op that
// inherited it, and the ops around it; or why nothing was compared.
std::string formatCompareReport(const CompareResult& result, size_t context = 5);

// Every compared tensor as CSV, one line each, with a header.
std::string compareResultCsv(const CompareResult& result);

// The whole result as JSON (summary, first divergences, every op with its tensors, unpaired
// ops, problems), for scripts.
std::string compareResultJson(const CompareResult& result);

// msprobe's compare_result .xlsx: its columns (tensor mode when any tensor's data was compared,
// else its statistics mode) on "Sheet1" (split into "part_<i>" sheets beyond Excel's row limit,
// as msprobe does), then a sheet "ops" with each op's verdict. Written as format::writeUserFile
// writes (atomically to a regular file; "-" is standard output). False with a
// message when it cannot be written.
bool writeCompareXlsx(const CompareResult& result, const std::string& path, std::string* error);

// The column headers writeCompareXlsx uses on its first sheet.
std::vector<std::string> msprobeCompareHeader(bool tensorMode);

}  // namespace probe::analysis
