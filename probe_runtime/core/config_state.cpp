// SPDX-License-Identifier: GPL-3.0-or-later
#include "config_state.h"

#include <cstring>

#include "probe/format/config_issue.h"
#include "probe/format/file_util.h"
#include "runtime.h"

namespace probe::runtime {

std::shared_ptr<const ConfigSnapshot> ConfigState::current() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return config_;
}

void ConfigState::startWith(const std::string& path) {
    // The config in force: the file when it is valid, else the defaults (dump disabled).
    {
        std::lock_guard<std::mutex> lock(mutex_);
        config_ =
            std::make_shared<ConfigSnapshot>(ConfigSnapshot{format::OpConfig{}, ++generation_});
    }
    if (path.empty()) return;
    if (format::fileExists(path)) {
        auto result = format::loadOpConfigFile(path);
        if (result.ok())
            apply(*result.config, "file", result.issues);
        else
            runtime_.status().warning(
                "config rejected, dumping stays disabled until it is fixed:\n" +
                format::describeIssues(result.issues));
    } else {
        runtime_.status().info("config " + path +
                               " does not exist yet; dumping is disabled until it is written");
    }
}

void ConfigState::onFileChanged(const std::string& path, bool removed) {
    if (removed) {
        runtime_.status().info("config " + path +
                               " was removed; the current config stays in force");
        return;
    }
    std::string text;
    auto result = format::loadOpConfigFile(path, &text);
    if (!result.ok()) {
        reject(format::describeIssues(result.issues), "file");
        return;
    }
    if (apply(*result.config, "file", result.issues)) keepRecord(text);
}

std::string ConfigState::applyText(const std::string& text, const std::string& source) {
    auto result = format::parseOpConfig(text, source);
    if (!result.ok()) {
        const std::string reason = format::describeIssues(result.issues);
        reject(reason, source);
        return reason;
    }
    const bool changed = apply(*result.config, source, result.issues);
    const std::string content = result.config->toFileText();
    const std::string path = runtime_.configPath();
    if (!path.empty()) {
        // Keep the file in step, so that what is on disk is what runs. The watcher will see
        // the same config again and ignore it.
        if (int err = format::writeFileAtomically(path, content))
            runtime_.status().error("cannot write the config file " + path + ": " +
                                    std::strerror(err));
    }
    if (changed) keepRecord(content);
    return "";
}

void ConfigState::keepRecord(const std::string& text) {
    const std::string record = runtime_.configRecordPath();
    if (record.empty()) return;
    if (int err = format::writeFileAtomically(record, text))
        runtime_.status().error("cannot update " + record +
                                ", the record of the config: " + std::strerror(err));
}

void ConfigState::reject(const std::string& reason, const std::string& source) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        rejectedSinceApplied_ = true;
    }
    runtime_.status().warning("config rejected, the previous one stays in force:\n" + reason);
    runtime_.notify([&](RuntimeListener& l) { l.configRejected(reason, source); });
}

bool ConfigState::apply(const format::OpConfig& config, const std::string& source,
                        const std::vector<format::ConfigIssue>& warnings) {
    // What was accepted but is worth saying (a key given twice: only its last value counts), as
    // `probe config validate` says it; applied without a word, the first "task" read as the one.
    // Said even when the config is the one in force already: the file still holds the puzzle.
    auto sayWarnings = [&] {
        if (!warnings.empty())
            runtime_.status().warning("config applied with warnings:\n" +
                                      format::describeIssues(warnings));
    };
    bool unchanged = false;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        unchanged = config_ && config_->config == config;
        // The file rewritten with what is in force already (by a client's push, say): nothing
        // else to say. A client asking for it is still answered, and so is someone who put the
        // good config back after a bad one (who waits to read that it is good).
        if (unchanged && source == "file" && !rejectedSinceApplied_) {
            sayWarnings();
            return false;
        }
        rejectedSinceApplied_ = false;
        if (!unchanged)
            config_ = std::make_shared<ConfigSnapshot>(ConfigSnapshot{config, ++generation_});
    }
    runtime_.recomputeAwake();
    std::string summary =
        "config applied (" + source + "): dump_enable=" + (config.dumpEnable ? "true" : "false") +
        " task=" + format::dumpTaskName(config.task) + " exec_range=" + config.execRange.toString();
    if (!config.ids.empty()) summary += " ids=" + config.toJson()["ids"].get<std::string>();
    if (!config.opNames.empty())
        summary += " op_name=" + config.toJson()["op_name"].get<std::string>();
    if (config.saveChild)
        summary += " save_child=true filter_level=" + std::to_string(config.filterLevel);
    runtime_.status().info(summary);
    sayWarnings();
    runtime_.notify([&](RuntimeListener& l) { l.configApplied(config, source); });
    return !unchanged;
}

}  // namespace probe::runtime
