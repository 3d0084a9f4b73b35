// The op-level config the tree shows (FORMATS.md section 3, "Injected probe"): which ops the
// probe dumps. Ticking ops in the tree adds their ids; the tree asks selects() (the format
// library's rule, never re-implemented) to show what the config dumps. Its file (the text, the
// other keys, loading and saving) is a ConfigDocument that follows it. No widgets.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <string>
#include <unordered_set>

#include <QObject>
#include <QString>

#include "probe/format/op_config.h"

namespace probe::data {

class OpSelection : public QObject {
    Q_OBJECT
public:
    // Starts from OpConfig::startingPoint() (statistics of every layer-level op, every round).
    explicit OpSelection(QObject* parent = nullptr);

    const format::OpConfig& config() const { return config_; }
    void setConfig(const format::OpConfig& config);

    bool isTicked(const std::string& id) const { return ticked_.count(id) != 0; }
    // Adds or removes the id from "ids". Ticking the first op turns "all layer-level ops" into
    // "only the ticked ones", as the rule says.
    void setTicked(const std::string& id, bool ticked);
    size_t tickedCount() const { return ticked_.size(); }
    // save_child: a ticked op's descendants are dumped too.
    bool includesChildren() const { return config_.saveChild; }
    void setIncludesChildren(bool include);
    // Whether the probe would dump this op's tensors (OpConfig::selects).
    bool selects(const format::OpLocation& op) const { return config_.selects(op); }

signals:
    void changed();

private:
    void syncTicked();

    format::OpConfig config_;
    std::unordered_set<std::string> ticked_;
};

}  // namespace probe::data
