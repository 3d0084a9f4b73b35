// The start page: launch the bundled demo in one click, launch a model, attach to a running
// probe, open a dump folder or edit a config; and the recent sessions to take up again.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QList>
#include <QWidget>

#include "session/recent_sessions.h"

class QCommandLinkButton;
class QLabel;
class QListWidget;
class QPushButton;

namespace probe::widgets {

class StartPage : public QWidget {
    Q_OBJECT
public:
    explicit StartPage(session::RecentSessions* recent, QWidget* parent = nullptr);

    // Whether the demo is installed; when not, its button says why.
    void setDemoAvailable(bool available, const QString& reason = {});
    // Lists the recent sessions again.
    void refresh();

    QListWidget* recentList() const { return recentList_; }
    QCommandLinkButton* demoButton() const { return demo_; }
    QCommandLinkButton* launchButton() const { return launch_; }
    QCommandLinkButton* attachButton() const { return attach_; }
    QCommandLinkButton* openButton() const { return open_; }
    QCommandLinkButton* configButton() const { return config_; }
    // Takes up the recent session at `row` (what a double click does).
    void activateRecent(int row);

signals:
    void launchDemoRequested();
    void launchRequested();
    void attachRequested();
    void openRequested();
    void editConfigRequested();
    void recentActivated(const probe::session::RecentSession& session);

private:
    session::RecentSessions* recent_;
    QList<session::RecentSession> shown_;
    QCommandLinkButton* demo_;
    QCommandLinkButton* launch_;
    QCommandLinkButton* attach_;
    QCommandLinkButton* open_;
    QCommandLinkButton* config_;
    QListWidget* recentList_;
    QLabel* recentEmpty_;
    QPushButton* clear_;
};

}  // namespace probe::widgets
