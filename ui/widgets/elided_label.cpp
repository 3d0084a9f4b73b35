// SPDX-License-Identifier: GPL-3.0-or-later
#include "elided_label.h"

#include <algorithm>

#include <QFontMetrics>
#include <QStyle>
#include <QStyleOptionButton>

namespace probe::widgets {

ElidedLabel::ElidedLabel(QWidget* parent) : QLabel(parent) {
    setTextFormat(Qt::PlainText);
    // Long text must not widen the window: the label takes the room it is given.
    setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
}

void ElidedLabel::setFullText(const QString& text) {
    if (text == full_) return;
    full_ = text;
    showFitting();
}

void ElidedLabel::resizeEvent(QResizeEvent* event) {
    QLabel::resizeEvent(event);
    showFitting();
}

void ElidedLabel::showFitting() {
    const QString shown = fontMetrics().elidedText(full_, Qt::ElideRight, contentsRect().width());
    setText(shown);
    setToolTip(shown == full_ ? QString() : full_);
}

ElidedButton::ElidedButton(QWidget* parent) : QPushButton(parent) {
    setFlat(true);
}

void ElidedButton::setFullText(const QString& text) {
    if (text == full_) return;
    full_ = text;
    updateGeometry();
    showFitting();
}

void ElidedButton::setExplanation(const QString& text) {
    explanation_ = text;
    showFitting();
}

QSize ElidedButton::sizeHint() const {
    // elidedText keeps a text whole only within its natural width, a little over its advance
    // in a bold font: the hint has a few pixels more.
    return {textMargins() + fontMetrics().horizontalAdvance(full_) + 4,
            QPushButton::sizeHint().height()};
}

// What the button's frame and margins take around its text.
int ElidedButton::textMargins() const {
    QStyleOptionButton option;
    initStyleOption(&option);
    option.text.clear();
    return style()
        ->sizeFromContents(QStyle::CT_PushButton, &option, QSize(0, fontMetrics().height()), this)
        .width();
}

QSize ElidedButton::minimumSizeHint() const {
    const int least = textMargins() + fontMetrics().horizontalAdvance(QStringLiteral("⚠ Fi…"));
    return {std::min(sizeHint().width(), least), sizeHint().height()};
}

void ElidedButton::resizeEvent(QResizeEvent* event) {
    QPushButton::resizeEvent(event);
    showFitting();
}

void ElidedButton::showFitting() {
    const QString shown =
        fontMetrics().elidedText(full_, Qt::ElideRight, std::max(width() - textMargins(), 0));
    setText(shown);
    if (shown == full_)
        setToolTip(explanation_);
    else if (explanation_.isEmpty())
        setToolTip(full_);
    else
        setToolTip(full_ + QStringLiteral("\n\n") + explanation_);
}

}  // namespace probe::widgets
