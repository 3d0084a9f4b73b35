// SPDX-License-Identifier: GPL-3.0-or-later
#include "config_editor.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QStackedWidget>
#include <QTextBlock>
#include <QTime>
#include <QVBoxLayout>

#include "probe/format/json_input.h"
#include "session/live_session.h"

namespace probe::widgets {

using Json = data::ConfigDocument::Json;

namespace {

const char* kErrorColor = "#b41e1e";
const char* kWarningColor = "#8a5a00";
const char* kGoodColor = "#1e7a32";
const char* kDataModes[] = {"all", "forward", "backward", "input", "output"};

// A JSON value as one line of text for a field ("abc" without quotes, 3, [1, 2]).
QString displayText(const Json& value) {
    if (value.is_string()) return QString::fromStdString(value.get<std::string>());
    if (value.is_null()) return {};
    return QString::fromStdString(value.dump(-1, ' ', false, Json::error_handler_t::replace));
}

// "0, 2, 4-6" from [0, 2, "4-6"]; a value that is not a list as its JSON.
QString listText(const Json& value) {
    if (!value.is_array()) return displayText(value);
    QStringList items;
    for (const auto& item : value) items << displayText(item);
    return items.join(QStringLiteral(", "));
}

QStringList splitItems(const QString& text) {
    QStringList items;
    for (const QString& part : text.split(QLatin1Char(','))) {
        const QString item = part.trimmed();
        if (!item.isEmpty()) items << item;
    }
    return items;
}

// The op config the probe reported (hello or config_applied), as the format library reads it.
std::optional<format::OpConfig> opConfigOf(const nlohmann::json& object) {
    if (!object.is_object() || object.empty()) return std::nullopt;
    auto result = format::parseOpConfig(format::dumpJson(object), "probe");
    return result.config;
}

// The document's text as the object pushed to the probe (only pushed when it has no errors).
nlohmann::json configObjectOf(const QString& text) {
    auto parsed = format::parseJson(text.toStdString(), "config", format::kConfigJsonLimits);
    return parsed.ok() && parsed.value->is_object() ? std::move(*parsed.value)
                                                    : nlohmann::json::object();
}

}  // namespace

ConfigEditor::ConfigEditor(data::ConfigDocument* document, QWidget* parent)
    : QWidget(parent), document_(document) {
    kind_ = new QComboBox(this);
    kind_->addItem(tr("Op-level config (probe run, the load script)"), int(Kind::Op));
    kind_->addItem(tr("Code-level config (PrecisionDebugger)"), int(Kind::Api));
    kind_->setToolTip(
        tr("Op-level: what the injected probe dumps, editable while the model runs.\n"
           "Code-level: what PrecisionDebugger(config_path=...) dumps (msprobe style)."));
    connect(kind_, &QComboBox::activated, this, [this] {
        const auto kind = static_cast<Kind>(kind_->currentData().toInt());
        if (kind == document_->kind()) return;
        if (document_->isModified() &&
            QMessageBox::question(this, tr("Start a new config"),
                                  tr("The config being edited has changes that were not written. "
                                     "Start a new %1 config anyway?")
                                      .arg(kind == Kind::Op ? tr("op-level") : tr("code-level"))) !=
                QMessageBox::Yes) {
            updateHeader();
            return;
        }
        document_->startNew(kind);
    });
    file_ = new QLabel(this);
    file_->setSizePolicy(QSizePolicy::Ignored,
                         QSizePolicy::Preferred);  // long paths must not widen the window
    file_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* newButton = new QPushButton(tr("New"), this);
    newButton->setToolTip(tr("A new config of this kind (op-level: the tree's current ticks)"));
    connect(newButton, &QPushButton::clicked, this,
            [this] { document_->startNew(document_->kind()); });
    auto* load = new QPushButton(tr("Load…"), this);
    connect(load, &QPushButton::clicked, this, &ConfigEditor::chooseAndLoad);
    auto* save = new QPushButton(tr("Save as…"), this);
    connect(save, &QPushButton::clicked, this, &ConfigEditor::chooseAndSave);
    apply_ = new QPushButton(tr("Apply"), this);
    apply_->setDefault(true);
    connect(apply_, &QPushButton::clicked, this, [this] { apply(); });
    auto* head = new QHBoxLayout;
    head->addWidget(kind_);
    head->addStretch(1);
    head->addWidget(newButton);
    head->addWidget(load);
    head->addWidget(save);
    head->addWidget(apply_);

    status_ = new QLabel(this);
    status_->setWordWrap(true);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    inForce_ = new QLabel(this);
    inForce_->setWordWrap(true);

    forms_ = new QStackedWidget(this);
    forms_->addWidget(buildOpForm());
    forms_->addWidget(buildApiForm());
    formBlocked_ =
        new QLabel(tr("The text is not a JSON object: fix it on the right to use the form."), this);
    formBlocked_->setWordWrap(true);
    formBlocked_->setTextFormat(Qt::PlainText);  // it quotes the user's text
    formBlocked_->setStyleSheet(QStringLiteral("color: %1").arg(QLatin1String(kErrorColor)));
    auto* formBox = new QWidget(this);
    auto* formLayout = new QVBoxLayout(formBox);
    formLayout->setContentsMargins(0, 0, 0, 0);
    formLayout->addWidget(formBlocked_);
    formLayout->addWidget(forms_);
    formLayout->addStretch(1);
    auto* scroll = new QScrollArea(this);
    scroll->setWidget(formBox);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    // A form wider than its pane scrolls rather than being cut off at the right (1055 px).
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);

