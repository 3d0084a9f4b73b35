// The window arranged as the command line asks (--view, --op, --round, --plot...) once its
// session has something to show, and for --screenshot the window rendered to a PNG and the
// program ended with an exit code that says whether everything asked for was there.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <functional>

#include <QObject>

#include "command_line.h"

namespace probe::context {
class AppContext;
}

namespace probe::studio {

// The tensor view with --tensor FILE, or else the selected op's tensor of the selected round.
bool showTensor(widgets::MainWindow& window, const ScreenshotRequest& request, QString* problem);

// Puts the window in the state the request asks for; false (with a message) when something
// asked for does not exist in the dump.
bool arrange(widgets::MainWindow& window, const ScreenshotRequest& request, QString* problem);

// Calls `ready(ok)` once the context has what is to be shown: the dump loaded; a live session's
// dump holding `waitRounds` rounds with an op selected (or the session over and its dump read);
// at once for the start page, the launch form and the config editor.
void whenReady(context::AppContext& context, const SessionRequest& session,
               const std::function<void(bool)>& ready);

// --screenshot: waits for the session (at most a few minutes), arranges the window, waits for
// a previewed tensor, grabs the window, saves it and quits the application with the exit code.
class ScreenshotDriver : public QObject {
    Q_OBJECT
public:
    ScreenshotDriver(widgets::MainWindow& window, ScreenshotRequest request,
                     SessionRequest session);
    // Starts waiting; the application quits once the file is written (or could not be).
    void start();
    // The session could not start (said already): the window as it was left, the reason in its
    // status bar, and the application quits with a failure's exit code.
    void captureFailure();

private:
    void onReady(bool ok);
    void capture();

    widgets::MainWindow& window_;
    context::AppContext& context_;
    ScreenshotRequest request_;
    SessionRequest session_;
    int exitCode_ = kExitOk;
    bool capturing_ = false;
};

}  // namespace probe::studio
