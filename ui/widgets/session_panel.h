// The live session's panel: its state (starting, sleeping, dumping, finished, crashed with the
// exit code...), what runs, a Stop (launched) or Detach (attached) button, and the log: the
// model's standard output and error, or the attached probe's messages.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QPointer>
#include <QWidget>

#include "session/live_session.h"

class QLabel;
class QPlainTextEdit;
class QPushButton;

namespace probe::widgets {

class SessionPanel : public QWidget {
    Q_OBJECT
public:
    explicit SessionPanel(QWidget* parent = nullptr);

    // The session shown (nullptr: none). The log starts afresh, but for a run replaced by
    // none (a dump opened over it): its log stays, followed to its end, until another run.
    void setSession(session::LiveSession* session);
    session::LiveSession* session() const { return session_; }

    QPlainTextEdit* log() const { return log_; }
    QPushButton* stopButton() const { return stop_; }
    // "dumping", "crashed (exit code 1)", "last run: stopped (SIGTERM)": what the badge says.
    QString stateText() const;
    // The badge's colour for a state, also used by the window's status bar.
    static QColor stateColor(session::SessionState state);
    // The state word with its exit code when the model ended.
    static QString describeState(const session::LiveSession& session);

    // The model's output. Standard error goes line by line, each coloured by what it says:
    // errors (a traceback, "error:") red, warnings orange, the rest (the probe's summary, "no
    // NaN or Inf" among it) in the text colour.
    void appendLog(const QString& text, bool isError);
    // What the application says about the session (states, configs), set apart in grey.
    void appendNote(const QString& text);

private:
    void updateState();
    void append(const QString& text, const QColor& color);
    void appendLine(const QString& text, const QColor& color);  // on a line of its own
    // Writes out a last line of standard error that had no newline yet.
    void flushErrorLine();

    void followSession(session::LiveSession* session);

    QPointer<session::LiveSession> session_;
    // The run a dump was opened over, while it ends, and what was last said of it.
    QPointer<session::LiveSession> lastRun_;
    QString lastRunState_, lastRunDetail_, lastRunCommand_;
    QColor lastRunColor_;
    QLabel* badge_;
    QLabel* detail_;
    QLabel* command_;
    QPushButton* stop_;
    QPlainTextEdit* log_;
    QString errorLine_;  // standard error since its last newline
    // Whether the log ends with a newline: a whole line of the application's, or of standard
    // error, starts a line of its own after part of one of standard output ("prompt:[sleeping]
    // the probe stopped").
    bool atLineStart_ = true;
    // The log shows its newest line, unless the user scrolled up: decided by what the user does
    // with the scroll bar, not by where it is (a resize of the window moved its end away, and
    // the log stopped following the output).
    bool followLog_ = true;
    bool appending_ = false;
};

}  // namespace probe::widgets
