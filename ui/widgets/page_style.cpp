// SPDX-License-Identifier: GPL-3.0-or-later
#include "page_style.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QScrollArea>
#include <QString>

namespace probe::widgets {

void setHeadingFont(QWidget* widget, double scale) {
    QFont font = widget->font();
    font.setBold(true);
    font.setPointSizeF(font.pointSizeF() * scale);
    widget->setFont(font);
}

QLabel* makePaneTitle(const QString& text, QWidget* parent) {
    auto* title = new QLabel(text, parent);
    title->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    setHeadingFont(title, 1.1);
    title->setTextInteractionFlags(Qt::TextSelectableByMouse);
    return title;
}

QString countOf(qsizetype count, const QString& one, const QString& many) {
    return QStringLiteral("%1 %2").arg(count).arg(count == 1 ? one : many);
}

void setReadableColumn(QWidget* page, QLayout* column) {
    auto* frame = new QWidget(page);
    frame->setLayout(column);
    frame->setMaximumWidth(980);
    auto* outer = new QHBoxLayout(page);
    outer->addStretch(1);
    outer->addWidget(frame, 8);
    outer->addStretch(1);
}

QScrollArea* scrollable(QWidget* page) {
    auto* area = new QScrollArea(page->parentWidget());
    area->setWidget(page);
    area->setWidgetResizable(true);
    area->setFrameShape(QFrame::NoFrame);
    area->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    return area;
}

}  // namespace probe::widgets
