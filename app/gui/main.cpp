// probe-studio: the desktop application. Parses the command line, opens the dump, launches a
// model or attaches to a probe, and for --screenshot renders the window once the dump is
// loaded (or a live session has data) and exits. Everything else lives in ui/ (sessions, data
// layer, widgets).
// SPDX-License-Identifier: GPL-3.0-or-later
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QIcon>
#include <QPixmap>
#include <QSize>
#include <QTimer>
#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>

#include "config_document.h"
#include "config_editor.h"
#include "dump_cursor.h"
#include "main_window.h"
#include "op_filter_proxy.h"
#include "op_tree_model.h"
#include "op_tree_panel.h"
#include "dump_store.h"
#include "probe_config.h"
#include "session/launch_session.h"
#include "session/live_probes.h"
#include "statistics_plot.h"
#include "tensor_document.h"
#include "tensor_preview.h"

namespace {

using probe::widgets::MainWindow;

// Exit codes, as the probe CLI's (app/cli/exit_codes.h).
constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 64;
constexpr int kExitCannotWrite = 73;

// The smallest window --size may ask for.
constexpr int kMinWidth = 200;
constexpr int kMinHeight = 150;

// How long --screenshot waits for a dump to load before giving up.
constexpr int kScreenshotTimeoutMs = 180000;

// What the window shows first: a view of the workspace, the start page or the launch form.
enum class Shown { Tree, Plot, Tensor, Config, Start, Launch };

using Show = probe::data::OpFilterProxy::Show;
using TensorPage = probe::widgets::TensorPreview::Page;

struct ScreenshotRequest {
    QString file;
    Shown shown = Shown::Tree;
    MainWindow::View view = MainWindow::View::Tree;
    QString op, process, search, tensorFile, plotMode, stat;
    std::optional<Show> show;
    TensorPage tensorPage = TensorPage::Heatmap;
    int round = -1;
    bool roundGiven = false, log = false, allOps = false, overlay = false;
    QStringList pin;  // "round:N" or op ids to overlay
};

// What to open, launch or attach to.
struct SessionRequest {
    QString dir;            // a dump folder
    QStringList command;    // --launch -- COMMAND..., or the launch form's command
    bool launch = false;
    bool demo = false;
    qint64 attachPid = 0;
    QString output, config;
    int waitRounds = 3;     // --screenshot of a live session: rounds the dump must hold first
    bool live() const { return launch || demo || attachPid > 0; }
};

int fail(const QString& message, int code) {
    std::fprintf(stderr, "probe-studio: %s\n", qPrintable(message));
    return code;
}

std::optional<probe::analysis::Stat> parseStat(const QString& text) {
    const QString s = text.toLower();
    if (s == QLatin1String("max")) return probe::analysis::Stat::Max;
    if (s == QLatin1String("min")) return probe::analysis::Stat::Min;
    if (s == QLatin1String("mean")) return probe::analysis::Stat::Mean;
    if (s == QLatin1String("norm")) return probe::analysis::Stat::Norm;
    return std::nullopt;
}

std::optional<Show> parseShow(const QString& text) {
    const QString s = text.toLower();
    if (s == QLatin1String("all")) return Show::All;
    if (s == QLatin1String("anomalies")) return Show::Anomalies;
    if (s == QLatin1String("nan")) return Show::NanOnly;
    if (s == QLatin1String("dumped")) return Show::Dumped;
    if (s == QLatin1String("ticked")) return Show::Ticked;
    return std::nullopt;
}

std::optional<TensorPage> parseTensorPage(const QString& text) {
    const QString s = text.toLower();
    if (s == QLatin1String("heatmap")) return TensorPage::Heatmap;
    if (s == QLatin1String("values")) return TensorPage::Values;
    if (s == QLatin1String("histogram")) return TensorPage::Histogram;
    return std::nullopt;
}

// The tensor view with --tensor FILE, or else the selected op's tensor of the selected round.
bool showTensor(MainWindow& window, const ScreenshotRequest& r, QString* problem) {
    window.showPage(MainWindow::Page::Workspace);
    window.showView(MainWindow::View::Tensor);
    window.tensorPreview()->setOverlay(r.overlay);
    if (!r.tensorFile.isEmpty()) {
        window.previewTensorFile(r.tensorFile);
    } else if (!window.previewCurrentTensor()) {
        *problem = QStringLiteral("the selected op has no tensor file in this round (pick one with --op/--round, or --tensor FILE)");
        return false;
    }
    window.tensorPreview()->showPage(r.tensorPage);
    return true;
}

// Puts the window in the state the screenshot asks for; returns false (with a message) when
// something asked for does not exist in the dump.
bool arrange(MainWindow& window, const ScreenshotRequest& r, QString* problem) {
    if (!r.process.isEmpty() && !window.selectProcess(r.process)) {
        *problem = QStringLiteral("no process %1 in the dump").arg(r.process);
        return false;
    }
    if (!r.search.isEmpty()) window.treePanel()->setSearchText(r.search);
    if (r.show) window.treePanel()->proxy()->setShow(*r.show);
    if (r.roundGiven) {
        const uint32_t shownProcess = window.treePanel()->model()->process();
        const auto rounds = window.store()->index().rounds(shownProcess == probe::analysis::kNone ? 0 : shownProcess);
        if (!std::binary_search(rounds.begin(), rounds.end(), r.round)) {
            *problem = rounds.empty() ? QStringLiteral("--round %1: the dump has no rounds").arg(r.round)
                                      : QStringLiteral("--round %1: the dump's rounds are %2 to %3")
                                            .arg(r.round)
                                            .arg(rounds.front())
                                            .arg(rounds.back());
            return false;
        }
        window.setRound(r.round);
    }
    if (!r.op.isEmpty() && !window.selectOp(r.op)) {
        *problem = QStringLiteral("no op with id %1 in the dump").arg(r.op);
        return false;
    }
    auto* plot = window.statisticsPlot();
    plot->setMode(r.plotMode == QLatin1String("ops") ? probe::widgets::StatisticsPlot::Mode::RoundProfile
                                                      : probe::widgets::StatisticsPlot::Mode::Rounds);
    if (!r.stat.isEmpty()) {
        const auto stat = parseStat(r.stat);
        if (!stat) {
            *problem = QStringLiteral("--stat must be max, min, mean or norm");
            return false;
        }
        if (plot->mode() == probe::widgets::StatisticsPlot::Mode::RoundProfile) {
            plot->setProfileStat(*stat);
        } else {
            for (int s = 0; s < probe::analysis::kStatCount; ++s)
                plot->setStatEnabled(static_cast<probe::analysis::Stat>(s), static_cast<probe::analysis::Stat>(s) == *stat);
        }
    }
    plot->setProfileAllDepths(r.allOps);
    plot->setLogScale(r.log);
    for (const QString& pin : r.pin) {
        // Pin the named op's tensor (rounds mode) or the named round (ops mode), then come back.
        const uint32_t op = window.cursor()->op();
        const int32_t round = window.cursor()->round();
        if (pin.startsWith(QLatin1String("round:"))) {
            window.setRound(pin.mid(6).toInt());
        } else if (!window.selectOp(pin)) {
            *problem = QStringLiteral("--pin: no op with id %1").arg(pin);
            return false;
        }
        plot->pinCurrent();
        window.cursor()->setOp(op);
        window.setRound(round);
    }
    window.tensorPreview()->setOverlay(r.overlay);  // for the tensor view, now or later
    window.showView(r.view);
    if (r.shown == Shown::Start) window.showPage(MainWindow::Page::Start);
    if (r.view == MainWindow::View::Tensor) return showTensor(window, r, problem);
    return true;
}

// Parses the command line into `request`/`session`/`windowSize`; returns an exit code when
// the program should end now (help, version, a usage error), -1 to go on.
int parseCommandLine(const QStringList& arguments, ScreenshotRequest& request, SessionRequest& session, QSize& windowSize) {
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "Probe Studio: find where a neural network's numbers go wrong.\n"
        "Opens a dump folder of either layout (atb_dump_data written by `probe run`, or msprobe\n"
        "step<N>/rank<R> folders written by PrecisionDebugger), complete or still being written;\n"
        "launches a model under the probe and follows it live; attaches to a running probe.\n"
        "\n"
        "  probe-studio                                    the start page\n"
        "  probe-studio DIR                                open a dump folder\n"
        "  probe-studio --launch -- /usr/bin/python3 train.py --epochs 2\n"
        "  probe-studio --output out --config cfg.json --launch -- ./engine\n"
        "  probe-studio --demo                             the bundled demo, launched"));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("DIR"), QStringLiteral("A dump folder to open."), QStringLiteral("[DIR]"));
    parser.addPositionalArgument(QStringLiteral("COMMAND"), QStringLiteral("With --launch: the program and its arguments, after --."),
                                 QStringLiteral("| --launch -- COMMAND [ARGS...]"));
    const QCommandLineOption open(QStringLiteral("open"), QStringLiteral("Open the dump folder DIR."), QStringLiteral("DIR"));
    const QCommandLineOption launch(QStringLiteral("launch"),
                                    QStringLiteral("Launch the COMMAND after -- under the probe, as `probe run` does, and follow it live."));
    const QCommandLineOption output(QStringLiteral("output"),
                                    QStringLiteral("With --launch: where the dump goes (DIR/atb_dump_data; default: a new folder)."),
                                    QStringLiteral("DIR"));
    const QCommandLineOption config(QStringLiteral("config"),
                                    QStringLiteral("With --launch: the op-level config the model starts with (probe run's default\n"
                                                   "without it). Otherwise: a config file of either kind to edit."),
                                    QStringLiteral("FILE"));
    const QCommandLineOption demo(QStringLiteral("demo"), QStringLiteral("Launch the bundled demo model (a planted overflow to find)."));
    const QCommandLineOption attach(QStringLiteral("attach"), QStringLiteral("Attach to the running probe of this process."),
                                    QStringLiteral("PID"));
    const QCommandLineOption screenshot(
        QStringLiteral("screenshot"),
        QStringLiteral("Render the window once the dump is loaded (a live session: once the tree and the\n"
                       "plots have --wait-rounds rounds), save it as a PNG and exit."),
        QStringLiteral("FILE"));
    const QCommandLineOption waitRounds(QStringLiteral("wait-rounds"),
                                        QStringLiteral("--screenshot of a live session: the rounds its dump must hold first."),
                                        QStringLiteral("N"), QStringLiteral("3"));
    const QCommandLineOption view(
        QStringLiteral("view"),
        QStringLiteral("What to show: tree (an op's tensors), plot, tensor, config (the config editor),\n"
                       "start (the start page) or launch (the launch form, filled with the COMMAND after --)."),
        QStringLiteral("tree|plot|tensor|config|start|launch"), QStringLiteral("tree"));
    const QCommandLineOption op(QStringLiteral("op"), QStringLiteral("Select the op with this id (\"2_1\"; msprobe: the entry name)."),
                                QStringLiteral("ID"));
    const QCommandLineOption process(QStringLiteral("process"), QStringLiteral("Show this process's ops (\"0_1234\", \"rank0\")."),
                                     QStringLiteral("KEY"));
    const QCommandLineOption round(QStringLiteral("round"), QStringLiteral("Select this round (execution count, or step)."),
                                   QStringLiteral("N"));
    const QCommandLineOption search(QStringLiteral("search"), QStringLiteral("Filter the op tree by this text."), QStringLiteral("TEXT"));
    const QCommandLineOption show(QStringLiteral("show"), QStringLiteral("Ops to show: all, anomalies, nan, dumped, ticked."),
                                  QStringLiteral("WHAT"));
    const QCommandLineOption plot(QStringLiteral("plot"),
                                  QStringLiteral("Plot a tensor across rounds, or one statistic of the ops across a round."),
                                  QStringLiteral("rounds|ops"), QStringLiteral("rounds"));
    const QCommandLineOption stat(QStringLiteral("stat"), QStringLiteral("Statistic to plot (ops plot), or the only one (rounds plot)."),
                                  QStringLiteral("max|min|mean|norm"));
    const QCommandLineOption allOps(QStringLiteral("all-ops"), QStringLiteral("Ops plot: every op, not only layer-level ones."));
    const QCommandLineOption log(QStringLiteral("log"), QStringLiteral("Logarithmic y axis."));
    const QCommandLineOption pin(QStringLiteral("pin"), QStringLiteral("Overlay this op's tensor (rounds plot) or round:N (ops plot); repeatable."),
                                 QStringLiteral("ID|round:N"));
    const QCommandLineOption tensor(QStringLiteral("tensor"),
                                    QStringLiteral("Open this .bin file in the tensor preview (--view tensor), with or without DIR."),
                                    QStringLiteral("FILE"));
    const QCommandLineOption tensorPage(QStringLiteral("tensor-page"), QStringLiteral("Tensor preview page: heatmap, values or histogram."),
                                       QStringLiteral("PAGE"), QStringLiteral("heatmap"));
    const QCommandLineOption overlay(QStringLiteral("overlay"), QStringLiteral("Tensor preview: NaN/Inf/negative overlay."));
    const QCommandLineOption size(QStringLiteral("size"), QStringLiteral("Window size."), QStringLiteral("WxH"), QStringLiteral("1500x900"));
    for (const auto* o : {&open, &launch, &output, &config, &demo, &attach, &screenshot, &waitRounds, &view, &op, &process, &round,
                          &search, &show, &plot, &stat, &allOps, &log, &pin, &tensor, &tensorPage, &overlay, &size})
        parser.addOption(*o);
    if (!parser.parse(arguments)) return fail(parser.errorText(), kExitUsage);
    if (parser.isSet(QStringLiteral("help"))) parser.showHelp(kExitOk);
    if (parser.isSet(QStringLiteral("version"))) parser.showVersion();

    QString viewName = parser.value(view);
    if (parser.isSet(tensor)) {
        // --tensor FILE is a view of its own: the tensor preview.
        if (parser.isSet(view) && viewName != QLatin1String("tensor"))
            return fail(QStringLiteral("--tensor opens the tensor view; it does not go with --view %1").arg(viewName), kExitUsage);
        if (!QFileInfo(parser.value(tensor)).isFile())
            return fail(QStringLiteral("--tensor: no file %1").arg(parser.value(tensor)), kExitUsage);
        viewName = QStringLiteral("tensor");
    }
    session.dir = parser.value(open);
    session.launch = parser.isSet(launch);
    session.demo = parser.isSet(demo);
    session.output = parser.value(output);
    session.config = parser.value(config);
    const QStringList positional = parser.positionalArguments();
    const bool takesCommand = session.launch || viewName == QLatin1String("launch");
    if (takesCommand) {
        // The command is what follows "--"; anything positional before it is a mistake.
        const qsizetype dashes = arguments.indexOf(QStringLiteral("--"));
        session.command = dashes < 0 ? QStringList() : arguments.mid(dashes + 1);
        if (session.launch && session.command.isEmpty())
            return fail(QStringLiteral("--launch needs the command to run after --, e.g. --launch -- /usr/bin/python3 train.py"), kExitUsage);
        if (positional.size() != session.command.size())
            return fail(QStringLiteral("give either a dump folder or a command after --, not both"), kExitUsage);
    } else {
        if (positional.size() > 1)
            return fail(QStringLiteral("one dump folder at a time (got %1); to run a command use --launch -- COMMAND").arg(positional.join(QLatin1Char(' '))),
                        kExitUsage);
        if (!positional.isEmpty()) {
            if (!session.dir.isEmpty()) return fail(QStringLiteral("give the folder either as DIR or with --open, not both"), kExitUsage);
            session.dir = positional.front();
        }
    }
    if (parser.isSet(attach)) {
        bool ok = false;
        session.attachPid = parser.value(attach).toLongLong(&ok);
        if (!ok || session.attachPid <= 0) return fail(QStringLiteral("--attach needs a process id"), kExitUsage);
    }
    const int sources = int(!session.dir.isEmpty()) + int(session.launch) + int(session.demo) + int(session.attachPid > 0);
    if (sources > 1) return fail(QStringLiteral("give one of DIR (--open), --launch, --demo and --attach"), kExitUsage);
    if (!session.output.isEmpty() && !session.launch && viewName != QLatin1String("launch"))
        return fail(session.demo ? QStringLiteral("--output goes with --launch (--demo writes to a fresh folder of its own)")
                                 : QStringLiteral("--output goes with --launch"),
                    kExitUsage);
    {
        bool ok = false;
        session.waitRounds = parser.value(waitRounds).toInt(&ok);
        if (!ok || session.waitRounds < 1) return fail(QStringLiteral("--wait-rounds must be a number of rounds, 1 or more"), kExitUsage);
    }

    const QStringList sizeParts = parser.value(size).split(QLatin1Char('x'));
    bool widthOk = false, heightOk = false;
    const int width = sizeParts.value(0).toInt(&widthOk), height = sizeParts.value(1).toInt(&heightOk);
    if (sizeParts.size() != 2 || !widthOk || !heightOk)
        return fail(QStringLiteral("--size must be WIDTHxHEIGHT, e.g. 1500x900"), kExitUsage);
    if (width < kMinWidth || height < kMinHeight)
        return fail(QStringLiteral("--size must be at least %1x%2").arg(kMinWidth).arg(kMinHeight), kExitUsage);

    windowSize = QSize(width, height);
    request.file = parser.value(screenshot);
    if (viewName == QLatin1String("tree"))
        request.shown = Shown::Tree;
    else if (viewName == QLatin1String("plot"))
        request.shown = Shown::Plot;
    else if (viewName == QLatin1String("tensor"))
        request.shown = Shown::Tensor;
    else if (viewName == QLatin1String("config"))
        request.shown = Shown::Config;
    else if (viewName == QLatin1String("start"))
        request.shown = Shown::Start;
    else if (viewName == QLatin1String("launch"))
        request.shown = Shown::Launch;
    else
        return fail(QStringLiteral("--view must be tree, plot, tensor, config, start or launch"), kExitUsage);
    request.view = request.shown == Shown::Plot     ? MainWindow::View::Plot
                   : request.shown == Shown::Tensor ? MainWindow::View::Tensor
                   : request.shown == Shown::Config ? MainWindow::View::Config
                                                    : MainWindow::View::Tree;
    request.op = parser.value(op);
    request.process = parser.value(process);
    request.search = parser.value(search);
    if (parser.isSet(show)) {
        request.show = parseShow(parser.value(show));
        if (!request.show) return fail(QStringLiteral("--show must be all, anomalies, nan, dumped or ticked"), kExitUsage);
    }
    request.tensorFile = parser.isSet(tensor) ? QFileInfo(parser.value(tensor)).absoluteFilePath() : QString();
    const auto page = parseTensorPage(parser.value(tensorPage));
    if (!page) return fail(QStringLiteral("--tensor-page must be heatmap, values or histogram"), kExitUsage);
    request.tensorPage = *page;
    request.plotMode = parser.value(plot);
    request.stat = parser.value(stat);
    request.log = parser.isSet(log);
    request.allOps = parser.isSet(allOps);
    request.overlay = parser.isSet(overlay);
    request.pin = parser.values(pin);
    if (parser.isSet(round)) {
        bool ok = false;
        request.round = parser.value(round).toInt(&ok);
        if (!ok || request.round < 0) return fail(QStringLiteral("--round must be a round number"), kExitUsage);
        request.roundGiven = true;
    }
    if (request.plotMode != QLatin1String("rounds") && request.plotMode != QLatin1String("ops"))
        return fail(QStringLiteral("--plot must be rounds or ops"), kExitUsage);
    if (!request.stat.isEmpty() && !parseStat(request.stat)) return fail(QStringLiteral("--stat must be max, min, mean or norm"), kExitUsage);
    return -1;
}