    json_ = new QPlainTextEdit(this);
    json_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    json_->setLineWrapMode(QPlainTextEdit::NoWrap);
    json_->setTabChangesFocus(true);
    json_->setToolTip(
        tr("The config file's text: edit here or in the form, both are the same config"));
    connect(json_, &QPlainTextEdit::textChanged, this, [this] {
        if (showingDocument_) return;
        editingKey_.clear();
        document_->setText(json_->toPlainText());
    });
    generalIssues_ = new QLabel(this);
    generalIssues_->setWordWrap(true);
    generalIssues_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* jsonBox = new QWidget(this);
    auto* jsonLayout = new QVBoxLayout(jsonBox);
    jsonLayout->setContentsMargins(0, 0, 0, 0);
    jsonLayout->addWidget(new QLabel(tr("JSON"), this));
    jsonLayout->addWidget(json_, 1);
    jsonLayout->addWidget(generalIssues_);

    auto* splitter = new QSplitter(Qt::Horizontal, this);
    splitter->addWidget(scroll);
    splitter->addWidget(jsonBox);
    splitter->setStretchFactor(0, 3);  // the form's fields first, the JSON beside them
    splitter->setStretchFactor(1, 2);
    // 3:2 from the start too: laid out by their size hints, the JSON got 200 px of 770, too
    // narrow to fix a config the form cannot show.
    splitter->setSizes({3000, 2000});
    splitter->setChildrenCollapsible(false);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(head);
    // On a line of its own: beside the buttons it was cut to "nev" at the smallest window.
    file_->setWordWrap(true);
    layout->addWidget(file_);
    layout->addWidget(status_);
    layout->addWidget(inForce_);
    layout->addWidget(splitter, 1);

    connect(document_, &data::ConfigDocument::changed, this, &ConfigEditor::onDocumentChanged);
    // Undo went back into the configs of earlier sessions, to an empty text, then redo to
    // another run's config (a GUI walk).
    connect(document_, &data::ConfigDocument::replaced, this,
            [this] { json_->document()->clearUndoRedoStacks(); });
    onDocumentChanged();
    setStatus({}, {});
}

ConfigEditor::Field& ConfigEditor::addField(Kind kind, QFormLayout* form, const std::string& key,
                                            const QString& label, FieldType type,
                                            const QString& tooltip, std::vector<Json> choices,
                                            const QString& placeholder) {
    auto& fields = fields_[kind];
    fields.emplace_back();
    Field& f = fields.back();
    f.key = key;
    f.type = type;
    f.choices = std::move(choices);
    // The value a missing key takes, from the format library's own defaults.
    if (kind == Kind::Op) {
        f.defaultValue =
            Json::parse(format::OpConfig().toJson().value(key, nlohmann::json()).dump());
    } else {
        const Json defaults = format::ApiConfig().toJson();
        const size_t dot = key.find('.');
        f.defaultValue = dot == std::string::npos
                             ? defaults.value(key, Json())
                             : defaults[key.substr(0, dot)].value(key.substr(dot + 1), Json());
    }

    f.caption = new QLabel(label, this);
    f.caption->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    f.caption->setToolTip(tooltip);
    Field* field = &f;
    switch (type) {
        case FieldType::Choice: {
            f.combo = new QComboBox(this);
            for (const auto& choice : f.choices) f.combo->addItem(displayText(choice));
            connect(f.combo, &QComboBox::activated, this, [this, field](int index) {
                if (index < static_cast<int>(field->choices.size())) writeField(*field);
            });
            f.editor = f.combo;
            break;
        }
        case FieldType::Bool:
            f.check = new QCheckBox(this);
            connect(f.check, &QCheckBox::clicked, this, [this, field] { writeField(*field); });
            f.editor = f.check;
            break;
        case FieldType::Text:
        case FieldType::Integer:
        case FieldType::IntegerList:
        case FieldType::TextList:
            f.line = new QLineEdit(this);
            f.line->setPlaceholderText(placeholder);
            connect(f.line, &QLineEdit::textEdited, this, [this, field] { writeField(*field); });
            f.editor = f.line;
            break;
        case FieldType::DataModes: {
            auto* box = new QWidget(this);
            auto* row = new QHBoxLayout(box);
            row->setContentsMargins(0, 0, 0, 0);
            for (const char* mode : kDataModes) {
                auto* check = new QCheckBox(QString::fromLatin1(mode), box);
                connect(check, &QCheckBox::clicked, this, [this, field] { writeField(*field); });
                row->addWidget(check);
                f.modes << check;
            }
            row->addStretch(1);
            f.editor = box;
            break;
        }
    }
    f.editor->setToolTip(tooltip);
    f.caption->setBuddy(f.editor);
    f.issues = new QLabel(this);
    f.issues->setWordWrap(true);
    f.issues->setTextInteractionFlags(Qt::TextSelectableByMouse);
    f.issues->setVisible(false);
    auto* cell = new QWidget(this);
    auto* cellLayout = new QVBoxLayout(cell);
    cellLayout->setContentsMargins(0, 0, 0, 0);
    cellLayout->setSpacing(1);
    cellLayout->addWidget(f.editor);
    cellLayout->addWidget(f.issues);
    form->addRow(f.caption, cell);
    return f;
}

