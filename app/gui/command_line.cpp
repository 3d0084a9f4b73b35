// SPDX-License-Identifier: GPL-3.0-or-later
#include "command_line.h"

#include <cstdio>

#include <QCommandLineParser>
#include <QFile>
#include <QFileInfo>

#include "probe/format/file_util.h"
#include "probe/format/json_input.h"

namespace probe::studio {

using widgets::MainWindow;
using Show = ScreenshotRequest::Show;
using TensorPage = ScreenshotRequest::TensorPage;

int fail(const QString& message, int code) {
    std::fprintf(stderr, "probe-studio: %s\n", qPrintable(message));
    return code;
}

std::optional<analysis::Stat> parseStat(const QString& text) {
    const QString s = text.toLower();
    if (s == QLatin1String("max")) return analysis::Stat::Max;
    if (s == QLatin1String("min")) return analysis::Stat::Min;
    if (s == QLatin1String("mean")) return analysis::Stat::Mean;
    if (s == QLatin1String("norm")) return analysis::Stat::Norm;
    return std::nullopt;
}

namespace {

// Why `path` is not what an option takes ("a regular file", "a folder"), as the dump readers say
// it: "/tmp/p is a named pipe (FIFO), not a regular file", "/tmp/x does not exist".
QString notA(const QString& path, const char* wanted) {
    const std::string there = format::whatIsThere(path.toStdString());
    QString why = path + QLatin1Char(' ') + QString::fromStdString(there);
    if (there.rfind("is ", 0) == 0 && there.rfind("is a symbolic link", 0) != 0)
        why += QStringLiteral(", not ") + QLatin1String(wanted);
    return why;
}

// The smallest window --size may ask for: the window's own minimum.
constexpr int kMinWidth = MainWindow::kMinimumWidth;
constexpr int kMinHeight = MainWindow::kMinimumHeight;

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

}  // namespace

int refuseArgumentsQtCannotHold(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const QByteArray raw(argv[i]);
        if (QFile::encodeName(QFile::decodeName(raw)) == raw) continue;
        // Qt holds text, not bytes: such a path came back as another one, said not to exist.
        return fail(QStringLiteral("argument %1 (\"%2\") is not valid text in this locale (UTF-8 "
                                   "expected), which Qt cannot hold: a folder or argument named so "
                                   "cannot be used here. "
                                   "Rename it, or open it through a link with a plain name "
                                   "(ln -s DIR /tmp/dump; probe-studio /tmp/dump); `probe "
                                   "summary` and `probe compare` read it as it is.")
                        .arg(i)
                        .arg(QString::fromStdString(format::printableText(raw.toStdString()))),
                    kExitFailed);
    }
    return -1;
}