// Starts what the command line asks for: a dump, a launch, the demo, an attach, the launch
// form or the config editor. Returns "" or why it could not.
QString startSession(MainWindow& window, const ScreenshotRequest& request, const SessionRequest& session) {
    if (!session.config.isEmpty() && !session.launch && request.shown != Shown::Launch) {
        QString error;
        if (!window.configDocument()->load(session.config, &error)) return error;
        window.showPage(MainWindow::Page::Workspace);
        window.showView(MainWindow::View::Config);
    }
    if (session.demo) {
        QString error;
        return window.launchDemo(&error) ? QString() : error;
    }
    if (session.launch || request.shown == Shown::Launch) {
        probe::session::LaunchSpec spec = probe::session::launchSpecFromCommand(session.command);
        if (!session.output.isEmpty()) spec.outputDirectory = QFileInfo(session.output).absoluteFilePath();
        if (!session.config.isEmpty()) spec.configPath = QFileInfo(session.config).absoluteFilePath();
        if (!session.launch) {
            window.showLaunchForm(spec);
            return {};
        }
        if (spec.outputDirectory.isEmpty()) spec.outputDirectory = probe::session::freshOutputDirectory(spec.program);
        return window.launch(spec) ? QString() : QStringLiteral("cannot launch: %1").arg(window.liveSession()->stateDetail());
    }
    if (session.attachPid > 0) {
        if (const auto probe = probe::session::probeOfProcess(session.attachPid)) {
            window.attach(*probe);
            return {};
        }
        return QStringLiteral("no probe runs in process %1 or its children (File › Attach lists the running ones)")
            .arg(session.attachPid);
    }
    if (!session.dir.isEmpty()) {
        window.openDump(session.dir);
    } else if (request.shown == Shown::Config || request.shown == Shown::Tree || request.shown == Shown::Plot ||
               request.shown == Shown::Tensor) {
        if (request.shown == Shown::Config) {
            window.showPage(MainWindow::Page::Workspace);
            window.showView(MainWindow::View::Config);
        }
    }
    return {};
}

