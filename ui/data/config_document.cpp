// SPDX-License-Identifier: GPL-3.0-or-later
#include "config_document.h"

#include <algorithm>
#include <cstring>

#include <QDir>
#include <QFileInfo>

#include "op_selection.h"
#include "probe/format/file_util.h"
#include "probe/format/json_input.h"

namespace probe::data {
namespace {

using Json = ConfigDocument::Json;

std::string dumpText(const Json& object) {
    return object.dump(4, ' ', false, Json::error_handler_t::replace) + "\n";
}

// "what is wrong; accepted: ..." (the field already says which key, the editor which file).
QString issueText(const format::ConfigIssue& issue) {
    QString text = QString::fromStdString(issue.problem);
    if (!issue.accepted.empty())
        text += QStringLiteral("; accepted: ") + QString::fromStdString(issue.accepted);
    if (issue.warning) text = QObject::tr("warning: %1").arg(text);
    return text;
}

// "statistics.scope" -> ("statistics", "scope"); "task" -> ("task", "").
std::pair<std::string, std::string> splitKey(const std::string& key) {
    const size_t dot = key.find('.');
    if (dot == std::string::npos) return {key, ""};
    return {key.substr(0, dot), key.substr(dot + 1)};
}

}  // namespace

ConfigDocument::ConfigDocument(QObject* parent)
    : QObject(parent), synced_(format::OpConfig::startingPoint()) {
    setTextInternal(QString::fromStdString(synced_.toFileText()), false);
}

const std::vector<std::string>& ConfigDocument::formKeys(Kind kind) {
    static const std::vector<std::string> api = {"task",
                                                 "dump_path",
                                                 "rank",
                                                 "step",
                                                 "level",
                                                 "seed",
                                                 "is_deterministic",
                                                 "extra_info",
                                                 "statistics.scope",
                                                 "statistics.list",
                                                 "statistics.data_mode",
                                                 "statistics.summary_mode",
                                                 "tensor.scope",
                                                 "tensor.list",
                                                 "tensor.data_mode"};
    return kind == Kind::Op ? format::opConfigKeys() : api;
}

QString shortConfigName(const QString& path) {
    const QFileInfo info(path);
    const QString folder = info.dir().dirName();
    return folder.isEmpty() || folder == QLatin1String(".")
               ? info.fileName()
               : folder + QLatin1Char('/') + info.fileName();
}

QString runConfigBeside(const QString& root) {
    return QFileInfo(root).dir().absoluteFilePath(QStringLiteral("probe_config.json"));
}

void ConfigDocument::startNew(Kind kind) {
    kind_ = kind;
    filePath_.clear();
    origin_.clear();
    if (kind == Kind::Op) {
        const format::OpConfig config =
            selection_ ? selection_->config() : format::OpConfig::startingPoint();
        setTextInternal(QString::fromStdString(config.toFileText()), false);
    } else {
        setTextInternal(QString::fromStdString(dumpText(format::ApiConfig().toJson())), false);
    }
    emit replaced();
}

void ConfigDocument::startOver(Kind kind) {
    if (selection_) selection_->setConfig(format::OpConfig::startingPoint());
    startNew(kind);
}

void ConfigDocument::setText(const QString& text) {
    if (text == text_) return;
    setTextInternal(text, true);
}

void ConfigDocument::setTextInternal(const QString& text, bool modified) {
    text_ = text;
    // An edit back to the text last unmodified is none (a reverted edit kept its "*", and was
    // kept as "your edits" over the next session's config).
    if (!modified) unmodifiedText_ = text;
    modified_ = modified && text != unmodifiedText_;
    judge();
    pushToSelection();
    emit changed();
}

void ConfigDocument::judge() {
    const std::string utf8 = text_.toStdString();
    object_.reset();
    auto parsed = format::parseOrderedJson(utf8, "<editor>", format::kConfigJsonLimits);
    if (parsed.ok() && parsed.value->is_object()) {
        object_ = std::move(*parsed.value);
        notAnObjectWhy_.clear();
    } else {
        notAnObjectWhy_ = QString::fromStdString(parsed.ok() ? std::string("it is a JSON ") +
                                                                   parsed.value->type_name()
                                                             : parsed.error.placeAndProblem());
    }
    // Issues name the file they are about; a new text has none yet.
    const std::string file = filePath_.isEmpty() ? std::string("<editor>")
                                                 : QFileInfo(filePath_).fileName().toStdString();
    opConfig_.reset();
    apiConfig_.reset();
    if (kind_ == Kind::Op) {
        auto result = format::parseOpConfig(utf8, file);
        issues_ = std::move(result.issues);
        opConfig_ = std::move(result.config);
    } else {
        auto result = format::parseApiConfig(utf8, file);
        issues_ = std::move(result.issues);
        apiConfig_ = std::move(result.config);
    }
}

Json ConfigDocument::value(const std::string& key) const {
    if (!object_) return nullptr;
    const auto [section, inner] = splitKey(key);
    const auto it = object_->find(section);
    if (it == object_->end()) return nullptr;
    if (inner.empty()) return *it;
    if (!it->is_object()) return nullptr;
    const auto innerIt = it->find(inner);
    return innerIt == it->end() ? Json() : *innerIt;
}

bool ConfigDocument::contains(const std::string& key) const {
    if (!object_) return false;
    const auto [section, inner] = splitKey(key);
    const auto it = object_->find(section);
    if (it == object_->end()) return false;
    return inner.empty() || (it->is_object() && it->contains(inner));
}

bool ConfigDocument::setValue(const std::string& key, const Json& value) {
    if (!object_) return false;
    Json object = *object_;
    const auto [section, inner] = splitKey(key);
    if (inner.empty()) {
        object[section] = value;
    } else {
        if (!object.contains(section) || !object[section].is_object())
            object[section] = Json::object();
        object[section][inner] = value;
    }
    const QString text = QString::fromStdString(dumpText(object));
    if (text != text_) setTextInternal(text, true);
    return true;
}

bool ConfigDocument::removeValue(const std::string& key) {
    if (!object_) return false;
    Json object = *object_;
    const auto [section, inner] = splitKey(key);
    if (inner.empty())
        object.erase(section);
    else if (object.contains(section) && object[section].is_object())
        object[section].erase(inner);
    const QString text = QString::fromStdString(dumpText(object));
    if (text != text_) setTextInternal(text, true);
    return true;
}

QStringList ConfigDocument::issuesAt(const std::string& key) const {
    QStringList texts;
    for (const auto& issue : issues_)
        if (issue.key == key || (!issue.key.empty() && issue.key.rfind(key + ".", 0) == 0))
            texts << issueText(issue);
    return texts;
}

QStringList ConfigDocument::generalIssues(const std::vector<std::string>& keys) const {
    QStringList texts;
    for (const auto& issue : issues_) {
        // A section's own issues ("statistics" must be an object) have no field either.
        if (std::find(keys.begin(), keys.end(), issue.key) != keys.end()) continue;
        QString text = issueText(issue);
        if (issue.line > 0)
            text = tr("line %1, column %2: %3").arg(issue.line).arg(issue.column).arg(text);
        else if (!issue.key.empty())
            text = tr("key \"%1\": %2").arg(QString::fromStdString(issue.key), text);
        texts << text;
    }
    return texts;
}

bool ConfigDocument::hasErrors() const {
    return std::any_of(issues_.begin(), issues_.end(),
                       [](const format::ConfigIssue& i) { return !i.warning; });
}

bool ConfigDocument::load(const QString& path, QString* error) {
    std::string readError;
    const auto text = format::readTextFile(path.toStdString(), &readError);
    if (!text) {
        if (error) *error = tr("cannot read %1: %2").arg(path, QString::fromStdString(readError));
        return false;
    }
    const auto root = format::parseJson(*text, path.toStdString(), format::kConfigJsonLimits);
    const std::string guessed = root.ok() ? format::guessConfigKind(*root.value) : std::string();
    if (guessed == "op")
        kind_ = Kind::Op;
    else if (guessed == "api")
        kind_ = Kind::Api;
    filePath_ = path;
    origin_.clear();
    setTextInternal(QString::fromStdString(*text), false);
    emit replaced();
    return true;
}

bool ConfigDocument::save(const QString& path, QString* error) {
    if (hasErrors()) {
        QStringList problems;
        for (const auto& issue : issues_)
            if (!issue.warning) problems << QString::fromStdString(issue.toString());
        if (error)
            *error = tr("the config has problems; fix them first:\n%1")
                         .arg(problems.join(QLatin1Char('\n')));
        return false;
    }
    if (const int rc = format::writeFileAtomically(path.toStdString(), text_.toStdString());
        rc != 0) {
        if (error)
            *error = tr("cannot write %1: %2").arg(path, QString::fromLocal8Bit(std::strerror(rc)));
        return false;
    }
    const bool renamed = path != filePath_;
    filePath_ = path;
    origin_.clear();
    modified_ = false;
    unmodifiedText_ = text_;
    if (renamed) judge();  // issues name the file
    emit changed();
    return true;
}

void ConfigDocument::setFileContent(Kind kind, const QString& path, const QString& text) {
    kind_ = kind;
    filePath_ = path;
    origin_.clear();
    setTextInternal(text, false);
    emit replaced();
}

void ConfigDocument::startFrom(Kind kind, const QString& origin, const QString& text,
                               bool modified) {
    kind_ = kind;
    filePath_.clear();
    origin_ = origin;
    // Judged again even when the text is the same: its issues named the file.
    setTextInternal(text, modified);
    emit replaced();
}

void ConfigDocument::followSelection(OpSelection* selection) {
    if (selection_) disconnect(selection_, nullptr, this, nullptr);
    selection_ = selection;
    if (!selection_) return;
    connect(selection_, &OpSelection::changed, this, &ConfigDocument::onSelectionChanged);
    synced_ = selection_->config();
    if (kind_ == Kind::Op) setTextInternal(QString::fromStdString(synced_.toFileText()), modified_);
}

void ConfigDocument::pushToSelection() {
    if (!selection_ || kind_ != Kind::Op || !opConfig_) return;
    synced_ = *opConfig_;
    if (selection_->config() == *opConfig_) return;
    updatingSelection_ = true;
    selection_->setConfig(*opConfig_);
    updatingSelection_ = false;
}

void ConfigDocument::onSelectionChanged() {
    if (updatingSelection_ || kind_ != Kind::Op) return;
    const format::OpConfig& now = selection_->config();
    if (opConfig_ && *opConfig_ == now) return;
    if (!object_) {
        // The text is not even JSON: the tree's change (a click) wins.
        synced_ = now;
        setTextInternal(QString::fromStdString(now.toFileText()), true);
        return;
    }
    // Write only the keys the tree changed, so that a half-edited text keeps the rest.
    const nlohmann::json before = synced_.toJson(), after = now.toJson();
    Json object = *object_;
    for (const auto& key : format::opConfigKeys())
        if (before.value(key, nlohmann::json()) != after.value(key, nlohmann::json()))
            object[key] = Json::parse(after[key].dump());
    synced_ = now;
    setTextInternal(QString::fromStdString(dumpText(object)), true);
}

}  // namespace probe::data
