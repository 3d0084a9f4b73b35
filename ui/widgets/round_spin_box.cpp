// SPDX-License-Identifier: GPL-3.0-or-later
#include "round_spin_box.h"

#include <algorithm>
#include <cstdlib>

namespace probe::widgets {

RoundSpinBox::RoundSpinBox(QWidget* parent) : QSpinBox(parent) {
    setMinimum(kLatest);
    setMaximum(kLatest);
    setSpecialValueText(tr("latest"));
}

void RoundSpinBox::setRounds(std::vector<int> rounds) {
    rounds_ = std::move(rounds);
    setMaximum(rounds_.empty() ? kLatest : rounds_.back());
}

int RoundSpinBox::stepFrom(int value, bool up) const {
    if (rounds_.empty()) return value;
    if (value == kLatest) return up ? kLatest : rounds_.back();
    if (up) {
        const auto next = std::upper_bound(rounds_.begin(), rounds_.end(), value);
        return next == rounds_.end() ? kLatest : *next;
    }
    const auto at = std::lower_bound(rounds_.begin(), rounds_.end(), value);
    return at == rounds_.begin() ? value : *(at - 1);
}

void RoundSpinBox::stepBy(int steps) {
    int value = this->value();
    for (int i = 0; i < std::abs(steps); ++i) value = stepFrom(value, steps > 0);
    setValue(value);
    selectAll();
}

QAbstractSpinBox::StepEnabled RoundSpinBox::stepEnabled() const {
    StepEnabled enabled = StepNone;
    if (stepFrom(value(), true) != value()) enabled |= StepUpEnabled;
    if (stepFrom(value(), false) != value()) enabled |= StepDownEnabled;
    return enabled;
}

}  // namespace probe::widgets
