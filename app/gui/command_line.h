// probe-studio's command line: what to open, launch or attach to, what to show, and for
// --screenshot where to save the window.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <optional>

#include <QSize>
#include <QString>
#include <QStringList>

#include "main_window.h"
#include "op_filter_proxy.h"
#include "tensor_preview.h"

namespace probe::studio {

// Exit codes, as the probe CLI's (app/cli/exit_codes.h).
constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 64;
constexpr int kExitCannotWrite = 73;

// What the window shows first: a view of the workspace, the start page or the launch form.
enum class Shown { Tree, Plot, Tensor, Config, Compare, Start, Launch };

// How the window is arranged once its session has something to show (and, with a file, saved).
struct ScreenshotRequest {
    using Show = data::OpFilterProxy::Show;
    using TensorPage = widgets::TensorPreview::Page;
    QString file;  // --screenshot FILE; "" when interactive
    Shown shown = Shown::Tree;
    widgets::MainWindow::View view = widgets::MainWindow::View::Tree;
    QString op, process, search, tensorFile, plotMode, stat;
    std::optional<Show> show;
    TensorPage tensorPage = TensorPage::Heatmap;
    int round = -1;
    bool roundGiven = false, log = false, allOps = false, overlay = false;
    bool jump = false;  // --jump: select the first divergence once compared
    QStringList pin;    // "round:N" or op ids to overlay
};

// What to open, launch or attach to.
struct SessionRequest {
    QString dir;          // a dump folder
    QString reference;    // --compare REF: compare `dir` (or the live run) against REF
    QStringList command;  // --launch -- COMMAND..., or the launch form's command
    bool launch = false;
    bool demo = false;
    qint64 attachPid = 0;
    QString output, config;
    int waitRounds = 3;  // --screenshot of a live session: rounds the dump must hold first
    bool live() const { return launch || demo || attachPid > 0; }
    bool hasDump() const { return !dir.isEmpty() || live(); }
};

// Says `message` on standard error as probe-studio; returns `code`.
int fail(const QString& message, int code);

// --stat's value, "max" to "norm" in any case.
std::optional<analysis::Stat> parseStat(const QString& text);

// An argument Qt cannot hold as text (bytes that are not valid in the locale's encoding, e.g. a
// folder named in Latin-1 under UTF-8): said, and the exit code returned; -1 when all are fine.
int refuseArgumentsQtCannotHold(int argc, char** argv);

// Parses the command line into `request`/`session`/`windowSize`; returns an exit code when
// the program should end now (help, version, a usage error), -1 to go on.
int parseCommandLine(const QStringList& arguments, ScreenshotRequest& request,
                     SessionRequest& session, QSize& windowSize);

}  // namespace probe::studio
