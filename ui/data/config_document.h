// A config file being edited, of either kind (FORMATS.md section 3): the injected probe's
// op-level config, or the code-level config PrecisionDebugger reads. The JSON text is the
// truth; a form edits it key by key. Every change is judged by the format library's parser
// (parseOpConfig / parseApiConfig, never re-implemented here), whose issues are kept with
// their keys so they can be shown at the right field.
//
// An op-level document follows the op selection both ways: ticking ops in the tree writes ids
// and save_child into the text, and a text without errors becomes the selection the tree shows.
// No widgets.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <QObject>
#include <QPointer>
#include <QString>
#include <QStringList>
#include <nlohmann/json.hpp>

#include "probe/format/api_config.h"
#include "probe/format/config_issue.h"
#include "probe/format/op_config.h"

namespace probe::data {

class OpSelection;

// A config file named for people: its folder's name and its own ("runA/probe_config.json"), the
// folder being what tells one run's probe_config.json from another's.
QString shortConfigName(const QString& path);
// The config `probe run` (and the launch form) keeps beside a dump's atb_dump_data, `root`: the
// run's record of what it ran with (<output>/probe_config.json).
QString runConfigBeside(const QString& root);

class ConfigDocument : public QObject {
    Q_OBJECT
public:
    enum class Kind { Op, Api };
    using Json = nlohmann::ordered_json;  // keeps the order of the keys as written

    // An op-level document holding OpConfig::startingPoint(), with no file.
    explicit ConfigDocument(QObject* parent = nullptr);

    Kind kind() const { return kind_; }
    // A new document of the kind, with no file: the op selection's config when one is followed
    // (the tree's ticks are kept), else the kind's starting point.
    void startNew(Kind kind);
    // A new document of the kind from the kind's starting point, the ticks cleared: for a config
    // that was another session's (a run's file), whose ticks name that run's ops.
    void startOver(Kind kind);

    QString text() const { return text_; }
    // The text as typed; judged at once.
    void setText(const QString& text);

    // Whether the text is a JSON object, so that the form can show and edit its keys.
    bool isObject() const { return object_.has_value(); }
    // Why the text is no JSON object, where it is not: "line 3, column 12: ...", "it is a JSON
    // array". Empty for an object.
    const QString& notAnObjectWhy() const { return notAnObjectWhy_; }
    // A key's value ("task", or "statistics.scope" inside a section); null when absent or when
    // the text is not an object.
    Json value(const std::string& key) const;
    bool contains(const std::string& key) const;
    // Sets a key (a dotted key inside its section, made an object if it is not one) and
    // rewrites the text, keeping the order of the other keys. False when the text is not an
    // object (fix its syntax first).
    bool setValue(const std::string& key, const Json& value);
    // Removes a key (its default applies); false when the text is not an object.
    bool removeValue(const std::string& key);

    // Every issue the format library found, errors and warnings.
    const std::vector<format::ConfigIssue>& issues() const { return issues_; }
    // The issues about one key (a section's own and those of its keys when `key` is a section),
    // each as "what is wrong; accepted: ...".
    QStringList issuesAt(const std::string& key) const;
    // Issues no form field shows: JSON syntax (with line and column), the text as a whole,
    // unknown keys.
    QStringList generalIssues(const std::vector<std::string>& formKeys) const;
    bool hasErrors() const;
    // The config the text stands for, set only when it has no errors.
    const std::optional<format::OpConfig>& opConfig() const { return opConfig_; }
    const std::optional<format::ApiConfig>& apiConfig() const { return apiConfig_; }
    // Every key the form of a kind has, in the documented order (dotted inside sections).
    static const std::vector<std::string>& formKeys(Kind kind);

    // The file the text came from or was last written to ("" for a new one), and whether the
    // text changed since.
    QString filePath() const { return filePath_; }
    bool isModified() const { return modified_; }
    // Reads a config file and takes its kind from its keys (the current kind when they do not
    // tell). A file with problems is loaded all the same, to be fixed here; false only when it
    // cannot be read.
    bool load(const QString& path, QString* error);
    // Writes the text atomically; refuses a text with errors (listed in `error`).
    bool save(const QString& path, QString* error);
    // Takes `text` as the content of the file at `path` (the config a probe has in force), not
    // modified.
    void setFileContent(Kind kind, const QString& path, const QString& text);
    // A new document (no file) holding `text`, copied from the file at `origin`: an opened
    // dump's config, or edits of another session's file that were not applied, kept rather
    // than lost. `modified`: the text differs from the file's.
    void startFrom(Kind kind, const QString& origin, const QString& text, bool modified);
    // The file a new document's text was copied from ("" when none, and for a document with a
    // file).
    QString origin() const { return origin_; }

    // Follows the op selection (see above); the document takes the selection's config now.
    void followSelection(OpSelection* selection);

signals:
    // The text, its judgement, the kind or the file changed.
    void changed();
    // After changed(): the text is a new document's (a file loaded, a new one, a session's
    // config), not an edit of the one before: undoing must not go back into that one.
    void replaced();

private:
    void judge();
    void setTextInternal(const QString& text, bool modified);
    void pushToSelection();
    void onSelectionChanged();

    Kind kind_ = Kind::Op;
    QString text_;
    std::optional<Json> object_;
    std::vector<format::ConfigIssue> issues_;
    QString notAnObjectWhy_;
    std::optional<format::OpConfig> opConfig_;
    std::optional<format::ApiConfig> apiConfig_;
    QString filePath_;
    QString origin_;
    bool modified_ = false;
    QString unmodifiedText_;  // the text when it was last not modified
    QPointer<OpSelection> selection_;
    // The selection's config as the text last matched it: a tick changes some keys of it, and
    // only those are written into the text.
    format::OpConfig synced_;
    bool updatingSelection_ = false;
};

}  // namespace probe::data