// Calls `ready(ok)` once the window has what it is to show: the dump loaded; a live session's
// dump holding `waitRounds` rounds with an op selected (or the session over and its dump read);
// at once for the start page, the launch form and the config editor.
void whenReady(MainWindow& window, const SessionRequest& session, const std::function<void(bool)>& ready) {
    auto fired = std::make_shared<bool>(false);
    auto fire = [fired, ready](bool ok) {
        if (*fired) return;
        *fired = true;
        ready(ok);
    };
    if (!session.dir.isEmpty()) {
        QObject::connect(&window, &MainWindow::sessionLoaded, &window, fire);
    } else if (session.live()) {
        auto* poll = new QTimer(&window);
        auto endedAt = std::make_shared<QElapsedTimer>();
        QObject::connect(poll, &QTimer::timeout, &window, [&window, session, poll, endedAt, fire] {
            const auto* live = window.liveSession();
            if (!live) {
                poll->stop();
                fire(false);
                return;
            }
            const auto* store = window.store();
            const bool loaded = store->isOpen() && store->initialLoadDone();
            const auto& idx = store->index();
            const size_t rounds = idx.processCount() > 0 ? idx.rounds(0).size() : 0;
            if (loaded && rounds >= static_cast<size_t>(session.waitRounds) && window.cursor()->op() != probe::analysis::kNone) {
                poll->stop();
                fire(true);
                return;
            }
            if (live->state() == probe::session::SessionState::FailedToStart) {
                poll->stop();
                fire(false);
                return;
            }
            if (!live->hasEnded()) return;
            if (!endedAt->isValid()) endedAt->start();
            // Over: show what its dump holds once it is read (the status says so, or after a
            // moment for a model killed before it could write it).
            const bool settled = loaded && (store->dumpState() != QLatin1String("running") || endedAt->elapsed() > 3000);
            if (settled || (!store->isOpen() && endedAt->elapsed() > 3000)) {
                poll->stop();
                fire(loaded);
            }
        });
        poll->start(200);
    } else {
        QTimer::singleShot(0, &window, [fire] { fire(true); });
    }
}

}  // namespace

