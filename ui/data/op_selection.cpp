// SPDX-License-Identifier: GPL-3.0-or-later
#include "op_selection.h"

#include <algorithm>

namespace probe::data {

OpSelection::OpSelection(QObject* parent)
    : QObject(parent), config_(format::OpConfig::startingPoint()) {}

void OpSelection::syncTicked() {
    ticked_ = std::unordered_set<std::string>(config_.ids.begin(), config_.ids.end());
}

void OpSelection::setConfig(const format::OpConfig& config) {
    if (config == config_) return;
    config_ = config;
    syncTicked();
    emit changed();
}

void OpSelection::setTicked(const std::string& id, bool ticked) {
    if (isTicked(id) == ticked) return;
    if (ticked) {
        config_.ids.push_back(id);
        ticked_.insert(id);
    } else {
        config_.ids.erase(std::remove(config_.ids.begin(), config_.ids.end(), id),
                          config_.ids.end());
        ticked_.erase(id);
    }
    emit changed();
}

void OpSelection::setIncludesChildren(bool include) {
    if (config_.saveChild == include) return;
    config_.saveChild = include;
    emit changed();
}

}  // namespace probe::data