QWidget* ConfigEditor::buildOpForm() {
    auto* page = new QWidget(this);
    auto* form = new QFormLayout(page);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    // Tooltips: FORMATS.md section 3, "Injected probe".
    addField(Kind::Op, form, "task", QStringLiteral("task"), FieldType::Choice,
             tr("What is written for the selected ops: \"tensor\" their raw data, \"statistics\" "
                "statistics only, \"all\" both.\n"
                "statistic.csv is written in every case."),
             {"tensor", "statistics", "all"});
    addField(Kind::Op, form, "dump_enable", QStringLiteral("dump_enable"), FieldType::Bool,
             tr("Nothing is dumped while false: the probe sleeps (a few atomic loads per op).\n"
                "Turn it on while the model runs: it takes effect at the next layer-level op."));
    addField(
        Kind::Op, form, "exec_range", QStringLiteral("exec_range"), FieldType::Text,
        tr("The rounds (executions of the model, e.g. decoding steps) to dump: \"all\", \"none\",\n"
           "or inclusive \"start,end\" (several pairs allowed: \"0,2,5,7\")."),
        {}, tr("default: 0,0 (the first round only)"));
    fields_[Kind::Op].back().emptyIsDefault = true;
    addField(Kind::Op, form, "ids", QStringLiteral("ids"), FieldType::Text,
             tr("Comma list of op ids (\"0,2_1\"); empty = all layer-level ops.\n"
                "Ticking ops in the tree writes them here. ids and op_name are alternatives: "
                "either selects an op."),
             {}, tr("empty: all layer-level ops"));
    addField(Kind::Op, form, "op_name", QStringLiteral("op_name"), FieldType::Text,
             tr("Comma list of case-insensitive op name prefixes (\"layers.1,lm_head\"); empty = "
                "all layer-level ops.\n"
                "Without save_child a prefix must match the op's own name; with it, the op's or "
                "any ancestor's."),
             {}, tr("empty: all layer-level ops"));
    addField(
        Kind::Op, form, "save_child", QStringLiteral("save_child"), FieldType::Bool,
        tr("Also dump the children of the selected ops (with ids and op_name empty: every op).\n"
           "\"Include children\" under the tree sets it."));
    addField(Kind::Op, form, "device", QStringLiteral("device"), FieldType::Text,
             tr("Comma list of device ids whose processes dump (\"0,1\"); empty = all."), {},
             tr("empty: all devices"));
    addField(Kind::Op, form, "filter_level", QStringLiteral("filter_level"), FieldType::Choice,
             tr("With save_child: 0 no filtering;\n"
                "1 a tensor that appears again (the same data flowing from one op to the next) is "
                "written once,\n"
                "  later appearances are header-only aliases;\n"
                "2 as 1, and kernel-level tensors are skipped too."),
             {0, 1, 2});
    return page;
}

