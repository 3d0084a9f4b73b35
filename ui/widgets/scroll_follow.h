// Whether a view that grows should follow its end: told after each scroll the user makes.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <functional>
#include <utility>

#include <QMetaObject>
#include <QObject>
#include <QScrollBar>

namespace probe::widgets {

// Calls `told(atEnd)` once each scroll of the user's (wheel, keys, the bar) is done: whether it
// left `bar` at its end, so that the view follows what comes again. QAbstractSlider announces an
// action before it moves the bar (QPlainTextEdit moves it for a page step with its signals
// blocked): the bar is looked at once the action is done.
inline void whenUserScrolls(QScrollBar* bar, QObject* context, std::function<void(bool)> told) {
    QObject::connect(bar, &QAbstractSlider::actionTriggered, context,
                     [bar, context, told = std::move(told)] {
                         QMetaObject::invokeMethod(
                             context, [bar, told] { told(bar->value() >= bar->maximum()); },
                             Qt::QueuedConnection);
                     });
}

}  // namespace probe::widgets
