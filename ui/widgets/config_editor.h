// The config editor: a form for every key of either config kind (FORMATS.md section 3), each
// with a tooltip that explains it and the format library's issues shown under it as you type,
// and the JSON text beside the form, editable too (both edit one ConfigDocument). Apply writes
// the file atomically and, for an op-level config with a probe attached, pushes it and shows
// when the probe applied it or why it refused it.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <deque>
#include <map>
#include <string>
#include <vector>

#include <QList>
#include <QPointer>
#include <QWidget>

#include "config_document.h"
#include "session/live_session.h"

class QCheckBox;
class QComboBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QStackedWidget;

namespace probe::widgets {

class ConfigEditor : public QWidget {
    Q_OBJECT
public:
    explicit ConfigEditor(data::ConfigDocument* document, QWidget* parent = nullptr);

    data::ConfigDocument* document() const { return document_; }
    // The live session pushes go to (nullptr: none).
    void setSession(session::LiveSession* session);
    // Where Load starts (the installed configs folder).
    void setConfigDirectory(const QString& dir) { configDirectory_ = dir; }
    // Where a config without a file is written by default: the open dump's folder ("": the
    // working directory). Never the installed configs, which a save would overwrite.
    void setSaveDirectory(const QString& dir) { saveDirectory_ = dir; }
    // The file a save dialog proposes for a config that has none yet.
    QString suggestedNewFile() const;

    // Writes the file (the document's; else `pathForNewFile`; else the probe's config file;
    // else one chosen in a dialog) and, for an op-level config with a probe attached, pushes
    // it. False when nothing was written (problems in the config, no file, a write error).
    bool apply(const QString& pathForNewFile = {});
    // What the last apply came to, and whether the config shown is the one the probe has in
    // force, in words.
    QString applyStatus() const;
    QString inForceText() const;
    // The header's line about the file ("config.json *", "new config, not written yet…").
    QString fileText() const;
    // The request id of a push not answered yet, or -1.
    qint64 pendingRequest() const { return pendingRequest_; }

    // The form's widget for a key (a QComboBox, QCheckBox, QLineEdit, or a box of data-mode
    // checkboxes), its caption and the label of its issues; nullptr for unknown keys.
    QWidget* field(const std::string& key) const;
    QLabel* caption(const std::string& key) const;
    QLabel* issueLabel(const std::string& key) const;
    QList<QCheckBox*> modeBoxes(const std::string& key) const;
    QPlainTextEdit* jsonEdit() const { return json_; }
    QLabel* generalIssuesLabel() const { return generalIssues_; }
    QPushButton* applyButton() const { return apply_; }
    QComboBox* kindBox() const { return kind_; }
    // Load a config file of either kind, or save this one under another name (file dialogs).
    void chooseAndLoad();
    void chooseAndSave();

signals:
    // An apply wrote the file (and pushed it, when a probe is attached).
    void applied(const QString& path);
    // What the editor says of the last apply changed (applyStatus): written, sent, the probe's
    // answer, refused.
    void statusChanged(const QString& text);

private:
    enum class FieldType { Choice, Bool, Text, Integer, IntegerList, TextList, DataModes };
    struct Field {
        std::string key;
        FieldType type = FieldType::Text;
        std::vector<data::ConfigDocument::Json> choices;  // Choice
        data::ConfigDocument::Json defaultValue;          // shown when the key is absent
        // Emptied, the key goes and defaultValue applies (its placeholder names the default):
        // for keys whose empty value is no value at all (exec_range).
        bool emptyIsDefault = false;
        QWidget* editor = nullptr;
        QLabel* caption = nullptr;
        QLabel* issues = nullptr;
        QComboBox* combo = nullptr;
        QCheckBox* check = nullptr;
        QLineEdit* line = nullptr;
        QList<QCheckBox*> modes;
    };
    using Kind = data::ConfigDocument::Kind;

    QWidget* buildOpForm();
    QWidget* buildApiForm();
    Field& addField(Kind kind, QFormLayout* form, const std::string& key, const QString& label,
                    FieldType type, const QString& tooltip,
                    std::vector<data::ConfigDocument::Json> choices = {},
                    const QString& placeholder = {});
    void writeField(const Field& field);
    void showField(Field& field);
    void onDocumentChanged();
    void updateHeader();
    void updateInForce();
    // A run that ended leaves the config file beside its dump (probe_config.json, which `probe
    // run` writes) as the record of what it ran with: Apply writes another file, never that
    // record (an Apply after a launched model finished wrote the tree's ticks into it). The
    // document becomes a copy of it, its edits kept.
    void keepRecordOfEndedRun();
    void setStatus(const QString& text, const QString& color);
    void onConfigApplied(const nlohmann::json& config, const QString& source, qint64 request);
    void onConfigRejected(const QString& reason, const QString& source, qint64 request);
    const Field* findField(const std::string& key) const;

    data::ConfigDocument* document_;
    QPointer<session::LiveSession> session_;
    QString sessionConfigPath_;  // session_'s config file, kept for when session_ goes
    QString configDirectory_;
    QString saveDirectory_;
    std::map<Kind, std::deque<Field>> fields_;  // deque: fields keep their addresses
    QComboBox* kind_;
    QLabel* file_;
    QPushButton* apply_;
    QLabel* status_;
    QLabel* inForce_;
    QStackedWidget* forms_;
    QLabel* formBlocked_;
    QPlainTextEdit* json_;
    QLabel* generalIssues_;
    std::string editingKey_;     // the form field being typed in: its text is left as typed
    bool writingField_ = false;  // writeField() is changing the document
    bool showingDocument_ = false;
    qint64 pendingRequest_ = -1;
    QString pushedText_;  // the text pushed to the probe for its own file, until it answers
    QString statusText_;
};

}  // namespace probe::widgets