QWidget* ConfigEditor::buildApiForm() {
    auto* page = new QWidget(this);
    auto* column = new QVBoxLayout(page);
    auto* top = new QFormLayout;
    top->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    column->addLayout(top);
    // Tooltips: FORMATS.md section 3, "Code-level API".
    addField(Kind::Api, top, "task", QStringLiteral("task"), FieldType::Choice,
             tr("\"statistics\": statistics of each tensor (dump.json); \"tensor\": the tensors' "
                "data too (.pt files)."),
             {"statistics", "tensor"});
    addField(Kind::Api, top, "dump_path", QStringLiteral("dump_path"), FieldType::Text,
             tr("The folder the dump goes to (step<N>/rank<R> folders inside); relative to the "
                "script's working directory."),
             {}, tr("default: ./dump_path"));
    addField(Kind::Api, top, "rank", QStringLiteral("rank"), FieldType::IntegerList,
             tr("The ranks (processes of a distributed job) to dump: whole numbers or \"a-b\" "
                "ranges, e.g. 0, 2, 4-6; empty = all."),
             {}, tr("empty: all ranks"));
    addField(Kind::Api, top, "step", QStringLiteral("step"), FieldType::IntegerList,
             tr("The steps (debugger.step() counts them) to dump: whole numbers or \"a-b\" ranges, "
                "e.g. 0, 2, 4-6; empty = all."),
             {}, tr("empty: all steps"));
    addField(Kind::Api, top, "level", QStringLiteral("level"), FieldType::Choice,
             tr("L0: modules; L1: APIs (torch, torch.nn.functional, Tensor methods, distributed); "
                "mix: both."),
             {"L0", "L1", "mix"});
    addField(
        Kind::Api, top, "seed", QStringLiteral("seed"), FieldType::Integer,
        tr("The seed seed_all() sets for Python, NumPy and torch (a whole number 0..4294967295)."),
        {}, tr("default: 1234"));
    addField(Kind::Api, top, "is_deterministic", QStringLiteral("is_deterministic"),
             FieldType::Bool,
             tr("seed_all() also makes torch use deterministic algorithms (reproducible, maybe "
                "slower)."));
    addField(Kind::Api, top, "extra_info", QStringLiteral("extra_info"), FieldType::Bool,
             tr("Also write stack.json (where each API was called from) and construct.json (the "
                "module tree)."));
    const QString scope =
        tr("Two full entry names bounding a range, e.g. Functional.linear.0.forward, "
           "Functional.relu.0.forward\n"
           "(L0: Module.fc1.Linear.forward.0, ...); empty = everything.");
    const QString list =
        tr("Entry names or name fragments to keep, e.g. relu, Functional.linear.0.forward; empty = "
           "all.");
    const QString modes = tr("Which tensors: \"all\", or any of forward, backward, input, output.");
    for (const char* section : {"statistics", "tensor"}) {
        const std::string prefix = std::string(section) + ".";
        auto* group = new QGroupBox(section == std::string("statistics")
                                        ? tr("statistics (used by task \"statistics\")")
                                        : tr("tensor (used by task \"tensor\")"),
                                    page);
        auto* form = new QFormLayout(group);
        form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
        addField(Kind::Api, form, prefix + "scope", QStringLiteral("scope"), FieldType::TextList,
                 scope, {}, tr("empty: everything"));
        addField(Kind::Api, form, prefix + "list", QStringLiteral("list"), FieldType::TextList,
                 list, {}, tr("empty: all entries"));
        addField(Kind::Api, form, prefix + "data_mode", QStringLiteral("data_mode"),
                 FieldType::DataModes, modes);
        if (prefix == "statistics.")
            addField(Kind::Api, form, "statistics.summary_mode", QStringLiteral("summary_mode"),
                     FieldType::Choice,
                     tr("\"statistics\": Max, Min, Mean and Norm of each tensor; \"md5\": also a "
                        "checksum of its data,\n"
                        "to compare two runs bit for bit."),
                     {"statistics", "md5"});
        column->addWidget(group);
    }
    return page;
}

void ConfigEditor::writeField(const Field& f) {
    Json value;
    // Emptied (exec_range): the key goes, and the default its placeholder names applies ("" was
    // written, which is no range at all).
    const bool toDefault = f.emptyIsDefault && f.line->text().isEmpty();
    switch (f.type) {
        case FieldType::Choice:
            value = f.choices.at(static_cast<size_t>(f.combo->currentIndex()));
            break;
        case FieldType::Bool:
            value = f.check->isChecked();
            break;
        case FieldType::Text:
            value = f.line->text().toStdString();
            break;
        case FieldType::Integer: {
            // A number when it is one; anything else as typed, for the format library to judge.
            bool ok = false;
            const qlonglong number = f.line->text().trimmed().toLongLong(&ok);
            value = ok ? Json(number) : Json(f.line->text().toStdString());
            break;
        }
        case FieldType::IntegerList: {
            value = Json::array();
            for (const QString& item : splitItems(f.line->text())) {
                bool ok = false;
                const qlonglong number = item.toLongLong(&ok);
                value.push_back(ok ? Json(number) : Json(item.toStdString()));
            }
            break;
        }
        case FieldType::TextList:
            value = Json::array();
            for (const QString& item : splitItems(f.line->text()))
                value.push_back(item.toStdString());
            break;
        case FieldType::DataModes:
            value = Json::array();
            for (const QCheckBox* check : f.modes)
                if (check->isChecked()) value.push_back(check->text().toStdString());
            break;
    }
    editingKey_ = f.line ? f.key : std::string();
    writingField_ = true;
    if (toDefault)
        document_->removeValue(f.key);
    else
        document_->setValue(f.key, value);
    writingField_ = false;
}

