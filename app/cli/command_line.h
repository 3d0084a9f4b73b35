// Option parsing shared by the probe subcommands: CLI11 with the probe's exit codes and messages.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "commands.h"

namespace probe::analysis {
class DumpIndex;
struct DumpLocation;
struct PartReading;
}  // namespace probe::analysis

namespace probe::cli {

// The exit code of a command that read a dump (`whole`) or a part of it (a rank or step folder)
// and found nothing wrong in what it read: 0 when all of it was read, 1 when some of it could not
// be (its problems say what: "nothing wrong" is of part of it), 66 when none of it could, or
// when the part holds nothing.
int exitCodeOfRead(const analysis::PartReading& reading, bool whole);

// The part of the dump `index` that `path` (the folder it was read from) names: a rank or step
// folder, else the whole dump. A part is said on standard error, so that nobody takes the answer
// for the whole dump's: "<command>: only proc7, step 1 of the dump <root> is <done>".
analysis::DumpLocation partNamed(const analysis::DumpIndex& index, const std::string& path,
                                 const char* command, const char* done);

// A number given on the command line: the whole text a finite number; nullopt otherwise.
std::optional<double> parseNumber(const std::string& text);

// CLI11 check of a number option's value: a finite number from `min` to `max` (a whole one when
// `whole`); its message says what the option needs.
CLI::Validator numberCheck(double min, double max = std::numeric_limits<double>::infinity(),
                           bool whole = false);

// CLI11 check that an option's value is not empty; its message says it needs `what`.
CLI::Validator nonEmpty(std::string what);

// CLI11 check of an option's value against a list of accepted words ("'op' or 'api'").
CLI::Validator oneOf(std::vector<std::string> accepted);

// Sets up `app` (named "probe <command>") as every subcommand parses: -h/--help prints the
// command's own usage text, an option given twice keeps the last value, anything not understood
// is left for parseCommandLine to name. Call before adding options and subcommands.
void prepareCommandLine(CLI::App& app);

// Parses `args` into `app`. Returns nullopt when the command should go on; else the exit code to
// return: 0 after printing `usage` on standard output for -h/--help, 64 (usage) after saying on
// standard error what was wrong ("probe compare: unknown option '--frob'", "--output needs a
// value", ...), followed by `usage` for an unknown option.
std::optional<int> parseCommandLine(CLI::App& app, const Args& args, const char* usage);

// For a command that builds big structures in one go and then exits: memory it frees (a read's
// buffers, a batch of rows once applied) stays in the process for its next allocations instead
// of going back to the kernel, to be faulted in again page by page (page faults were a fifth of
// `probe summary`'s time). The peak is what it was; only the ups and downs below it go. And
// the threads share two heaps, which keeps the peak down without making them wait on one.
void keepFreedMemoryForReuse();

// Moves `value` where it stays until the process exits, never destroyed: a command's big results
// (a dump index of a million rows, a comparison of as many tensors) are freed by the operating
// system at once, instead of allocation by allocation (a tenth of `probe summary`'s time). Kept
// reachable (through a list that is never freed), so leak checkers say nothing. Output written
// with stdio is flushed by exit() as before: only destructors that free memory are skipped.
template <typename T>
T& keepUntilExit(T&& value) {
    static auto* kept = new std::vector<std::shared_ptr<void>>();
    auto owned = std::make_shared<T>(std::forward<T>(value));
    kept->push_back(owned);
    return *owned;
}

}  // namespace probe::cli
