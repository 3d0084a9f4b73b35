// SPDX-License-Identifier: GPL-3.0-or-later
#include "session_panel.h"

#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QScopedValueRollback>
#include <QScrollBar>
#include <QTextCursor>
#include <QTextOption>
#include <QVBoxLayout>

#include "page_style.h"
#include "scroll_follow.h"
#include "session/live_session.h"

namespace probe::widgets {

using session::SessionState;

namespace {

// Lines kept in the log: a chatty model must not grow the window's memory without end.
constexpr int kLogLines = 20000;

const QColor kErrorColor(170, 30, 30);
const QColor kWarningColor(170, 100, 0);

// The colour of a line of standard error, by what it says (no colour: the text's).
QColor colourOfErrorLine(const QString& line) {
    // "[probe] error: ...", "probe run: error", "ValueError: ...", a traceback, "fatal".
    static const QRegularExpression error(
        QStringLiteral(R"(\w*(error|exception)\b|^\s*traceback\b|\bfatal\b)"),
        QRegularExpression::CaseInsensitiveOption);
    // "[probe] warning: ...", "UserWarning: ...", the summary's "  problem: ...".
    static const QRegularExpression warning(QStringLiteral(R"(\w*warning\b|^\s*problem:)"),
                                            QRegularExpression::CaseInsensitiveOption);
    if (error.match(line).hasMatch()) return kErrorColor;
    if (warning.match(line).hasMatch()) return kWarningColor;
    return {};
}

}  // namespace

SessionPanel::SessionPanel(QWidget* parent) : QWidget(parent) {
    badge_ = new QLabel(this);
    badge_->setObjectName(QStringLiteral("sessionState"));
    badge_->setMargin(3);
    setHeadingFont(badge_, 1.0);
    detail_ = new QLabel(this);
    detail_->setSizePolicy(QSizePolicy::Ignored,
                           QSizePolicy::Preferred);  // long text must not widen the window
    detail_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    command_ = new QLabel(this);
    command_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    command_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    command_->setStyleSheet(QStringLiteral("color: palette(mid)"));
    stop_ = new QPushButton(tr("Stop"), this);
    connect(stop_, &QPushButton::clicked, this, [this] {
        if (session_) session_->stop();
    });

    log_ = new QPlainTextEdit(this);
    log_->setReadOnly(true);
    log_->setMaximumBlockCount(kLogLines);
    // Long lines wrap at the width as in a terminal (the command line was read by scrolling
    // sideways).
    log_->setLineWrapMode(QPlainTextEdit::WidgetWidth);
    log_->setWordWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere);
    log_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    log_->setPlaceholderText(tr("The model's output appears here."));
    QScrollBar* bar = log_->verticalScrollBar();
    // The user scrolls (wheel, keys, the bar): the log follows again once they are back at the
    // end.
    connect(bar, &QScrollBar::valueChanged, this, [this, bar](int value) {
        if (!appending_) followLog_ = value >= bar->maximum();
    });
    whenUserScrolls(bar, this, [this](bool atEnd) { followLog_ = atEnd; });
    // The end moved (lines came, the panel was resized): a log that follows stays at it.
    connect(bar, &QScrollBar::rangeChanged, this, [this, bar](int, int maximum) {
        if (followLog_) {
            const QScopedValueRollback<bool> ours(appending_, true);
            bar->setValue(maximum);
        }
    });

