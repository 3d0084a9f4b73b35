// SPDX-License-Identifier: GPL-3.0-or-later
#include "op_selection.h"

#include <algorithm>
#include <cstring>

#include "probe/format/config_issue.h"
#include "probe/format/file_util.h"

namespace probe::data {

OpSelection::OpSelection(QObject* parent) : QObject(parent), config_(format::OpConfig::startingPoint()) {}

void OpSelection::syncTicked() { ticked_ = std::unordered_set<std::string>(config_.ids.begin(), config_.ids.end()); }

void OpSelection::markChanged() {
    modified_ = true;
    emit changed();
}

void OpSelection::setConfig(const format::OpConfig& config) {
    if (config == config_) return;
    config_ = config;
    syncTicked();
    markChanged();
}

void OpSelection::setTicked(const std::string& id, bool ticked) {
    if (isTicked(id) == ticked) return;
    if (ticked) {
        config_.ids.push_back(id);
        ticked_.insert(id);
    } else {
        config_.ids.erase(std::remove(config_.ids.begin(), config_.ids.end(), id), config_.ids.end());
        ticked_.erase(id);
    }
    markChanged();
}

void OpSelection::setIncludesChildren(bool include) {
    if (config_.saveChild == include) return;
    config_.saveChild = include;
    markChanged();
}

bool OpSelection::load(const QString& path, QString* error) {
    const auto result = format::loadOpConfigFile(path.toStdString());
    if (!result.ok()) {
        if (error) *error = QString::fromStdString(format::describeIssues(result.issues));
        return false;
    }
    config_ = *result.config;
    syncTicked();
    filePath_ = path;
    modified_ = false;
    emit changed();
    return true;
}

bool OpSelection::save(const QString& path, QString* error) {
    if (const int rc = format::writeFileAtomically(path.toStdString(), config_.toFileText()); rc != 0) {
        if (error) *error = QStringLiteral("cannot write %1: %2").arg(path, QString::fromLocal8Bit(std::strerror(rc)));
        return false;
    }
    filePath_ = path;
    modified_ = false;
    emit changed();
    return true;
}

}  // namespace probe::data