// Parses the command line into `request`/`session`/`windowSize`; returns an exit code when
// the program should end now (help, version, a usage error), -1 to go on.
int parseCommandLine(const QStringList& arguments, ScreenshotRequest& request,
                     SessionRequest& session, QSize& windowSize) {
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
        "  probe-studio --demo                             the bundled demo, launched\n"
        "  probe-studio --compare REF CAND                 compare run CAND against run REF"));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("DIR"), QStringLiteral("A dump folder to open."),
                                 QStringLiteral("[DIR]"));
    parser.addPositionalArgument(
        QStringLiteral("COMMAND"),
        QStringLiteral("With --launch: the program and its arguments, after --."),
        QStringLiteral("| --launch -- COMMAND [ARGS...]"));
    const QCommandLineOption open(
        QStringLiteral("open"), QStringLiteral("Open the dump folder DIR."), QStringLiteral("DIR"));
    const QCommandLineOption launch(QStringLiteral("launch"),
                                    QStringLiteral("Launch the COMMAND after -- under the probe, "
                                                   "as `probe run` does, and follow it live."));
    const QCommandLineOption output(
        QStringLiteral("output"),
        QStringLiteral(
            "With --launch: where the dump goes (DIR/atb_dump_data; default: a new folder)."),
        QStringLiteral("DIR"));
    const QCommandLineOption config(
        QStringLiteral("config"),
        QStringLiteral(
            "With --launch: the op-level config the model starts with (probe run's default "
            "without it). Otherwise: a config file of either kind to edit."),
        QStringLiteral("FILE"));
    const QCommandLineOption demo(
        QStringLiteral("demo"),
        QStringLiteral("Launch the bundled demo model (a planted overflow to find)."));
    const QCommandLineOption attach(QStringLiteral("attach"),
                                    QStringLiteral("Attach to the running probe of this process."),
                                    QStringLiteral("PID"));
    const QCommandLineOption screenshot(
        QStringLiteral("screenshot"),
        QStringLiteral(
            "Render the window once the dump is loaded (a live session: once the tree and the "
            "plots have --wait-rounds rounds), save it as a PNG and exit."),
        QStringLiteral("FILE"));
    const QCommandLineOption waitRounds(
        QStringLiteral("wait-rounds"),
        QStringLiteral("--screenshot of a live session: the rounds its dump must hold first."),
        QStringLiteral("N"), QStringLiteral("3"));
    const QCommandLineOption view(
        QStringLiteral("view"),
        QStringLiteral(
            "What to show: tree (an op's tensors), plot, tensor, config (the config editor), "
            "compare (the comparison, with --compare), start (the start page) or launch (the "
            "launch form, filled with the COMMAND after --)."),
        QStringLiteral("VIEW"), QStringLiteral("tree"));
    const QCommandLineOption op(
        QStringLiteral("op"),
        QStringLiteral("Select the op with this id (\"2_1\"; msprobe: the entry name)."),
        QStringLiteral("ID"));
    const QCommandLineOption process(
        QStringLiteral("process"),
        QStringLiteral("Show this process's ops (\"0_1234\", \"rank0\")."), QStringLiteral("KEY"));
    const QCommandLineOption round(QStringLiteral("round"),
                                   QStringLiteral("Select this round (execution count, or step)."),
                                   QStringLiteral("N"));
    const QCommandLineOption search(QStringLiteral("search"),
                                    QStringLiteral("Filter the op tree by this text."),
                                    QStringLiteral("TEXT"));
    const QCommandLineOption show(
        QStringLiteral("show"), QStringLiteral("Ops to show: all, anomalies, nan, dumped, ticked."),
        QStringLiteral("WHAT"));
    const QCommandLineOption plot(
        QStringLiteral("plot"),
        QStringLiteral("Plot a tensor across rounds, or one statistic of the ops across a round."),
        QStringLiteral("rounds|ops"), QStringLiteral("rounds"));
    const QCommandLineOption stat(
        QStringLiteral("stat"),
        QStringLiteral("Statistic to plot (ops plot), or the only one (rounds plot)."),
        QStringLiteral("max|min|mean|norm"));
    const QCommandLineOption allOps(
        QStringLiteral("all-ops"),
        QStringLiteral("Ops plot: every op, not only layer-level ones."));
    const QCommandLineOption log(QStringLiteral("log"), QStringLiteral("Logarithmic y axis."));
    const QCommandLineOption pin(
        QStringLiteral("pin"),
        QStringLiteral("Overlay this op's tensor (rounds plot) or round:N (ops plot); repeatable."),
        QStringLiteral("ID|round:N"));
    const QCommandLineOption tensor(
        QStringLiteral("tensor"),
        QStringLiteral(
            "Open this .bin file in the tensor preview (--view tensor), with or without DIR."),
        QStringLiteral("FILE"));
    const QCommandLineOption tensorPage(
        QStringLiteral("tensor-page"),
        QStringLiteral("Tensor preview page: heatmap, values or histogram."),
        QStringLiteral("PAGE"), QStringLiteral("heatmap"));
    const QCommandLineOption overlay(QStringLiteral("overlay"),
                                     QStringLiteral("Tensor preview: NaN/Inf/negative overlay."));
    const QCommandLineOption compare(
        QStringLiteral("compare"),
        QStringLiteral(
            "Compare the dump (DIR, or the run launched or attached to) against the reference dump "
            "REF: the op tree coloured by verdict, the first divergence a key (F8) away. A folder "
            "may "
            "name one rank (REF/step0/rank0)."),
        QStringLiteral("REF"));
    const QCommandLineOption jump(
        QStringLiteral("jump"),
        QStringLiteral("With --compare: select the first divergence once the runs are compared."));
    const QCommandLineOption size(QStringLiteral("size"), QStringLiteral("Window size."),
                                  QStringLiteral("WxH"), QStringLiteral("1500x900"));
    for (const auto* o : {&open,       &launch,  &output, &config,  &demo,  &attach, &screenshot,
                          &waitRounds, &view,    &op,     &process, &round, &search, &show,
                          &plot,       &stat,    &allOps, &log,     &pin,   &tensor, &tensorPage,
                          &overlay,    &compare, &jump,   &size})
        parser.addOption(*o);
    if (!parser.parse(arguments)) return fail(parser.errorText(), kExitUsage);
    if (parser.isSet(QStringLiteral("help"))) parser.showHelp(kExitOk);
    if (parser.isSet(QStringLiteral("version"))) parser.showVersion();

    QString viewName = parser.value(view);
    if (parser.isSet(tensor)) {
        // --tensor FILE is a view of its own: the tensor preview.
        if (parser.isSet(view) && viewName != QLatin1String("tensor"))
            return fail(
                QStringLiteral("--tensor opens the tensor view; it does not go with --view %1")
                    .arg(viewName),
                kExitUsage);
        if (!QFileInfo(parser.value(tensor)).isFile())
            return fail(QStringLiteral("--tensor: ") + notA(parser.value(tensor), "a regular file"),
                        kExitUsage);
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
            return fail(QStringLiteral("--launch needs the command to run after --, e.g. --launch "
                                       "-- /usr/bin/python3 train.py"),
                        kExitUsage);
        if (positional.size() != session.command.size())
            return fail(QStringLiteral("give either a dump folder or a command after --, not both"),
                        kExitUsage);
    } else {
        if (positional.size() > 1)
            return fail(
                QStringLiteral(
                    "one dump folder at a time (got %1); to run a command use --launch -- COMMAND")
                    .arg(positional.join(QLatin1Char(' '))),
                kExitUsage);
        if (!positional.isEmpty()) {
            if (!session.dir.isEmpty())
                return fail(
                    QStringLiteral("give the folder either as DIR or with --open, not both"),
                    kExitUsage);
            session.dir = positional.front();
        }
    }
    if (parser.isSet(attach)) {
        bool ok = false;
        session.attachPid = parser.value(attach).toLongLong(&ok);
        if (!ok || session.attachPid <= 0)
            return fail(QStringLiteral("--attach needs a process id"), kExitUsage);
    }
    session.reference = parser.value(compare);
    request.jump = parser.isSet(jump);
    if (request.jump && session.reference.isEmpty())
        return fail(QStringLiteral("--jump goes with --compare REF"), kExitUsage);
    if (!session.reference.isEmpty() && !QFileInfo(session.reference).isDir())
        return fail(QStringLiteral("--compare: ") + notA(session.reference, "a folder"),
                    kExitUsage);
    if (!session.reference.isEmpty() && session.dir.isEmpty() && !session.launch && !session.demo &&
        !parser.isSet(attach))
        return fail(QStringLiteral("--compare REF needs the dump to compare with it: --compare REF "
                                   "CAND (or --launch, --attach)"),
                    kExitUsage);
    const int sources = int(!session.dir.isEmpty()) + int(session.launch) + int(session.demo) +
                        int(session.attachPid > 0);
    if (sources > 1)
        return fail(QStringLiteral("give one of DIR (--open), --launch, --demo and --attach"),
                    kExitUsage);
    if (!session.output.isEmpty() && !session.launch && viewName != QLatin1String("launch"))
        return fail(
            session.demo
                ? QStringLiteral(
                      "--output goes with --launch (--demo writes to a fresh folder of its own)")
                : QStringLiteral("--output goes with --launch"),
            kExitUsage);
    {
        bool ok = false;
        session.waitRounds = parser.value(waitRounds).toInt(&ok);
        if (!ok || session.waitRounds < 1)
            return fail(QStringLiteral("--wait-rounds must be a number of rounds, 1 or more"),
                        kExitUsage);
    }

    const QStringList sizeParts = parser.value(size).split(QLatin1Char('x'));
    bool widthOk = false, heightOk = false;
    const int width = sizeParts.value(0).toInt(&widthOk),
              height = sizeParts.value(1).toInt(&heightOk);
    if (sizeParts.size() != 2 || !widthOk || !heightOk)
        return fail(QStringLiteral("--size must be WIDTHxHEIGHT, e.g. 1500x900"), kExitUsage);
    if (width < kMinWidth || height < kMinHeight)
        return fail(QStringLiteral("--size must be at least %1x%2").arg(kMinWidth).arg(kMinHeight),
                    kExitUsage);

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
    else if (viewName == QLatin1String("compare"))
        request.shown = Shown::Compare;
    else if (viewName == QLatin1String("start"))
        request.shown = Shown::Start;
    else if (viewName == QLatin1String("launch"))
        request.shown = Shown::Launch;
    else
        return fail(
            QStringLiteral("--view must be tree, plot, tensor, config, compare, start or launch"),
            kExitUsage);
    request.view = request.shown == Shown::Plot      ? MainWindow::View::Plot
                   : request.shown == Shown::Tensor  ? MainWindow::View::Tensor
                   : request.shown == Shown::Config  ? MainWindow::View::Config
                   : request.shown == Shown::Compare ? MainWindow::View::Compare
                                                     : MainWindow::View::Tree;
    request.op = parser.value(op);
    request.process = parser.value(process);
    request.search = parser.value(search);
    if (parser.isSet(show)) {
        request.show = parseShow(parser.value(show));
        if (!request.show)
            return fail(QStringLiteral("--show must be all, anomalies, nan, dumped or ticked"),
                        kExitUsage);
    }
    request.tensorFile =
        parser.isSet(tensor) ? QFileInfo(parser.value(tensor)).absoluteFilePath() : QString();
    const auto page = parseTensorPage(parser.value(tensorPage));
    if (!page)
        return fail(QStringLiteral("--tensor-page must be heatmap, values or histogram"),
                    kExitUsage);
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
        if (!ok || request.round < 0)
            return fail(QStringLiteral("--round must be a round number"), kExitUsage);
        request.roundGiven = true;
    }
    if (request.plotMode != QLatin1String("rounds") && request.plotMode != QLatin1String("ops"))
        return fail(QStringLiteral("--plot must be rounds or ops"), kExitUsage);
    if (!request.stat.isEmpty() && !parseStat(request.stat))
        return fail(QStringLiteral("--stat must be max, min, mean or norm"), kExitUsage);
    return -1;
}

}  // namespace probe::studio
