// probe run [--output DIR] [--config FILE] [--grads DIR] [--append|--overwrite] [--preload] [--]
// COMMAND [ARGS...] Launches COMMAND with the probe injected into that process tree only, forwards
// its output, returns its exit code, records how it ended in probe_status.json, and prints where
// the dump went and what it holds. SPDX-License-Identifier: GPL-3.0-or-later
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/atb_dump.h"
#include "analysis/dump_reader.h"
#include "analysis/dump_summary.h"
#include "command_line.h"
#include "commands.h"
#include "exit_codes.h"
#include "install_layout.h"
#include "output_relay.h"
#include "probe/format/config_issue.h"
#include "probe/format/dump_status.h"
#include "probe/format/file_util.h"
#include "probe/format/json_input.h"
#include "probe/format/op_config.h"
#include "probe/format/python_command.h"
#include "probe_config.h"

namespace probe::cli {
namespace {

const char* kRunUsage =
    "Usage: probe run [--output DIR] [--config FILE] [--grads DIR] [--append | --overwrite] "
    "[--preload]\n"
    "                 [--quiet] [--relay-output] [--] COMMAND [ARGS...]\n"
    "\n"
    "Runs COMMAND with the probe injected into it and the processes it starts (not those made by\n"
    "fork() alone), and dumps what the config selects into DIR/atb_dump_data (docs/formats.md §1,\n"
    "the op-level layout). The program is not changed: a PyTorch program's modules become the\n"
    "layer-level ops, its aten ops their children.\n"
    "\n"
    "  --output DIR    where the dump goes (default: ./probe_dump)\n"
    "  --config FILE   the op-level config (see `probe config validate`). Edit it while the "
    "program\n"
    "                  runs: changes apply at the next layer-level op. Without it, "
    "DIR/probe_config.json\n"
    "                  is written: statistics of every layer-level op, every round. With it, "
    "a copy of\n"
    "                  FILE goes there, the run's record (one already there is kept, unless "
    "--overwrite).\n"
    "  --grads DIR     also monitor gradients (PyTorch): per-parameter norm, max, min, mean and "
    "NaN count\n"
    "                  at every optimizer step, as CSV in DIR/rank<R>/ (`probe grads DIR`). The "
    "config\n"
    "                  key \"grad_monitor\": true does the same into "
    "DIR/atb_dump_data/grad_monitor.\n"
    "  --append        add this run to the dump DIR holds already (as the load script's programs "
    "do)\n"
    "  --overwrite     delete the dump DIR holds already, then dump this run there\n"
    "                  (without either, a DIR holding the dump of another run is refused)\n"
    "  --preload       also preload the PyTorch adapter (for native programs linking libtorch)\n"
    "  --quiet         no summary, and none of the probe's informational messages (its warnings\n"
    "                  and errors, a config rejected or a process left unprobed, are still said)\n"
    "  --relay-output  COMMAND's standard output and error go through probe run (as Probe Studio\n"
    "                  launches models): if what reads them goes away, COMMAND goes on and the\n"
    "                  rest of them goes to DIR/program_output.log\n"
    "\n"
    "How COMMAND ended (its exit code, or the signal that killed it, kill -9 included) is recorded "
    "in\n"
    "DIR/atb_dump_data/probe_status.json: a program killed before its probe could write out what "
    "was\n"
    "queued leaves an incomplete dump, missing the rows of about its last 100 ms (more when the "
    "disk\n"
    "was slower than the program: the rows queued are missing, up to the memory cap's worth).\n"
    "\n"
    "Exit code: COMMAND's own (128+N when killed by signal N), or: 64 usage, 65 invalid config,\n"
    "66 unreadable config or missing script, 69 the Python interpreter has no torch, 73 output "
    "not\n"
    "writable or holding another run's dump, 76 torch differs from the version the adapter was "
    "built\n"
    "for, 127 COMMAND not found.\n";

// The executable COMMAND names, as execvp would find it; "" when there is none.
std::string resolveCommand(const std::string& command) {
    if (command.find('/') != std::string::npos)
        return ::access(command.c_str(), X_OK) == 0 ? command : std::string();
    const char* path = std::getenv("PATH");
    std::stringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
        const std::string candidate = (dir.empty() ? "." : dir) + "/" + command;
        struct stat st;
        if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
            ::access(candidate.c_str(), X_OK) == 0)
            return candidate;
    }
    return "";
}

