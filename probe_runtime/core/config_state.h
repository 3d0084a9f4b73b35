// The config in force: an immutable snapshot swapped whole when a new config is applied (from
// the file, or pushed by a client), so an op holds one config from its beginning to its end.
// A config that fails validation is reported and the previous one stays.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "probe/format/config_issue.h"
#include "probe/format/op_config.h"

namespace probe::runtime {

class Runtime;

struct ConfigSnapshot {
    format::OpConfig config;
    uint64_t generation = 0;
};

class ConfigState {
public:
    explicit ConfigState(Runtime& runtime) : runtime_(runtime) {}

    std::shared_ptr<const ConfigSnapshot> current() const;
    // The config in force through a thread's own copy of it, taken again only when another was
    // applied since: no lock and no reference count at every layer op.
    const ConfigSnapshot& currentInto(std::shared_ptr<const ConfigSnapshot>& copy) const {
        if (!copy || copy->generation != generation_.load(std::memory_order_acquire))
            copy = current();
        return *copy;
    }
    // Back to the defaults (dump disabled), then the file at `path` when there is one.
    void startWith(const std::string& path);
    // The watcher saw the file written (or removed).
    void onFileChanged(const std::string& path, bool removed);
    // A config as text (from the control socket): validated like the file; on success also
    // written to the config file. Returns "" or the problems.
    std::string applyText(const std::string& text, const std::string& source);

private:
    // `warnings`: what the parser accepted but says (ConfigIssue::warning), said beside it.
    // Returns whether the config in force changed.
    bool apply(const format::OpConfig& config, const std::string& source,
               const std::vector<format::ConfigIssue>& warnings = {});
    // The run's record of its config (Runtime::configRecordPath) takes `text`, a config just
    // applied: it says what was in force last, not a later edit that was refused.
    void keepRecord(const std::string& text);
    void reject(const std::string& reason, const std::string& source);

    Runtime& runtime_;
    mutable std::mutex mutex_;
    std::shared_ptr<const ConfigSnapshot> config_;
    std::atomic<uint64_t> generation_{0};  // of config_, changed with it under mutex_
    // A config was rejected since one was last applied (under mutex_): the file put back as the
    // config in force is then confirmed, not passed over as unchanged.
    bool rejectedSinceApplied_ = false;
};

}  // namespace probe::runtime
