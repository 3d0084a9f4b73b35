// SPDX-License-Identifier: GPL-3.0-or-later
#include "start_page.h"

#include <QApplication>
#include <QCommandLinkButton>
#include <QFileInfo>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QLocale>
#include <QPainter>
#include <QPushButton>
#include <QStyledItemDelegate>
#include <QVBoxLayout>

#include "page_style.h"

namespace probe::widgets {

using session::RecentSession;

namespace {

// A recent session in two lines: what it was (the command line, the folder), then in smaller
// grey type how and when, and its dump folder.
class RecentSessionDelegate : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;

    void paint(QPainter* painter, const QStyleOptionViewItem& option,
               const QModelIndex& index) const override {
        QStyleOptionViewItem opt = option;
        initStyleOption(&opt, index);
        const QString text =
            index.data(Qt::DisplayRole).toString();  // opt.text has its newline replaced
        opt.text.clear();
        QStyle* style = opt.widget ? opt.widget->style() : QApplication::style();
        style->drawControl(QStyle::CE_ItemViewItem, &opt, painter,
                           opt.widget);  // background, selection
        const QString title = text.section(QLatin1Char('\n'), 0, 0),
                      detail = text.section(QLatin1Char('\n'), 1);
        const QRect area = opt.rect.adjusted(6, 3, -6, -3);
        const bool selected = opt.state & QStyle::State_Selected;
        painter->save();
        painter->setPen(opt.palette.color(selected ? QPalette::HighlightedText : QPalette::Text));
        painter->setFont(opt.font);
        const QFontMetrics titleMetrics(opt.font);
        painter->drawText(area.left(), area.top() + titleMetrics.ascent(),
                          titleMetrics.elidedText(title, Qt::ElideMiddle, area.width()));
        QFont small = opt.font;
        small.setPointSizeF(small.pointSizeF() * 0.9);
        const QFontMetrics smallMetrics(small);
        painter->setFont(small);
        painter->setPen(selected ? opt.palette.color(QPalette::HighlightedText)
                                 : QColor(110, 110, 110));
        painter->drawText(area.left(),
                          area.top() + titleMetrics.height() + 2 + smallMetrics.ascent(),
                          smallMetrics.elidedText(detail, Qt::ElideMiddle, area.width()));
        painter->restore();
    }

    // No width of its own: an item is as wide as the list, its lines cut in the middle to fit
    // (the list scrolled sideways to the end of the longest command line).
    QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex&) const override {
        QFont small = option.font;
        small.setPointSizeF(small.pointSizeF() * 0.9);
        return {1, QFontMetrics(option.font).height() + QFontMetrics(small).height() + 10};
    }
};

QString kindWord(RecentSession::Kind kind) {
    switch (kind) {
        case RecentSession::Kind::Launch:
            return QObject::tr("launched");
        case RecentSession::Kind::Attach:
            return QObject::tr("attached");
        case RecentSession::Kind::Open:
            return QObject::tr("opened");
        case RecentSession::Kind::Compare:
            return QObject::tr("compared");
    }
    return {};
}

}  // namespace