void ConfigEditor::showField(Field& f) {
    const bool present = document_->contains(f.key);
    const Json value = present ? document_->value(f.key) : f.defaultValue;
    switch (f.type) {
        case FieldType::Choice: {
            const QSignalBlocker blocker(f.combo);
            // A value the choices do not hold is shown as an extra entry, with its issue below.
            while (f.combo->count() > static_cast<int>(f.choices.size()))
                f.combo->removeItem(f.combo->count() - 1);
            const auto it = std::find(f.choices.begin(), f.choices.end(), value);
            if (it != f.choices.end()) {
                f.combo->setCurrentIndex(static_cast<int>(it - f.choices.begin()));
            } else {
                f.combo->addItem(tr("%1 (not accepted)").arg(displayText(value)));
                f.combo->setCurrentIndex(f.combo->count() - 1);
            }
            break;
        }
        case FieldType::Bool: {
            const QSignalBlocker blocker(f.check);
            f.check->setChecked(value.is_boolean() && value.get<bool>());
            f.check->setText(value.is_boolean()
                                 ? QString()
                                 : tr("(%1 is not a boolean)")
                                       .arg(QString::fromStdString(value.dump(
                                           -1, ' ', false, Json::error_handler_t::replace))));
            break;
        }
        case FieldType::Text:
        case FieldType::Integer:
        case FieldType::IntegerList:
        case FieldType::TextList: {
            if (f.key == editingKey_) break;  // leave the text as typed ("0, 2" stays, not "0,2")
            const QString text =
                !present ? QString()
                : (f.type == FieldType::IntegerList || f.type == FieldType::TextList)
                    ? listText(value)
                    : displayText(value);
            if (f.line->text() != text) f.line->setText(text);
            break;
        }
        case FieldType::DataModes:
            for (QCheckBox* check : f.modes) {
                const QSignalBlocker blocker(check);
                bool on = false;
                if (value.is_array())
                    for (const auto& item : value)
                        on = on || (item.is_string() &&
                                    item.get<std::string>() == check->text().toStdString());
                check->setChecked(on);
            }
            break;
    }
    const QStringList issues = document_->issuesAt(f.key);
    bool errors = false;
    for (const auto& issue : document_->issues())
        errors = errors || (!issue.warning && (issue.key == f.key));
    f.issues->setText(issues.join(QLatin1Char('\n')));
    f.issues->setVisible(!issues.isEmpty());
    f.issues->setStyleSheet(
        QStringLiteral("color: %1").arg(QLatin1String(errors ? kErrorColor : kWarningColor)));
    f.caption->setStyleSheet(
        errors ? QStringLiteral("color: %1; font-weight: bold").arg(QLatin1String(kErrorColor))
               : QString());
    // An absent key shows its default; its caption is in italics.
    QFont font = f.caption->font();
    font.setItalic(!present);
    f.caption->setFont(font);
}

void ConfigEditor::onDocumentChanged() {
    // Changed by anything but the field being typed in (a launch's or a probe's config, a file
    // loaded, a tick): that field shows the document too. It kept what had been typed into it
    // before ("all" shown as exec_range over a launch's config without one: found by a GUI walk).
    if (!writingField_) editingKey_.clear();
    const Kind kind = document_->kind();
    forms_->setCurrentIndex(kind == Kind::Op ? 0 : 1);
    forms_->setEnabled(document_->isObject());
    formBlocked_->setVisible(!document_->isObject());
    // Why, at once: the precise error was only under the text, and a valid-looking object
    // holding 1e999 read as "not a JSON object".
    if (!document_->isObject())
        formBlocked_->setText(
            tr("The form needs the text to be a JSON object: %1. Fix it on the right to use "
               "the form.")
                .arg(document_->notAnObjectWhy()));
    // Text that is no JSON object has no values: the form, greyed, keeps the last it had (it
    // showed every key's default, task "tensor" beside a text saying "all").
    if (document_->isObject())
        for (Field& f : fields_[kind]) showField(f);
    if (json_->toPlainText() != document_->text()) {
        // Replaced as one edit (undo keeps working), the cursor kept where it was.
        showingDocument_ = true;
        const int position = json_->textCursor().position();
        QTextCursor cursor(json_->document());
        cursor.select(QTextCursor::Document);
        cursor.insertText(document_->text());
        QTextCursor restored = json_->textCursor();
        restored.setPosition(std::min(position, static_cast<int>(document_->text().size())));
        json_->setTextCursor(restored);
        showingDocument_ = false;
    }
    const QStringList general = document_->generalIssues(data::ConfigDocument::formKeys(kind));
    generalIssues_->setText(general.join(QLatin1Char('\n')));
    generalIssues_->setVisible(!general.isEmpty());
    bool generalErrors = false;
    for (const auto& issue : document_->issues()) {
        const auto& keys = data::ConfigDocument::formKeys(kind);
        if (!issue.warning && std::find(keys.begin(), keys.end(), issue.key) == keys.end())
            generalErrors = true;
    }
    generalIssues_->setStyleSheet(
        QStringLiteral("color: %1")
            .arg(QLatin1String(generalErrors ? kErrorColor : kWarningColor)));
    updateHeader();
    updateInForce();
}

