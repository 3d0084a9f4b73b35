// probe-studio: the desktop application. Wires the command line to the application context
// (which opens the dump, launches a model or attaches to a probe) and the window over it; for
// --screenshot the screenshot driver renders the window once there is something to show.
// Everything else lives in ui/ (sessions, data layer, context, widgets).
// SPDX-License-Identifier: GPL-3.0-or-later
#include <cstdio>

#include <QApplication>
#include <QFileInfo>
#include <QIcon>
#include <QMessageBox>

#include "command_line.h"
#include "config_document.h"
#include "context/app_context.h"
#include "main_window.h"
#include "probe_config.h"
#include "screenshot_driver.h"
#include "session/launch_session.h"
#include "session/live_probes.h"

namespace {

using namespace probe::studio;

QtMessageHandler qtMessageHandler = nullptr;

// Qt warns on every start where XDG_RUNTIME_DIR is unset (a terminal, ssh, a container). The
// application keeps nothing there; where its absence matters (probes of a desktop session
// cannot be found) the attach dialog says so.
void dropRuntimeDirectoryWarning(QtMsgType type, const QMessageLogContext& context,
                                 const QString& message) {
    if (type == QtWarningMsg &&
        message.startsWith(QLatin1String("QStandardPaths: XDG_RUNTIME_DIR not set")))
        return;
    if (qtMessageHandler)
        qtMessageHandler(type, context, message);
    else
        std::fprintf(stderr, "%s\n", qPrintable(message));
}
using probe::context::AppContext;
using probe::widgets::MainWindow;

// --compare REF with a live session: the run is compared against REF as its rounds arrive.
QString compareLive(AppContext& context, const SessionRequest& session) {
    if (session.reference.isEmpty()) return {};
    QString error;
    return context.compare(session.reference, {}, &error) ? QString() : error;
}

// Starts what the command line asks for: a dump, a launch, the demo, an attach, the launch
// form or the config editor. Returns "" or why it could not.
QString startSession(AppContext& context, MainWindow& window, const ScreenshotRequest& request,
                     const SessionRequest& session) {
    if (!session.config.isEmpty() && !session.launch && request.shown != Shown::Launch) {
        QString error;
        if (!context.configDocument()->load(session.config, &error)) return error;
        window.showPage(MainWindow::Page::Workspace);
        window.showView(MainWindow::View::Config);
    }
    if (session.demo) {
        QString error;
        if (!context.launchDemo(&error)) return error;
        return compareLive(context, session);
    }
    if (session.launch || request.shown == Shown::Launch) {
        probe::session::LaunchSpec spec = probe::session::launchSpecFromCommand(session.command);
        if (!session.output.isEmpty())
            spec.outputDirectory = QFileInfo(session.output).absoluteFilePath();
        if (!session.config.isEmpty())
            spec.configPath = QFileInfo(session.config).absoluteFilePath();
        if (!session.launch) {
            window.showLaunchForm(spec);
            return {};
        }
        if (spec.outputDirectory.isEmpty())
            spec.outputDirectory =
                probe::session::freshOutputDirectory(QStringList{spec.program} + spec.arguments);
        if (!context.launch(spec))
            return QStringLiteral("cannot launch: %1").arg(context.liveSession()->stateDetail());
        return compareLive(context, session);
    }
    if (session.attachPid > 0) {
        if (const auto probe = probe::session::probeOfProcess(session.attachPid)) {
            context.attach(*probe);
            return compareLive(context, session);
        }
        return QStringLiteral(
                   "no probe runs in process %1 or its children (File › Attach lists the running "
                   "ones)")
            .arg(session.attachPid);
    }
    if (!session.dir.isEmpty() && !session.reference.isEmpty()) {
        QString error;
        if (!context.compare(session.reference, session.dir, &error)) return error;
    } else if (!session.dir.isEmpty()) {
        QString error;
        if (!context.openDump(session.dir, &error)) return error;
    } else if (request.shown == Shown::Config) {
        window.showPage(MainWindow::Page::Workspace);
        window.showView(MainWindow::View::Config);
    }
    return {};
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
        int code = refuseArgumentsQtCannotHold(argc, argv);
        if (code >= 0) return code;
        code = parseCommandLine(QCoreApplication::arguments(), request, session, windowSize);
        if (code >= 0) return code;
    }
    const bool haveDisplay = !qEnvironmentVariableIsEmpty("DISPLAY") ||
                             !qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY") ||
                             !qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM");
    if (!haveDisplay) {
        if (request.file.isEmpty())
            return fail(
                QStringLiteral(
                    "no display (DISPLAY is not set). Run it on a desktop or over `ssh -X`; "
                    "`probe run` dumps without it, `probe summary DIR` summarises a dump in a "
                    "terminal, and "
                    "--screenshot renders without a display"),
                kExitFailed);
        qputenv("QT_QPA_PLATFORM", "offscreen");  // a screenshot needs no screen
    }
    qtMessageHandler = qInstallMessageHandler(dropRuntimeDirectoryWarning);
    QApplication app(argc, argv);
    // Settings go to ~/.config/probe-studio/probe-studio.conf.
    QApplication::setOrganizationName(QStringLiteral("probe-studio"));
    QApplication::setApplicationName(QStringLiteral("probe-studio"));
    QApplication::setApplicationDisplayName(QStringLiteral("Probe Studio"));
    QApplication::setApplicationVersion(QStringLiteral(PROBE_VERSION_STRING));
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/probe-studio.png")));

    AppContext context;
    MainWindow window(&context);
    window.resize(windowSize);
    window.show();
    if (window.size() != windowSize)
        std::fprintf(stderr, "probe-studio: the window cannot be %dx%d; it is %dx%d\n",
                     windowSize.width(), windowSize.height(), window.width(), window.height());
    const QString startProblem = startSession(context, window, request, session);
    if (!startProblem.isEmpty()) {
        fail(startProblem, kExitFailed);
        if (!request.file.isEmpty()) {
            (new ScreenshotDriver(window, request, session))->captureFailure();
            return app.exec();
        }
        // Said where it is seen too: a line on the terminal and one in the status bar were
        // missed, the start page reading as if nothing had been asked.
        auto* box = new QMessageBox(QMessageBox::Warning, QObject::tr("Cannot open"), startProblem,
                                    QMessageBox::Ok, &window);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
    }
    if (!request.file.isEmpty()) {
        auto* driver = new ScreenshotDriver(window, request, session);
        driver->start();
        return app.exec();
    }
    // Interactive: arrange what was asked for once there is something to show.
    if (session.hasDump()) {
        whenReady(context, session, [&window, request](bool ok) {
            QString problem;
            if (ok && !arrange(window, request, &problem))
                std::fprintf(stderr, "probe-studio: %s\n", qPrintable(problem));
        });
    } else if (!request.tensorFile.isEmpty()) {
        QString problem;
        showTensor(window, request, &problem);
    }
    return app.exec();
}