// Runs `argv` and returns its standard output (trimmed); nullopt when it could not run or failed.
std::optional<std::string> captureOutput(const std::vector<std::string>& argv) {
    int pipeFds[2];
    if (::pipe2(pipeFds, O_CLOEXEC) != 0) return std::nullopt;
    pid_t pid = ::fork();
    if (pid < 0) return std::nullopt;
    if (pid == 0) {
        ::dup2(pipeFds[1], 1);
        int devNull = ::open("/dev/null", O_WRONLY);
        if (devNull >= 0) ::dup2(devNull, 2);
        // Keep the probe out of this check.
        ::unsetenv("PROBE_OUTPUT_DIR");
        ::unsetenv("PROBE_CONFIG");
        std::vector<char*> args;
        for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        ::execvp(args[0], args.data());
        ::_exit(127);
    }
    ::close(pipeFds[1]);
    std::string out;
    char buffer[4096];
    ssize_t n;
    while ((n = ::read(pipeFds[0], buffer, sizeof buffer)) > 0)
        out.append(buffer, static_cast<size_t>(n));
    ::close(pipeFds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
    return out;
}

bool isDigit(char c) {
    return c >= '0' && c <= '9';
}

// "1.13.0+cpu" -> "1.13"; anything not starting with <digits>.<digits> stays as it is.
std::string majorMinor(const std::string& version) {
    size_t i = 0;
    while (i < version.size() && isDigit(version[i])) ++i;
    if (i == 0 || i >= version.size() || version[i] != '.') return version;
    size_t j = i + 1;
    while (j < version.size() && isDigit(version[j])) ++j;
    return j > i + 1 ? version.substr(0, j) : version;
}

// For a Python interpreter: does it have torch, of the version the adapter was built for?
// Checked without importing torch (a second or more), from the package's files.
int checkPythonTorch(const std::string& interpreter) {
    const std::string script =
        "import importlib.util,os\n"
        "s=importlib.util.find_spec('torch')\n"
        "v=''\n"
        "if s and s.submodule_search_locations:\n"
        "    p=os.path.join(list(s.submodule_search_locations)[0],'version.py')\n"
        "    if os.path.exists(p):\n"
        "        for l in open(p):\n"
        "            if l.startswith('__version__'): v=l.split('=',1)[1].strip().strip(\"'\\\"\")\n"
        "    v=v or '?'\n"
        "print(v)\n";
    auto version = captureOutput({interpreter, "-c", script});
    if (!version) {
        std::fprintf(stderr, "probe run: could not ask %s which torch it has; continuing\n",
                     interpreter.c_str());
        return kExitOk;
    }
    if (version->empty()) {
        std::fprintf(stderr,
                     "probe run: %s has no torch module, so there is nothing to probe.\n"
                     "  Debian's torch (python3-torch) belongs to /usr/bin/python3: run the "
                     "program with that\n"
                     "  interpreter, e.g. probe run -- /usr/bin/python3 script.py\n",
                     interpreter.c_str());
        return kExitNoTorch;
    }
    if (!PROBE_HAVE_TORCH_ADAPTER) {
        std::fprintf(
            stderr,
            "probe run: this Probe Studio was built without the PyTorch adapter (libtorch was not "
            "found at build time); the program would run without the probe\n");
        return kExitNoTorch;
    }
    if (*version != "?" && majorMinor(*version) != majorMinor(PROBE_TORCH_BUILT_VERSION)) {
        std::fprintf(
            stderr,
            "probe run: %s has torch %s, but the PyTorch adapter was built for torch %s.\n"
            "  Run the program with the interpreter of that torch (Debian: /usr/bin/python3), or\n"
            "  rebuild Probe Studio against this torch.\n",
            interpreter.c_str(), version->c_str(), PROBE_TORCH_BUILT_VERSION);
        return kExitTorchMismatch;
    }
    return kExitOk;
}

// What a run keeps beside its dump of the config it ran with: the config itself without
// --config, a copy of it with --config. The app shows it with the dump.
constexpr const char* kConfigRecordName = "probe_config.json";

// Writes `record`, the run's copy of the config the user gave (`config`, which is never written
// to; `text` what it held when checked), unless the config is that file. A file already there
// is replaced only with --overwrite, as a run without --config never replaces it either: it is
// the record of the runs already in the folder (maybe the live config of one still going), or
// the user's. `written` says whether it was written; a failure is said and returns the exit
// code.
int recordConfig(const std::string& record, const std::string& config, const std::string& text,
                 bool overwrite, bool quiet, bool* written) {
    *written = false;
    const std::string resolved = format::resolvedPath(config);
    if (!resolved.empty() && resolved == format::resolvedPath(record)) return kExitOk;
    struct stat st;
    if (!overwrite && ::lstat(record.c_str(), &st) == 0) {
        if (!quiet)
            std::fprintf(stderr,
                         "probe run: %s was there before this run and is kept (--overwrite "
                         "replaces it with a copy of the config); this run's config is %s\n",
                         record.c_str(), config.c_str());
        return kExitOk;
    }
    if (int err = format::writeFileAtomically(record, text)) {
        std::fprintf(stderr, "probe run: cannot write %s, the record of the config: %s\n",
                     record.c_str(), std::strerror(err));
        return kExitCannotCreate;
    }
    *written = true;
    return kExitOk;
}

// Once the program has ended: `record` takes what `config` holds then, when that differs and is a
// valid config (the probe kept the config before an invalid edit).
void updateConfigRecord(const std::string& record, const std::string& config, bool quiet) {
    const auto text = format::readRegularFile(config, format::kConfigJsonLimits.maxBytes, nullptr);
    if (!text || !format::parseOpConfig(*text, config).ok()) return;
    const auto kept = format::readRegularFile(record, format::kConfigJsonLimits.maxBytes, nullptr);
    if (kept && *kept == *text) return;
    if (int err = format::writeFileAtomically(record, *text); err && !quiet)
        std::fprintf(stderr, "probe run: cannot update %s, the record of the config: %s\n",
                     record.c_str(), std::strerror(err));
}

// Removes `name` in `dirFd` and everything below it, following no link (a link is removed,
// never what it points to).
int removeTree(int dirFd, const std::string& name) {
    int fd = ::openat(dirFd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno != ENOTDIR && errno != ELOOP) return errno;
        return ::unlinkat(dirFd, name.c_str(), 0) == 0 ? 0 : errno;
    }
    DIR* dir = ::fdopendir(fd);
    if (!dir) {
        const int error = errno;
        ::close(fd);
        return error;
    }
    int error = 0;
    std::vector<std::string> entries;
    while (dirent* e = ::readdir(dir))
        if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
            entries.push_back(e->d_name);
    for (const auto& entry : entries)
        if (int e = removeTree(::dirfd(dir), entry); e && !error) error = e;
    ::closedir(dir);
    if (!error && ::unlinkat(dirFd, name.c_str(), AT_REMOVEDIR) != 0) error = errno;
    return error;
}