void ConfigEditor::updateHeader() {
    kind_->setCurrentIndex(document_->kind() == Kind::Op ? 0 : 1);
    const QString path = document_->filePath();
    const QString origin = document_->origin();
    if (!path.isEmpty()) {
        file_->setText(QFileInfo(path).fileName() +
                       (document_->isModified() ? QStringLiteral(" *") : QString()));
        file_->setToolTip(path);
    } else if (!origin.isEmpty()) {
        file_->setText(tr("new config, not written yet: a copy of %1%2")
                           .arg(data::shortConfigName(origin),
                                document_->isModified() ? tr(", edited") : QString()));
        file_->setToolTip(origin);
    } else {
        file_->setText(tr("new config, not written yet"));
        file_->setToolTip(QString());
    }
    const bool errors = document_->hasErrors();
    apply_->setEnabled(!errors);
    const bool pushes = document_->kind() == Kind::Op && session_ && session_->canPushConfig();
    apply_->setToolTip(errors   ? tr("Fix the problems shown in red first")
                       : pushes ? tr("Write the file and push the config to the probe (pid %1)")
                                      .arg(session_->probePid())
                                : tr("Write the file"));
}

void ConfigEditor::updateInForce() {
    QString text;
    if (document_->kind() == Kind::Op && session_ && !session_->configInForce().empty()) {
        const auto inForce = opConfigOf(session_->configInForce());
        const bool same = inForce && document_->opConfig() && *inForce == *document_->opConfig();
        const QString color = QLatin1String(same ? kGoodColor : kWarningColor);
        const qint64 pid = session_->probePid();
        if (session_->hasEnded()) {
            // Nothing is in force any more: say what was, until the end.
            const QString when =
                session_->state() == session::SessionState::Detached
                    ? tr("when this application detached from the probe (pid %1)").arg(pid)
                    : tr("when the probe (pid %1) ended").arg(pid);
            text =
                same
                    ? tr("<span style='color:%1'>●</span> This is the config that was in force %2.")
                          .arg(color, when)
                    : tr("<span style='color:%1'>●</span> Not the config that was in force %2.")
                          .arg(color, when);
        } else {
            text = same ? tr("<span style='color:%1'>●</span> This is the config the probe (pid "
                             "%2) has in force.")
                              .arg(color)
                              .arg(pid)
                        : tr("<span style='color:%1'>●</span> Not in force: the probe (pid %2) "
                             "runs another config until you apply this one.")
                              .arg(color)
                              .arg(pid);
        }
    }
    inForce_->setText(text);
    inForce_->setVisible(!text.isEmpty());
}

QString ConfigEditor::inForceText() const {
    return inForce_->text();
}

QString ConfigEditor::fileText() const {
    return file_->text();
}

void ConfigEditor::setStatus(const QString& text, const QString& color) {
    statusText_ = text;
    status_->setText(text.toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("<br>")));
    status_->setStyleSheet(color.isEmpty() ? QString() : QStringLiteral("color: %1").arg(color));
    status_->setVisible(!text.isEmpty());
    emit statusChanged(text);
}

QString ConfigEditor::applyStatus() const {
    return statusText_;
}

void ConfigEditor::setSession(session::LiveSession* session) {
    // The document held the last run's config file: another session is shown now, and Apply
    // would write that run's file (seen: ticks made on another dump written into the stopped
    // run's folder). A new config from the starting point: the run's config is not carried into
    // the next session as if it were new ("new config — dumps every op", its save_child ticked,
    // on a dump opened after it). Edits not applied yet are kept, as a new config: nothing the
    // user typed goes without a word.
    const QString lastConfig = session_ ? session_->configPath() : sessionConfigPath_;
    // Its file, or the copy of it that an ended run's record became (keepRecordOfEndedRun).
    const bool holdsLastRunsConfig =
        !lastConfig.isEmpty() &&
        (document_->filePath() == lastConfig ||
         (document_->filePath().isEmpty() && document_->origin() == lastConfig));
    const bool replaced = session != session_ || session == nullptr;
    // What Apply does with edits kept: a launched or attached probe takes them.
    QString applyThen = session ? tr("Apply gives them to the probe (New discards them).")
                                : tr("Apply writes them to a file (New discards them).");
    // Ticks are op ids, positions in a model: in another model they name other ops, and Apply
    // would dump those (a walk ticked layers.3 and found layers.4 of another dump ticked).
    if (const auto ids = document_->value("ids");
        ids.is_string() && !ids.get<std::string>().empty()) {
        // The first few named, not thousands (a walk may tick a whole model).
        constexpr int kNamed = 10;
        const QStringList all = QString::fromStdString(ids.get<std::string>())
                                    .split(QLatin1Char(','), Qt::SkipEmptyParts);
        QString named = all.mid(0, kNamed).join(QStringLiteral(", "));
        if (all.size() > kNamed) named += tr(", … (%1 in all)").arg(all.size());
        applyThen += QLatin1Char(' ') +
                     tr("Your edits tick ops by id (ids %1): ids are positions in the model they "
                        "were ticked in, so here they may be other ops. Check the ticks in the op "
                        "tree before Apply.")
                         .arg(named.trimmed());
    }
    if (holdsLastRunsConfig && (!session || session->configPath() != lastConfig)) {
        if (document_->isModified()) {
            document_->startFrom(document_->kind(), lastConfig, document_->text(), true);
            setStatus(tr("Your edits of %1 were not applied; they are kept here as a new config. ")
                              .arg(lastConfig) +
                          applyThen,
                      QLatin1String(kWarningColor));
        } else {
            document_->startOver(document_->kind());
            setStatus(QString(), QString());
        }
    } else if (replaced && document_->isModified()) {
        // Edits of a config file or of an opened dump's copy: the new session's config does not
        // replace them (AppContext leaves a modified document alone).
        setStatus((document_->filePath().isEmpty()
                       ? tr("Your edits were not applied; they are kept here, in place of the "
                            "config of the session now shown. ")
                       : tr("Your edits of %1 were not applied; they are kept here, in place of "
                            "the config of the session now shown. ")
                             .arg(document_->filePath())) +
                      applyThen,
                  QLatin1String(kWarningColor));
    }
    if (session_) disconnect(session_, nullptr, this, nullptr);
    session_ = session;
    sessionConfigPath_ = session_ ? session_->configPath() : QString();
    pendingRequest_ = -1;
    pushedText_.clear();
    if (session_) {
        connect(session_, &session::LiveSession::configApplied, this,
                &ConfigEditor::onConfigApplied);
        connect(session_, &session::LiveSession::configRejected, this,
                &ConfigEditor::onConfigRejected);
        connect(session_, &session::LiveSession::helloReceived, this, [this] {
            sessionConfigPath_ = session_->configPath();
            updateHeader();
            updateInForce();
        });
        connect(session_, &session::LiveSession::stateChanged, this, [this] {
            sessionConfigPath_ = session_->configPath();
            if (session_->hasEnded()) keepRecordOfEndedRun();
            // "Dumping follows it from the next layer-level op" of a probe that has ended: the
            // line below it says what was in force until the end.
            if (session_->hasEnded() && statusText_.startsWith(tr("Applied by the probe")))
                setStatus({}, {});
            if (pendingRequest_ >= 0 && session_->hasEnded()) {
                pendingRequest_ = -1;
                setStatus(
                    pushedText_.isEmpty()
                        ? tr("The probe went away before it answered (%1); the file was written.")
                              .arg(session_->stateDetail())
                        : tr("The probe went away before it answered (%1); its config file was not "
                             "changed.")
                              .arg(session_->stateDetail()),
                    QLatin1String(kErrorColor));
                pushedText_.clear();
            }
            updateHeader();
            updateInForce();
        });
    }
    updateHeader();
    updateInForce();
}

