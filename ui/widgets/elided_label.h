// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A one-line label that shows as much of its text as fits, ending in "…", with the whole text
// as its tooltip: a status line whose end (the state, the counts) was cut off unseen when the
// widgets beside it took the room.

#include <QLabel>
#include <QString>

namespace probe::widgets {

class ElidedLabel : public QLabel {
    Q_OBJECT
public:
    explicit ElidedLabel(QWidget* parent = nullptr);
    void setFullText(const QString& text);
    QString fullText() const { return full_; }

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    void showFitting();
    QString full_;
};

}  // namespace probe::widgets
