// SPDX-License-Identifier: GPL-3.0-or-later
#include "attach_dialog.h"

#include <QDialogButtonBox>
#include <QHash>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSet>
#include <QTimer>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "page_style.h"

namespace probe::widgets {

AttachDialog::AttachDialog(QWidget* parent) : QDialog(parent) {
    setWindowTitle(tr("Attach to a running probe"));
    auto* intro = new QLabel(
        tr("Programs running with the probe (started by <code>probe run</code>, the load script, "
           "or "
           "another Probe Studio). Attaching shows their dump live, their state, and lets you push "
           "configs; the program is not disturbed."),
        this);
    intro->setWordWrap(true);
    list_ = new QTreeWidget(this);
    list_->setColumnCount(2);
    list_->setHeaderLabels({tr("PID"), tr("Command")});
    list_->setRootIsDecorated(false);
    list_->setAlternatingRowColors(true);
    list_->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    list_->header()->setStretchLastSection(true);
    hint_ = new QLabel(this);
    hint_->setWordWrap(true);
    auto* buttons = new QDialogButtonBox(this);
    attach_ = buttons->addButton(tr("Attach"), QDialogButtonBox::AcceptRole);
    auto* refreshButton = buttons->addButton(tr("Refresh"), QDialogButtonBox::ActionRole);
    buttons->addButton(QDialogButtonBox::Cancel);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(refreshButton, &QPushButton::clicked, this, &AttachDialog::refresh);
    connect(list_, &QTreeWidget::itemDoubleClicked, this, &QDialog::accept);
    connect(list_, &QTreeWidget::currentItemChanged, this,
            [this] { attach_->setEnabled(selectedProbe().pid > 0); });

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(intro);
    layout->addWidget(list_, 1);
    layout->addWidget(hint_);
    layout->addWidget(buttons);
    resize(760, 360);

    // Probes come and go: the list follows while the dialog is open.
    timer_ = new QTimer(this);
    timer_->setInterval(1000);
    connect(timer_, &QTimer::timeout, this, &AttachDialog::refresh);
    timer_->start();
    refresh();
}

void AttachDialog::refresh() {
    probes_ = session::liveProbes();
    // The rows change in place, those of probes still running kept as they are: rebuilt every
    // second, the list lost the row under the mouse, its tooltip, and a double click begun on it.
    QHash<qint64, const session::LiveProbeInfo*> running;
    for (const auto& probe : probes_) running.insert(probe.pid, &probe);
    for (int i = list_->topLevelItemCount() - 1; i >= 0; --i) {
        const qint64 pid = list_->topLevelItem(i)->data(0, Qt::UserRole).toLongLong();
        if (!running.contains(pid)) delete list_->takeTopLevelItem(i);
    }
    QSet<qint64> listed;
    for (int i = 0; i < list_->topLevelItemCount(); ++i) {
        QTreeWidgetItem* item = list_->topLevelItem(i);
        const session::LiveProbeInfo& probe =
            *running.value(item->data(0, Qt::UserRole).toLongLong());
        showProbe(item, probe);
        listed.insert(probe.pid);
    }
    for (const auto& probe : probes_) {
        if (listed.contains(probe.pid)) continue;
        auto* item = new QTreeWidgetItem(list_);
        item->setData(0, Qt::UserRole, probe.pid);
        showProbe(item, probe);
    }
    if (!list_->currentItem() && list_->topLevelItemCount() > 0)
        list_->setCurrentItem(list_->topLevelItem(0));
    QString hint =
        probes_.isEmpty()
            ? tr("No probe is running now. Start a program with <code>probe run</code> or Launch; "
                 "probes started with PROBE_CONTROL=0, or by other users, are not listed.")
            : tr("%1 running.").arg(countOf(probes_.size(), tr("probe"), tr("probes")));
    // Here it matters (no folder named): say what cannot be seen from here.
    if (qEnvironmentVariableIsEmpty("PROBE_CONTROL_DIR") &&
        qEnvironmentVariableIsEmpty("XDG_RUNTIME_DIR"))
        hint +=
            tr("<br>XDG_RUNTIME_DIR is not set here, so probes started in a desktop session (their "
               "sockets are in "
               "/run/user/&lt;uid&gt;/probe-studio) cannot be seen: start Probe Studio from that "
               "session, or give both the "
               "same PROBE_CONTROL_DIR.");
    hint_->setText(hint);
    attach_->setEnabled(selectedProbe().pid > 0);
}

void AttachDialog::showProbe(QTreeWidgetItem* item, const session::LiveProbeInfo& probe) {
    const QString pid = QString::number(probe.pid);
    const QString tip = tr("%1\nsocket: %2").arg(probe.command, probe.socketPath);
    // Set only when changed: each change repaints the row.
    if (item->text(0) != pid) item->setText(0, pid);
    if (item->text(1) != probe.command) item->setText(1, probe.command);
    if (item->toolTip(1) != tip) item->setToolTip(1, tip);
}

bool AttachDialog::selectPid(qint64 pid) {
    for (int i = 0; i < list_->topLevelItemCount(); ++i) {
        if (list_->topLevelItem(i)->data(0, Qt::UserRole).toLongLong() == pid) {
            list_->setCurrentItem(list_->topLevelItem(i));
            return true;
        }
    }
    return false;
}

session::LiveProbeInfo AttachDialog::selectedProbe() const {
    const QTreeWidgetItem* item = list_->currentItem();
    if (!item) return {};
    const qint64 pid = item->data(0, Qt::UserRole).toLongLong();
    for (const auto& probe : probes_)
        if (probe.pid == pid) return probe;
    return {};
}

}  // namespace probe::widgets