void ConfigEditor::keepRecordOfEndedRun() {
    const QString record = session_->configPath();
    const QString dumpRoot = session_->dumpRoot();
    if (record.isEmpty() || dumpRoot.isEmpty() || document_->filePath() != record ||
        QFileInfo(record).absoluteFilePath() != data::runConfigBeside(dumpRoot))
        return;
    document_->startFrom(document_->kind(), record, document_->text(), document_->isModified());
    updateHeader();
}

bool ConfigEditor::apply(const QString& pathForNewFile) {
    if (document_->hasErrors()) {
        setStatus(tr("Not applied: fix the problems shown in red first."),
                  QLatin1String(kErrorColor));
        return false;
    }
    const bool op = document_->kind() == Kind::Op;
    QString path = document_->filePath();
    if (path.isEmpty()) path = pathForNewFile;
    // A new config goes to the probe's file while there is a probe to take it.
    if (path.isEmpty() && op && session_ && !session_->hasEnded()) path = session_->configPath();
    if (path.isEmpty()) {
        path = QFileDialog::getSaveFileName(this, tr("Write the config to"), suggestedNewFile(),
                                            tr("Config files (*.json)"));
        if (path.isEmpty()) return false;
    }
    const bool pushes = op && session_ && session_->canPushConfig();
    if (pushes && path == session_->configPath()) {
        // The probe's own config file: the probe writes it as it applies the config. Written
        // here too, the probe would apply the same config twice (from its file, then from the
        // push) and say so twice; refused, the file keeps the config in force.
        pushedText_ = document_->text();
        pendingRequest_ = session_->pushConfig(configObjectOf(pushedText_));
        setStatus(tr("Sent to the probe (pid %1), which writes it to %2 as it applies it; waiting "
                     "for its answer…")
                      .arg(session_->probePid())
                      .arg(path),
                  QString());
        emit applied(path);
        return true;
    }
    QString error;
    if (!document_->save(path, &error)) {
        setStatus(tr("Not applied: %1").arg(error), QLatin1String(kErrorColor));
        return false;
    }
    if (pushes) {
        // The text as written, for the probe to judge exactly as it judges its file.
        pendingRequest_ = session_->pushConfig(configObjectOf(document_->text()));
        setStatus(tr("Written to %1 and sent to the probe (pid %2); waiting for its answer…")
                      .arg(path)
                      .arg(session_->probePid()),
                  QString());
    } else if (op && session_ && session_->hasEnded() && path == session_->configPath()) {
        setStatus(tr("Written to %1. The run that used it has ended: a launch with this file "
                     "dumps what it says.")
                      .arg(path),
                  QLatin1String(kGoodColor));
    } else if (op) {
        setStatus(tr("Written to %1. A probe watching this file applies it at its next layer-level "
                     "op; none is attached here.")
                      .arg(path),
                  QLatin1String(kGoodColor));
    } else {
        setStatus(tr("Written to %1. PrecisionDebugger(config_path=...) reads it when the script "
                     "creates the debugger.")
                      .arg(path),
                  QLatin1String(kGoodColor));
    }
    emit applied(path);
    return true;
}