// What the dump root `dumpRoot` holds already: "" when nothing (absent or empty), else a
// description for people ("3 processes, complete, started 2026-...").
std::string earlierDump(const std::string& dumpRoot) {
    struct stat st;
    if (::lstat(dumpRoot.c_str(), &st) != 0) return "";
    if (S_ISLNK(st.st_mode)) return "a symbolic link, never followed";
    if (!S_ISDIR(st.st_mode)) return "a file, not a dump folder";
    if (format::listDirectory(dumpRoot, format::EntryKind::Directories).empty() &&
        format::listDirectory(dumpRoot, format::EntryKind::Files).empty())
        return "";
    auto status = format::readStatusFile(dumpRoot, nullptr);
    if (!status) return "files of an earlier dump";
    std::string started;
    for (const auto& p : status->processes)
        if (!p.started.empty() && (started.empty() || p.started < started)) started = p.started;
    return "the dump of another run: " + std::to_string(status->processes.size()) + " process" +
           (status->processes.size() == 1 ? "" : "es") + ", " + format::toString(status->state) +
           (started.empty() ? "" : ", started " + started);
}

std::string prependPath(const std::string& item, const char* existing) {
    return existing && *existing ? item + ":" + existing : item;
}

pid_t gChild = -1;

void forwardSignal(int signal) {
    if (gChild > 0) ::kill(gChild, signal);
}

