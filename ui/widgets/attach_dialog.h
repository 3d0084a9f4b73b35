// Attach to a running probe: the probes of this user that listen on their control sockets
// (pid, command), refreshed while the dialog is open.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QDialog>
#include <QList>

#include "session/live_probes.h"

class QLabel;
class QPushButton;
class QTimer;
class QTreeWidget;
class QTreeWidgetItem;

namespace probe::widgets {

class AttachDialog : public QDialog {
    Q_OBJECT
public:
    explicit AttachDialog(QWidget* parent = nullptr);

    // Lists the live probes again (keeping the selection).
    void refresh();
    QList<session::LiveProbeInfo> probes() const { return probes_; }
    // The probe picked (pid 0 when none).
    session::LiveProbeInfo selectedProbe() const;
    bool selectPid(qint64 pid);
    QTreeWidget* list() const { return list_; }

private:
    void showProbe(QTreeWidgetItem* item, const session::LiveProbeInfo& probe);

    QTreeWidget* list_;
    QLabel* hint_;
    QPushButton* attach_;
    QTimer* timer_;
    QList<session::LiveProbeInfo> probes_;
};

}  // namespace probe::widgets