void ConfigEditor::onConfigApplied(const nlohmann::json& config, const QString& source,
                                   qint64 request) {
    if (request >= 0 && request == pendingRequest_) {
        pendingRequest_ = -1;
        // The probe wrote its config file with what it applied: the document is that file now,
        // unless it was edited meanwhile.
        const auto applied = opConfigOf(config);
        if (!pushedText_.isEmpty() && document_->text() == pushedText_ && applied)
            document_->setFileContent(Kind::Op, session_->configPath(),
                                      QString::fromStdString(applied->toFileText()));
        pushedText_.clear();
        setStatus(tr("Applied by the probe (pid %1) at %2: dumping follows it from the next "
                     "layer-level op.")
                      .arg(session_->probePid())
                      .arg(QTime::currentTime().toString(QStringLiteral("HH:mm:ss"))),
                  QLatin1String(kGoodColor));
    } else if (source == QLatin1String("file") && document_->kind() == Kind::Op &&
               !document_->isModified() && document_->filePath() == session_->configPath()) {
        // Someone changed the probe's config file outside this editor: show what is in force.
        const auto applied = opConfigOf(config);
        if (applied && (!document_->opConfig() || *applied != *document_->opConfig())) {
            document_->setFileContent(Kind::Op, document_->filePath(),
                                      QString::fromStdString(applied->toFileText()));
            setStatus(
                tr("The probe applied a change of its config file made outside this editor (%1).")
                    .arg(QTime::currentTime().toString(QStringLiteral("HH:mm:ss"))),
                QString());
        }
    }
    updateInForce();
}

void ConfigEditor::onConfigRejected(const QString& reason, const QString& source, qint64 request) {
    if (request >= 0 && request == pendingRequest_) {
        pendingRequest_ = -1;
        pushedText_.clear();
        setStatus(tr("Refused by the probe (pid %1); the previous config stays in force:\n%2")
                      .arg(session_->probePid())
                      .arg(reason),
                  QLatin1String(kErrorColor));
    } else if (source == QLatin1String("file")) {
        setStatus(tr("The probe refused a change of its config file; the previous config stays in "
                     "force:\n%1")
                      .arg(reason),
                  QLatin1String(kWarningColor));
    }
    updateInForce();
}

void ConfigEditor::chooseAndLoad() {
    if (document_->isModified() &&
        QMessageBox::question(this, tr("Load a config"),
                              tr("The config being edited has changes that were not written. Load "
                                 "another anyway?")) != QMessageBox::Yes)
        return;
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Load a config (either kind)"), configDirectory_,
                                     tr("Config files (*.json);;All files (*)"));
    if (path.isEmpty()) return;
    QString error;
    if (!document_->load(path, &error))
        setStatus(error, QLatin1String(kErrorColor));
    else
        setStatus(document_->hasErrors() ? tr("Loaded %1; it has problems, shown in red.").arg(path)
                                         : tr("Loaded %1.").arg(path),
                  QString());
}

QString ConfigEditor::suggestedNewFile() const {
    return QDir(saveDirectory_.isEmpty() ? QDir::currentPath() : saveDirectory_)
        .absoluteFilePath(QStringLiteral("config.json"));
}

void ConfigEditor::chooseAndSave() {
    const QString start =
        document_->filePath().isEmpty() ? suggestedNewFile() : document_->filePath();
    const QString path = QFileDialog::getSaveFileName(this, tr("Save the config as"), start,
                                                      tr("Config files (*.json)"));
    if (path.isEmpty()) return;
    QString error;
    if (!document_->save(path, &error))
        setStatus(error, QLatin1String(kErrorColor));
    else
        setStatus(tr("Saved to %1.").arg(path), QLatin1String(kGoodColor));
}

const ConfigEditor::Field* ConfigEditor::findField(const std::string& key) const {
    const auto it = fields_.find(document_->kind());
    if (it == fields_.end()) return nullptr;
    for (const Field& f : it->second)
        if (f.key == key) return &f;
    return nullptr;
}

QWidget* ConfigEditor::field(const std::string& key) const {
    const Field* f = findField(key);
    return f ? f->editor : nullptr;
}

QLabel* ConfigEditor::caption(const std::string& key) const {
    const Field* f = findField(key);
    return f ? f->caption : nullptr;
}

QLabel* ConfigEditor::issueLabel(const std::string& key) const {
    const Field* f = findField(key);
    return f ? f->issues : nullptr;
}

QList<QCheckBox*> ConfigEditor::modeBoxes(const std::string& key) const {
    const Field* f = findField(key);
    return f ? f->modes : QList<QCheckBox*>();
}

}  // namespace probe::widgets