// Whether a probe wrote into the atb_dump_data folder `root`: its data folder or status file.
bool probeWroteInto(const std::string& root) {
    return format::isDirectory(root + "/data") ||
           format::fileExists(root + "/" + format::kStatusFileName);
}

// The folder holding the dump that `dir` is, or is inside of ("" when none): the atb_dump_data
// folder at or above `dir` (findAtbDumpRoot), when it holds a dump (probeWroteInto) and is not
// dir's own, however dir is spelled ("out/", "./out/."). Given as --output, such a folder took a
// new dump inside the old one (X/atb_dump_data/atb_dump_data).
std::string dumpHolding(const std::string& dir) {
    const auto root = analysis::findAtbDumpRoot(dir);
    if (!root || !probeWroteInto(*root)) return {};
    const size_t slash = root->rfind('/');
    const std::string holder = slash == 0 ? "/" : root->substr(0, slash);
    return format::resolvedPath(holder) == format::resolvedPath(dir) ? std::string() : holder;
}

}  // namespace

int runRunCommand(const Args& args) {
    std::string output = "probe_dump", config, grads;
    bool preload = false, quiet = false, append = false, overwrite = false, relayOutput = false;
    std::vector<std::string> command;
    CLI::App app{"", "probe run"};
    prepareCommandLine(app);
    app.positionals_at_end();  // the command's own options follow its name, untouched
    app.add_option("--output", output)->check(nonEmpty("a directory"));
    app.add_option("--config", config)->check(nonEmpty("a file"));
    app.add_option("--grads", grads)->check(nonEmpty("a directory"));
    app.add_flag("--append", append);
    app.add_flag("--overwrite", overwrite);
    app.add_flag("--preload", preload);
    app.add_flag("--quiet", quiet);
    app.add_flag("--relay-output", relayOutput);
    app.add_option("COMMAND", command);
    if (auto exit = parseCommandLine(app, args, kRunUsage)) return *exit;
    if (command.empty()) {
        std::fprintf(stderr, "probe run: no command to run\n\n%s", kRunUsage);
        return kExitUsage;
    }
    if (append && overwrite) {
        std::fprintf(stderr, "probe run: --append and --overwrite exclude each other\n");
        return kExitUsage;
    }
    const std::string executable = resolveCommand(command[0]);
    if (executable.empty()) {
        std::fprintf(stderr, "probe run: command not found or not executable: %s\n",
                     command[0].c_str());
        return kExitCommandNotFound;
    }

    // Everything is checked before anything is created: a command that cannot run leaves no
    // output folder behind.
    if (format::isPythonName(format::fileNameOf(command[0]))) {
        const format::PythonTarget target = format::pythonTarget(command);
        const std::string& script = target.name;
        if (target.kind == format::PythonTarget::Kind::Script && !format::fileExists(script)) {
            std::fprintf(stderr,
                         "probe run: the script %s does not exist; nothing was run or created\n",
                         format::absolutePath(script).c_str());
            return kExitConfigUnreadable;
        }
        if (int code = checkPythonTorch(executable)) return code;
    }
    std::string configText;  // the config given, as it was checked
    if (!config.empty()) {
        config = format::absolutePath(config);
        std::string error;
        // Up to the size a config may have, as `probe config validate` reads it: a file beyond
        // that cannot be read (66) there, and was "not valid" (65) here.
        auto text = format::readTextFile(config, &error, format::kConfigJsonLimits.maxBytes);
        if (!text) {
            std::fprintf(stderr, "probe run: cannot read the config %s: %s\n", config.c_str(),
                         error.c_str());
            return kExitConfigUnreadable;
        }
        auto parsed = format::parseOpConfig(*text, config);
        if (!parsed.ok()) {
            std::fprintf(stderr, "probe run: the config is not valid:\n%s\n",
                         format::describeIssues(parsed.issues).c_str());
            return kExitConfigInvalid;
        }
        configText = std::move(*text);
    }
    const std::string outputDir = format::absolutePath(output);
    const std::string dumpRoot = outputDir + "/atb_dump_data";
    if (const std::string holder = dumpHolding(outputDir); !holder.empty()) {
        std::fprintf(stderr,
                     "probe run: %s is in the dump %s/atb_dump_data: the new dump would go inside "
                     "it.\n  Give %s (the folder that holds it) with --append or --overwrite, or "
                     "another --output.\n",
                     outputDir.c_str(), holder.c_str(), holder.c_str());
        return kExitCannotCreate;
    }
    if (const std::string earlier = earlierDump(dumpRoot); !earlier.empty()) {
        if (overwrite && earlier.find("never followed") == std::string::npos) {
            if (int err = removeTree(AT_FDCWD, dumpRoot)) {
                std::fprintf(stderr, "probe run: cannot delete the earlier dump %s: %s\n",
                             dumpRoot.c_str(), std::strerror(err));
                return kExitCannotCreate;
            }
            if (!quiet)
                std::fprintf(stderr, "probe run: deleted the earlier dump in %s (--overwrite)\n",
                             dumpRoot.c_str());
        } else if (!append || earlier.find("never followed") != std::string::npos) {
            std::fprintf(stderr,
                         "probe run: %s holds %s.\n"
                         "  Use --append to add this run to it, --overwrite to replace it, or "
                         "another --output.\n",
                         dumpRoot.c_str(), earlier.c_str());
            return kExitCannotCreate;
        }
    }

    // The output directory first: a default config goes there.
    if (int err = format::makeDirectories(outputDir)) {
        std::fprintf(stderr, "probe run: cannot create the output directory %s: %s\n",
                     outputDir.c_str(), std::strerror(err));
        return kExitCannotCreate;
    }
    if (::access(outputDir.c_str(), W_OK) != 0) {
        std::fprintf(stderr, "probe run: the output directory %s is not writable\n",
                     outputDir.c_str());
        return kExitCannotCreate;
    }
    const std::string configRecord = outputDir + "/" + kConfigRecordName;
    bool recorded = false;  // a copy of --config's file written to `configRecord`
    if (!config.empty()) {
        if (int code = recordConfig(configRecord, config, configText, overwrite, quiet, &recorded))
            return code;
    } else {
        config = configRecord;
        if (!format::fileExists(config)) {
            if (int err = format::writeFileAtomically(
                    config, format::OpConfig::startingPoint().toFileText())) {
                std::fprintf(stderr, "probe run: cannot write %s: %s\n", config.c_str(),
                             std::strerror(err));
                return kExitCannotCreate;
            }
            if (!quiet)
                std::fprintf(
                    stderr,
                    "probe run: no --config given; wrote %s (statistics of every layer-level op; "
                    "edit it while the program runs)\n",
                    config.c_str());
        }
    }

    const InstallLayout layout = installLayout();
    ::unlink((dumpRoot + "/" + format::kInjectionLogName).c_str());

    // The probe goes into this process tree only: through the environment of the child.
    ::setenv(
        "PYTHONPATH",
        prependPath(layout.injectDir + ":" + layout.pythonDir, std::getenv("PYTHONPATH")).c_str(),
        1);
    ::setenv("PROBE_OUTPUT_DIR", outputDir.c_str(), 1);
    ::setenv("PROBE_CONFIG", config.c_str(), 1);
    // The probe keeps the record in step with each config it applies (a later edit it refuses
    // leaves the record at the one in force).
    if (recorded)
        ::setenv("PROBE_CONFIG_RECORD", configRecord.c_str(), 1);
    else
        ::unsetenv("PROBE_CONFIG_RECORD");
    if (quiet) ::setenv("PROBE_QUIET", "1", 1);
    // Read by probe_studio.grad_monitor.arm() in the program (torch_hooks calls it).
    if (!grads.empty()) ::setenv("PROBE_GRAD_MONITOR", format::absolutePath(grads).c_str(), 1);
    if (preload)
        ::setenv(
            "LD_PRELOAD",
            prependPath(layout.libDir + "/libprobe_torch.so", std::getenv("LD_PRELOAD")).c_str(),
            1);

    if (!quiet) {
        std::string shown;
        for (const auto& c : command) shown += (shown.empty() ? "" : " ") + c;
        std::fprintf(stderr, "probe run: %s\n  dump: %s\n  config: %s\n", shown.c_str(),
                     dumpRoot.c_str(), config.c_str());
    }
    std::fflush(nullptr);

    // Terminal signals (Ctrl-C) reach the child too, through the process group: let it decide.
    // Signals sent to us alone are passed on. They are set up before the fork, blocked across
    // it: a SIGTERM that comes as the child starts is passed on once there is a child, rather
    // than killing us and leaving the child running. The child gets back what we were given
    // (a program started with SIGINT ignored keeps it ignored).
    struct sigaction ignore {
    }, forward{};
    ignore.sa_handler = SIG_IGN;
    forward.sa_handler = forwardSignal;
    sigemptyset(&forward.sa_mask);
    constexpr int kHandled[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP};
    sigset_t handled, previousMask;
    sigemptyset(&handled);
    for (int signal : kHandled) sigaddset(&handled, signal);
    ::sigprocmask(SIG_BLOCK, &handled, &previousMask);
    constexpr size_t kHandledCount = std::size(kHandled);
    struct sigaction previous[kHandledCount];
    for (size_t i = 0; i < kHandledCount; ++i)
        ::sigaction(kHandled[i],
                    kHandled[i] == SIGINT || kHandled[i] == SIGQUIT ? &ignore : &forward,
                    &previous[i]);
    // Relayed output: a reader gone (EPIPE) must not end probe run either; the child gets back
    // what SIGPIPE was.
    std::optional<OutputRelay> relay;
    struct sigaction previousPipe {};
    if (relayOutput) {
        relay.emplace(outputDir + "/program_output.log");
        if (std::string error; !relay->open(&error)) {
            std::fprintf(stderr, "probe run: cannot relay the program's output: %s\n",
                         error.c_str());
            ::sigprocmask(SIG_SETMASK, &previousMask, nullptr);
            return kExitInternal;
        }
        ::sigaction(SIGPIPE, &ignore, &previousPipe);
    }
    gChild = ::fork();
    if (gChild == 0) {
        for (size_t i = 0; i < kHandledCount; ++i) ::sigaction(kHandled[i], &previous[i], nullptr);
        if (relay) {
            ::sigaction(SIGPIPE, &previousPipe, nullptr);
            relay->becomeChildOutput();
        }
        ::sigprocmask(SIG_SETMASK, &previousMask, nullptr);
        std::vector<char*> argv;
        for (const auto& c : command) argv.push_back(const_cast<char*>(c.c_str()));
        argv.push_back(nullptr);
        ::execv(executable.c_str(), argv.data());
        std::fprintf(stderr, "probe run: cannot execute %s: %s\n", executable.c_str(),
                     std::strerror(errno));
        ::_exit(kExitCommandNotFound);
    }
    const int forkError = errno;
    ::sigprocmask(SIG_SETMASK, &previousMask, nullptr);  // what came meanwhile is passed on now
    if (gChild < 0) {
        std::fprintf(stderr, "probe run: cannot start %s: %s\n", command[0].c_str(),
                     std::strerror(forkError));
        return kExitInternal;
    }
    int status = 0;
    if (relay)
        relay->relayUntilExit(gChild, &status);
    else
        while (::waitpid(gChild, &status, 0) < 0 && errno == EINTR) {
        }
    if (relay && relay->loggedToFile())
        std::fprintf(stderr,
                     "probe run: the program's output could not all be passed on (what read it "
                     "went away); the rest is in %s\n",
                     relay->logPath().c_str());
    int exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);

    // How it ended, whatever ended it (kill -9 too), goes into the status of its dump.
    const format::ProgramEnd end{
        WIFEXITED(status) ? format::ProgramEnd::How::Exited : format::ProgramEnd::How::Signaled,
        WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), "probe run"};
    std::string commandLine;  // as a process's own entry says it: arguments joined by spaces
    for (const auto& word : command) commandLine += (commandLine.empty() ? "" : " ") + word;
    if (int err = format::recordProgramEnd(
            dumpRoot, gChild, format::printableText(commandLine, std::string::npos), end);
        err && err != ENOENT)
        std::fprintf(stderr,
                     "probe run: cannot record in %s/probe_status.json how the program ended: %s\n",
                     dumpRoot.c_str(), std::strerror(err));

    // The record says what the config says at the end: it may have been edited while the
    // program ran, as the record of a run without --config is.
    if (recorded) updateConfigRecord(configRecord, config, quiet);

    // What the injected part said, process by process.
    bool attached = false;
    for (const auto& record : format::readInjectionLog(dumpRoot)) {
        if (record.status == "attached") {
            attached = true;
            continue;
        }
        std::fprintf(
            stderr, "probe run: process %lld: %s\n", static_cast<long long>(record.pid),
            format::printableText(record.message.empty() ? record.status : record.message, 2000)
                .c_str());
        if (record.status == "torch_mismatch" && exitCode == 0) exitCode = kExitTorchMismatch;
    }
    if (!quiet) {
        // A program killed early (kill -9, the OOM killer) ended before its probe could start:
        // not a program that never imports torch.
        // A program that failed at once (a syntax error) is not asked whether it imports torch.
        if (!attached && !probeWroteInto(dumpRoot))
            std::fprintf(stderr, "%s",
                         WIFSIGNALED(status)
                             ? ("probe run: the program was killed by " +
                                format::signalName(WTERMSIG(status)) +
                                " before it started the probe; nothing was dumped\n")
                                   .c_str()
                         : WEXITSTATUS(status) != 0
                             ? ("probe run: the program exited with code " +
                                std::to_string(WEXITSTATUS(status)) +
                                " before it started the probe (see its error above); nothing "
                                "was dumped\n")
                                   .c_str()
                             : "probe run: the program never started the probe (did it import "
                               "torch?); nothing was dumped\n");
        if (format::isDirectory(dumpRoot)) {
            std::string error;
            auto index = analysis::readDump(dumpRoot, &error);
            const std::string ended =
                WIFEXITED(status) ? "exited with " + std::to_string(WEXITSTATUS(status))
                                  : "was killed by " + format::signalName(WTERMSIG(status)) +
                                        " (exit status " + std::to_string(exitCode) + ")";
            std::fprintf(stderr, "probe run: %s %s\n%s", format::fileNameOf(command[0]).c_str(),
                         ended.c_str(),
                         index ? analysis::formatSummary(analysis::summarizeDump(*index)).c_str()
                               : error.c_str());
            // dump_enable is false unless the config says otherwise (msprobe's default): a
            // config of a task and rounds alone dumped nothing, and nothing said why.
            if (index && attached && index->rowCount() == 0) {
                const auto text =
                    format::readRegularFile(config, format::kConfigJsonLimits.maxBytes, nullptr);
                const auto parsed =
                    text ? format::parseOpConfig(*text, config) : format::OpConfigResult{};
                if (parsed.ok() && !parsed.config->dumpEnable)
                    std::fprintf(stderr,
                                 "probe run: nothing was dumped: the config's \"dump_enable\" is "
                                 "false (its default); set it true in %s (it may be changed "
                                 "while the program runs)\n",
                                 format::printableText(config, 2000).c_str());
            }
        }
    }
    return exitCode;
}

}  // namespace probe::cli