StartPage::StartPage(session::RecentSessions* recent, QWidget* parent)
    : QWidget(parent), recent_(recent) {
    auto* title = new QLabel(tr("Probe Studio"), this);
    setHeadingFont(title, 2.2);
    auto* subtitle =
        new QLabel(tr("Find where a neural network's numbers go wrong: launch a model under the "
                      "probe, tick the ops "
                      "to dump, watch their statistics round by round, look at the tensors."),
                   this);
    subtitle->setWordWrap(true);

    demo_ = new QCommandLinkButton(
        tr("Launch the demo"),
        tr("A small LLaMA-style decoder with a planted overflow: layer 1 goes to inf at step 6. "
           "Watch the op tree and the plots fill, and find it."),
        this);
    launch_ = new QCommandLinkButton(tr("Launch a model…"),
                                     tr("Run a program or a Python script under the probe, as "
                                        "probe run does, and follow it live."),
                                     this);
    attach_ = new QCommandLinkButton(tr("Attach to a running probe…"),
                                     tr("A program started with probe run or the load script: its "
                                        "dump, state and config, live."),
                                     this);
    open_ = new QCommandLinkButton(tr("Open a dump folder…"),
                                   tr("atb_dump_data (probe run) or msprobe step/rank folders "
                                      "(PrecisionDebugger), complete or "
                                      "still being written."),
                                   this);
    config_ = new QCommandLinkButton(
        tr("Edit a config…"),
        tr("Either kind: op-level (probe run, the load script) or code-level (PrecisionDebugger), "
           "checked as you type."),
        this);
    connect(demo_, &QCommandLinkButton::clicked, this, &StartPage::launchDemoRequested);
    connect(launch_, &QCommandLinkButton::clicked, this, &StartPage::launchRequested);
    connect(attach_, &QCommandLinkButton::clicked, this, &StartPage::attachRequested);
    connect(open_, &QCommandLinkButton::clicked, this, &StartPage::openRequested);
    connect(config_, &QCommandLinkButton::clicked, this, &StartPage::editConfigRequested);
    auto* actions = new QGridLayout;
    actions->addWidget(demo_, 0, 0);
    actions->addWidget(launch_, 0, 1);
    actions->addWidget(attach_, 1, 0);
    actions->addWidget(open_, 1, 1);
    actions->addWidget(config_, 2, 0);

    auto* recentTitle = new QLabel(tr("Recent sessions"), this);
    setHeadingFont(recentTitle, 1.2);
    clear_ = new QPushButton(tr("Clear"), this);
    clear_->setFlat(true);
    connect(clear_, &QPushButton::clicked, recent_, &session::RecentSessions::clear);
    auto* recentHead = new QHBoxLayout;
    recentHead->addWidget(recentTitle, 1);
    recentHead->addWidget(clear_);
    recentList_ = new QListWidget(this);
    recentList_->setAlternatingRowColors(true);
    recentList_->setItemDelegate(new RecentSessionDelegate(recentList_));
    recentList_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    // Five sessions at least, when the window is too low for more (the page scrolls then).
    recentList_->setMinimumHeight(5 * RecentSessionDelegate().sizeHint({}, {}).height());
    recentList_->setToolTip(
        tr("Double-click to take a session up again: a launch opens the form filled in, an "
           "attached probe is "
           "attached to again (or its dump opened when it ended), a folder is opened, a "
           "comparison is made again."));
    recentEmpty_ = new QLabel(tr("Nothing yet: the models you launch, the probes you attach to, "
                                 "the folders you open and the runs you compare are listed here."),
                              this);
    recentEmpty_->setWordWrap(true);
    recentEmpty_->setStyleSheet(QStringLiteral("color: palette(mid)"));
    connect(recentList_, &QListWidget::itemActivated, this,
            [this](QListWidgetItem* item) { activateRecent(recentList_->row(item)); });
    connect(recent_, &session::RecentSessions::changed, this, &StartPage::refresh);

    auto* column = new QVBoxLayout;
    column->addSpacing(24);
    column->addWidget(title);
    column->addWidget(subtitle);
    column->addSpacing(16);
    column->addLayout(actions);
    column->addSpacing(16);
    column->addLayout(recentHead);
    column->addWidget(recentEmpty_);
    column->addWidget(recentList_, 3);
    column->addStretch(1);  // the page keeps to the top when the list is short or hidden
    setReadableColumn(this, column);
    refresh();
}

void StartPage::setDemoAvailable(bool available, const QString& reason) {
    demo_->setEnabled(available);
    demo_->setToolTip(available ? QString() : reason);
}

void StartPage::refresh() {
    shown_ = recent_->list();
    recentList_->clear();
    const QLocale locale;
    for (const RecentSession& s : shown_) {
        QString second = QStringLiteral("%1 %2").arg(kindWord(s.kind),
                                                     locale.toString(s.when, QLocale::ShortFormat));
        if (s.kind == RecentSession::Kind::Compare)
            second += QStringLiteral(" · ") + tr("with the reference %1").arg(s.reference);
        else if (!s.path.isEmpty() && s.kind != RecentSession::Kind::Open)
            second += QStringLiteral(" · ") + s.path;
        auto* item =
            new QListWidgetItem(QStringLiteral("%1\n%2").arg(s.title(), second), recentList_);
        item->setToolTip(s.kind == RecentSession::Kind::Launch
                             ? QStringLiteral("%1\n%2").arg(
                                   s.title(), tr("output: %1").arg(s.launch.outputDirectory))
                         : s.kind == RecentSession::Kind::Compare
                             ? tr("Compares %1 with the reference %2").arg(s.title(), s.reference)
                             : s.title());
    }
    recentList_->setVisible(!shown_.isEmpty());
    recentEmpty_->setVisible(shown_.isEmpty());
    clear_->setVisible(!shown_.isEmpty());
}

void StartPage::activateRecent(int row) {
    if (row >= 0 && row < shown_.size()) emit recentActivated(shown_[row]);
}

}  // namespace probe::widgets