int main(int argc, char** argv) {
    ScreenshotRequest request;
    SessionRequest session;
    QSize windowSize;
    {
        // Parsed before the GUI exists, so that --help, --version and usage errors need no display.
        QCoreApplication parsing(argc, argv);
        QCoreApplication::setOrganizationName(QStringLiteral("probe-studio"));
        QCoreApplication::setApplicationName(QStringLiteral("probe-studio"));
        QCoreApplication::setApplicationVersion(QStringLiteral(PROBE_VERSION_STRING));
        const int code = parseCommandLine(QCoreApplication::arguments(), request, session, windowSize);
        if (code >= 0) return code;
    }
    const bool haveDisplay = !qEnvironmentVariableIsEmpty("DISPLAY") || !qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY") ||
                             !qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM");
    if (!haveDisplay) {
        if (request.file.isEmpty())
            return fail(QStringLiteral("no display (DISPLAY is not set). Run it on a desktop or over `ssh -X`; "
                                       "`probe run` dumps without it, `probe summary DIR` summarises a dump in a terminal, and "
                                       "--screenshot renders without a display"),
                        kExitFailed);
        qputenv("QT_QPA_PLATFORM", "offscreen");  // a screenshot needs no screen
    }
    QApplication app(argc, argv);
    // Settings go to ~/.config/probe-studio/probe-studio.conf.
    QApplication::setOrganizationName(QStringLiteral("probe-studio"));
    QApplication::setApplicationName(QStringLiteral("probe-studio"));
    QApplication::setApplicationDisplayName(QStringLiteral("Probe Studio"));
    QApplication::setApplicationVersion(QStringLiteral(PROBE_VERSION_STRING));
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/probe-studio.png")));

    MainWindow window;
    window.resize(windowSize);
    window.show();
    if (window.size() != windowSize)
        std::fprintf(stderr, "probe-studio: the window cannot be %dx%d; it is %dx%d\n", windowSize.width(), windowSize.height(),
                     window.width(), window.height());
    const QString startProblem = startSession(window, request, session);
    if (!startProblem.isEmpty()) {
        fail(startProblem, kExitFailed);
        if (!request.file.isEmpty()) return kExitFailed;
    }
    if (request.file.isEmpty()) {
        // Interactive: arrange what was asked for once there is something to show.
        if (!session.dir.isEmpty() || session.live()) {
            whenReady(window, session, [&window, request](bool ok) {
                QString problem;
                if (ok && !arrange(window, request, &problem)) std::fprintf(stderr, "probe-studio: %s\n", qPrintable(problem));
            });
        } else if (!request.tensorFile.isEmpty()) {
            QString problem;
            showTensor(window, request, &problem);
        }
        return app.exec();
    }

    // --screenshot: wait for the dump (and the tensor, if one is shown), settle, grab, exit.
    int exitCode = kExitOk;
    bool capturing = false;
    auto capture = [&] {
        if (capturing) return;
        capturing = true;
        // Give layouts and queued replots a moment.
        QTimer::singleShot(400, &window, [&] {
            window.statisticsPlot()->refresh();  // a live dump grew meanwhile: the plot as the tree
            const QPixmap shot = window.grab();
            if (!shot.save(request.file, "PNG")) {
                exitCode = fail(QStringLiteral("cannot write %1").arg(request.file), kExitCannotWrite);
            } else {
                std::printf("probe-studio: saved %s (%dx%d)\n", qPrintable(QFileInfo(request.file).absoluteFilePath()), shot.width(),
                            shot.height());
            }
            app.exit(exitCode);
        });
    };
    QTimer::singleShot(kScreenshotTimeoutMs, &app, [&] {
        exitCode = fail(QStringLiteral("the dump did not finish loading in %1 s; saving what is shown").arg(kScreenshotTimeoutMs / 1000), kExitFailed);
        capture();
    });
    const bool hasDump = !session.dir.isEmpty() || session.live();
    whenReady(window, session, [&](bool ok) {
        QString problem;
        if (!ok) {
            exitCode = kExitFailed;
            const QString why = session.live() && window.liveSession() ? window.liveSession()->stateDetail() : QString();
            fail(window.problems().value(0, why.isEmpty() ? QStringLiteral("the dump could not be opened") : why), kExitFailed);
        } else if (hasDump && !arrange(window, request, &problem)) {
            exitCode = fail(problem, kExitFailed);
        } else if (!hasDump && request.shown == Shown::Start) {
            window.showPage(MainWindow::Page::Start);
        } else if (!hasDump && !request.tensorFile.isEmpty()) {
            showTensor(window, request, &problem);
        }
        auto* document = window.tensorPreview()->document();
        if (request.view == MainWindow::View::Tensor && exitCode == kExitOk && document->isLoading()) {
            // Wait for the tensor and its heatmap.
            QObject::connect(document, &probe::data::TensorDocument::imageReady, &window, capture);
            QObject::connect(document, &probe::data::TensorDocument::failed, &window, capture);
            QObject::connect(document, &probe::data::TensorDocument::loaded, &window, [&, document] {
                if (!document->isLoading() && !(document->tensor() && document->tensor()->hasValues())) capture();
            });
        } else {
            capture();
        }
    });
    return app.exec();
}
