// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A one-line label that shows as much of its text as fits, ending in "…", with the whole text
// as its tooltip: a status line whose end (the state, the counts) was cut off unseen when the
// widgets beside it took the room.

#include <QLabel>
#include <QPushButton>
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

// A flat button of the same kind, for a notice that takes the user somewhere ("⚠ First NaN: …"):
// it asks for its whole text's width but takes less when given less, and its tooltip then begins
// with the whole text. At the window's smallest size, two such notices took the status bar and
// left a comparison's verdict four words.
class ElidedButton : public QPushButton {
    Q_OBJECT
public:
    explicit ElidedButton(QWidget* parent = nullptr);
    void setFullText(const QString& text);
    QString fullText() const { return full_; }
    // What the button does, said by its tooltip.
    void setExplanation(const QString& text);
    QSize minimumSizeHint() const override;
    QSize sizeHint() const override;

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    void showFitting();
    int textMargins() const;
    QString full_, explanation_;
};

}  // namespace probe::widgets
