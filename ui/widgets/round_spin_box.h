// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The toolbar's round: the rounds the dump has, in order, then "latest" after the last. Up and
// Down step through the rounds that are there (a dump of steps 0, 10 and 20 went to 1, a round
// without rows), Up from the last goes to "latest" and Down from "latest" to the last round (Up
// from "latest" went to round 0, and Down did nothing). A number typed is taken as it is.

#include <vector>

#include <QSpinBox>

namespace probe::widgets {

class RoundSpinBox : public QSpinBox {
    Q_OBJECT
public:
    static constexpr int kLatest = -1;
    explicit RoundSpinBox(QWidget* parent = nullptr);
    // The rounds there are, sorted; the largest is the box's maximum.
    void setRounds(std::vector<int> rounds);
    void stepBy(int steps) override;

protected:
    StepEnabled stepEnabled() const override;

private:
    // The round one step from `value` upwards (`up`) or downwards, kLatest after the last.
    int stepFrom(int value, bool up) const;
    std::vector<int> rounds_;
};

}  // namespace probe::widgets