    auto* head = new QHBoxLayout;
    head->addWidget(badge_);
    head->addWidget(detail_, 2);
    head->addWidget(command_, 3);
    head->addWidget(stop_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(head);
    layout->addWidget(log_, 1);
    updateState();
}

void SessionPanel::setSession(session::LiveSession* session) {
    if (!session && !session_) {
        updateState();  // a dump after a dump: the last run's log, if any, stays
        return;
    }
    if (session_) disconnect(session_, nullptr, this, nullptr);
    if (lastRun_) disconnect(lastRun_, nullptr, this, nullptr);
    lastRun_ = nullptr;
    if (!session) {
        // A dump opened over a run: the run's log and how it ends stay in view (they went at
        // once, its SIGTERM left only in probe_status.json).
        lastRun_ = session_;
        session_ = nullptr;
        appendNote((lastRun_->hasEnded()
                        ? tr("[%1] The window shows another dump now. This run's log stays here "
                             "until another run starts.\n")
                        : tr("[%1] The window shows another dump now. This run's log stays here, "
                             "with how it ends, until another run starts.\n"))
                       .arg(describeState(*lastRun_)));
        followSession(lastRun_);
        updateState();
        return;
    }
    session_ = session;
    lastRunState_.clear();
    log_->clear();
    errorLine_.clear();
    atLineStart_ = true;
    followLog_ = true;
    if (session_) {
        followSession(session_);
        connect(session_, &session::LiveSession::helloReceived, this, &SessionPanel::updateState);
        // An applied config is said by the probe itself ("[probe] config applied (client): ..."),
        // in its standard error or its messages: not said twice. A refusal is set apart in red.
        connect(session_, &session::LiveSession::configRejected, this,
                [this](const QString& reason, const QString&, qint64) {
                    flushErrorLine();
                    appendLine(
                        tr("[config] the probe refused a config; the previous one stays:\n%1\n")
                            .arg(reason),
                        kErrorColor);
                });
        connect(session_, &QObject::destroyed, this, &SessionPanel::updateState);
        if (!session_->stateDetail().isEmpty())
            appendNote(
                QStringLiteral("[%1] %2\n").arg(describeState(*session_), session_->stateDetail()));
    }
    updateState();
}

void SessionPanel::followSession(session::LiveSession* session) {
    connect(session, &session::LiveSession::stateChanged, this,
            [this, session](SessionState, const QString& detail) {
                if (session->hasEnded()) flushErrorLine();
                if (!detail.isEmpty())
                    appendNote(QStringLiteral("[%1] %2\n").arg(describeState(*session), detail));
                updateState();
            });
    connect(session, &session::LiveSession::output, this, &SessionPanel::appendLog);
}

QColor SessionPanel::stateColor(SessionState state) {
    switch (state) {
        case SessionState::Dumping:
            return QColor(30, 140, 60);
        case SessionState::Finished:
            return QColor(40, 100, 160);
        case SessionState::Starting:
            return QColor(110, 110, 160);
        case SessionState::Sleeping:
        case SessionState::Detached:
        case SessionState::NotStarted:
            return QColor(120, 120, 120);
        case SessionState::Stopped:
            return QColor(190, 120, 0);
        case SessionState::StoppedByUser:
            return QColor(90, 100, 130);
        case SessionState::Failed:
        case SessionState::FailedToStart:
            return QColor(200, 30, 30);
    }
    return QColor(120, 120, 120);
}

QString SessionPanel::describeState(const session::LiveSession& s) {
    const QString name = session::sessionStateName(s.state());
    // How it ended is half the story: the exit code always goes with it.
    if (s.state() == SessionState::Failed || s.state() == SessionState::Finished)
        return tr("%1, exit code %2").arg(name).arg(s.exitCode());
    return name;
}

QString SessionPanel::stateText() const {
    return badge_->text();
}

void SessionPanel::updateState() {
    if (!session_) {
        if (lastRun_) {  // (what it says is kept: the run goes once it has ended)
            lastRunState_ = tr("last run: %1").arg(describeState(*lastRun_));
            lastRunColor_ = stateColor(lastRun_->state());
            lastRunDetail_ = lastRun_->stateDetail();
            const qint64 pid = lastRun_->probePid();
            lastRunCommand_ =
                pid > 0 ? tr("pid %1: %2").arg(pid).arg(lastRun_->command()) : lastRun_->command();
        }
        const bool last = !lastRunState_.isEmpty();
        badge_->setText(last ? lastRunState_ : tr("no session"));
        badge_->setStyleSheet(QStringLiteral("color: white; background: %1; border-radius: 3px")
                                  .arg(last ? lastRunColor_.name() : QStringLiteral("#888")));
        detail_->setText(last ? lastRunDetail_ : QString());
        command_->setText(last ? lastRunCommand_ : QString());
        stop_->setText(tr("Stop"));
        stop_->setEnabled(false);
        return;
    }
    badge_->setText(describeState(*session_));
    badge_->setStyleSheet(QStringLiteral("color: white; background: %1; border-radius: 3px")
                              .arg(stateColor(session_->state()).name()));
    detail_->setText(session_->stateDetail());
    detail_->setToolTip(session_->stateDetail());
    const qint64 pid = session_->probePid();
    const QString what = session_->command();
    command_->setText(pid > 0 ? tr("pid %1: %2").arg(pid).arg(what) : what);
    command_->setToolTip(command_->text());
    const bool launched = session_->origin() == session::LiveSession::Origin::Launched;
    stop_->setText(launched ? tr("Stop the model") : tr("Detach"));
    stop_->setToolTip(
        launched ? tr("Ends the program (SIGTERM, then SIGKILL after 5 s); the dump is kept")
                 : tr("Lets the probe go; the program goes on running"));
    stop_->setEnabled(!session_->hasEnded());
}

void SessionPanel::appendLog(const QString& text, bool isError) {
    if (!isError) {
        append(text, QColor());
        return;
    }
    // Whole lines only: a line may come in pieces, and its colour depends on all of it.
    errorLine_ += text;
    const qsizetype end = errorLine_.lastIndexOf(QLatin1Char('\n'));
    if (end < 0) return;
    const QStringList lines = errorLine_.left(end).split(QLatin1Char('\n'));
    errorLine_.remove(0, end + 1);
    for (const QString& line : lines) appendLine(line + QLatin1Char('\n'), colourOfErrorLine(line));
}

void SessionPanel::flushErrorLine() {
    if (errorLine_.isEmpty()) return;
    const QString line = errorLine_;
    errorLine_.clear();
    appendLine(line + QLatin1Char('\n'), colourOfErrorLine(line));
}

void SessionPanel::appendNote(const QString& text) {
    flushErrorLine();
    appendLine(text, QColor(110, 110, 130));
}

void SessionPanel::appendLine(const QString& text, const QColor& color) {
    if (!atLineStart_) append(QStringLiteral("\n"), QColor());
    append(text, color);
}

void SessionPanel::append(const QString& text, const QColor& color) {
    QScrollBar* bar = log_->verticalScrollBar();
    appending_ = true;
    const int reading = bar->value();  // where a user who scrolled up reads
    QTextCursor cursor(log_->document());
    cursor.movePosition(QTextCursor::End);
    QTextCharFormat format;
    if (color.isValid()) format.setForeground(color);
    cursor.insertText(text, format);
    if (!text.isEmpty()) atLineStart_ = text.endsWith(QLatin1Char('\n'));
    // (QPlainTextEdit moves to the end by itself on some appends: put back where it was read.)
    bar->setValue(followLog_ ? bar->maximum() : reading);
    appending_ = false;
}

}  // namespace probe::widgets
