// SPDX-License-Identifier: GPL-3.0-or-later
#include "launch_form.h"

#include <initializer_list>
#include <optional>
#include <utility>

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QVBoxLayout>

#include "config_wording.h"
#include "page_style.h"

namespace probe::widgets {
namespace {

// One word of a shell command line, quoted when it has to be.
QString shellWord(const QString& word) {
    static const QRegularExpression plain(QStringLiteral("^[A-Za-z0-9_@%+=:,./-]+$"));
    if (plain.match(word).hasMatch()) return word;
    QString quoted = word;
    quoted.replace(QLatin1Char('\''), QStringLiteral("'\\''"));
    return QLatin1Char('\'') + quoted + QLatin1Char('\'');
}

// Splits arguments as a POSIX shell does with quotes ('...' literal, "..." with \" \\ \$ \`
// escapes, \ outside quotes); no expansions. nullopt when a quote is not closed.
std::optional<QStringList> splitShellWords(const QString& text) {
    QStringList words;
    QString word;
    bool inWord = false;
    for (qsizetype i = 0; i < text.size(); ++i) {
        const QChar c = text[i];
        if (c.isSpace()) {
            if (inWord) words << word;
            word.clear();
            inWord = false;
        } else if (c == QLatin1Char('\\')) {
            inWord = true;
            if (++i < text.size()) word += text[i];
        } else if (c == QLatin1Char('\'')) {
            inWord = true;
            const qsizetype close = text.indexOf(QLatin1Char('\''), i + 1);
            if (close < 0) return std::nullopt;
            word += text.mid(i + 1, close - i - 1);
            i = close;
        } else if (c == QLatin1Char('"')) {
            inWord = true;
            for (++i;; ++i) {
                if (i >= text.size()) return std::nullopt;
                if (text[i] == QLatin1Char('"')) break;
                if (text[i] == QLatin1Char('\\') && i + 1 < text.size() &&
                    QStringLiteral("\"\\$`").contains(text[i + 1]))
                    ++i;
                word += text[i];
            }
        } else {
            inWord = true;
            word += c;
        }
    }
    if (inWord) words << word;
    return words;
}

QString shellLine(const QStringList& words) {
    QStringList quoted;
    for (const QString& w : words) quoted << shellWord(w);
    return quoted.join(QLatin1Char(' '));
}

}  // namespace

QLineEdit* LaunchForm::addPathRow(QGridLayout* grid, int row, const QString& label,
                                  const QString& tooltip, bool directory, const QString& filter) {
    auto* edit = new QLineEdit(this);
    edit->setToolTip(tooltip);
    auto* caption = new QLabel(label, this);
    caption->setToolTip(tooltip);
    caption->setBuddy(edit);
    auto* browse = new QPushButton(tr("Browse…"), this);
    connect(browse, &QPushButton::clicked, this, [this, edit, directory, filter, label] {
        QString start = edit->text().isEmpty() ? workingDirectory_->text() : edit->text();
        if (edit == config_ && edit->text().isEmpty() && !configDirectory_.isEmpty())
            start = configDirectory_;
        QString chosen = directory ? QFileDialog::getExistingDirectory(this, label, start)
                                   : QFileDialog::getOpenFileName(this, label, start, filter);
        if (chosen.isEmpty()) return;
        edit->setText(chosen);
        emit edit->textEdited(chosen);  // as if typed: the form reacts the same way
    });
    grid->addWidget(caption, row, 0);
    grid->addWidget(edit, row, 1);
    grid->addWidget(browse, row, 2);
    return edit;
}

LaunchForm::LaunchForm(QWidget* parent) : QWidget(parent) {
    auto* title = new QLabel(tr("Launch a model under the probe"), this);
    setHeadingFont(title, 1.5);
    auto* intro = new QLabel(tr("The program runs unchanged, exactly as <code>probe run</code> "
                                "runs it: its modules become the "
                                "layer-level ops, its aten ops their children. Its output appears "
                                "in the session panel; the dump "
                                "opens here and grows as it runs."),
                             this);
    intro->setWordWrap(true);

    auto* grid = new QGridLayout;
    grid->setColumnStretch(1, 1);
    int row = 0;
    program_ = addPathRow(
        grid, row++, tr("Command or script"),
        tr("The program to run: a Python script (run with the interpreter below) or an executable"),
        false, tr("Python scripts (*.py);;All files (*)"));
    program_->setPlaceholderText(tr("train.py, or an executable"));
    arguments_ = new QLineEdit(this);
    arguments_->setPlaceholderText(tr("--epochs 2 --batch 8 (quoted as in a shell)"));
    arguments_->setToolTip(
        tr("The program's arguments, split as a shell would (quotes group words)"));
    auto* argumentsLabel = new QLabel(tr("Arguments"), this);
    argumentsLabel->setBuddy(arguments_);
    grid->addWidget(argumentsLabel, row, 0);
    grid->addWidget(arguments_, row++, 1, 1, 2);
    interpreter_ =
        addPathRow(grid, row++, tr("Interpreter"),
                   tr("What runs a script: /usr/bin/python3 by default for .py files (Debian's "
                      "torch belongs to it; a "
                      "python3 earlier on PATH may have none). Empty: the program runs itself."),
                   false);
    interpreter_->setPlaceholderText(tr("none: the program runs itself"));
    workingDirectory_ = addPathRow(
        grid, row++, tr("Working directory"),
        tr("Where the program runs; relative paths (the script, the output) are taken from it"),
        true);
    workingDirectory_->setPlaceholderText(QDir::currentPath());
    environment_ = new QPlainTextEdit(this);
    environment_->setPlaceholderText(
        tr("NAME=value, one a line (added to the application's environment)"));
    environment_->setToolTip(environment_->placeholderText());
    environment_->setTabChangesFocus(true);
    environment_->setFixedHeight(environment_->fontMetrics().lineSpacing() * 4 + 12);
    auto* environmentLabel = new QLabel(tr("Environment"), this);
    environmentLabel->setBuddy(environment_);
    grid->addWidget(environmentLabel, row, 0, Qt::AlignTop);
    grid->addWidget(environment_, row++, 1, 1, 2);
    output_ = addPathRow(
        grid, row, tr("Output folder"),
        tr("The dump goes to <folder>/atb_dump_data (probe run --output). A fresh folder is "
           "suggested for each "
           "launch: a second run into the same folder adds its process beside the first."),
        true);
    auto* fresh = new QPushButton(tr("New folder"), this);
    fresh->setToolTip(tr("Suggest a new, empty output folder"));
    connect(fresh, &QPushButton::clicked, this, [this] {
        output_->setText(suggestedOutput());
        outputChosen_ = false;
        updateChecks();
    });
    grid->addWidget(fresh, row++, 3);
    config_ = addPathRow(grid, row++, tr("Config"),
                         tr("The op-level config (probe run --config; docs/formats.md §4). "
                            "Empty: probe run writes "
                            "<output>/probe_config.json, statistics of every layer-level op, every "
                            "round. Edit it in the Config "
                            "tab while the model runs."),
                         false, tr("Config files (*.json);;All files (*)"));
    config_->setPlaceholderText(tr("none: statistics of every layer-level op, every round"));
    // What the config dumps, in words: a config carried over from the last launch (the demo's
    // writes every op's tensors, gigabytes a minute) is seen before it runs.
    configSummary_ = new QLabel(this);
    configSummary_->setWordWrap(true);
    grid->addWidget(configSummary_, row++, 1, 1, 2);

    command_ = new QLabel(this);
    command_->setWordWrap(true);
    command_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    command_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    command_->setStyleSheet(
        QStringLiteral("background: palette(base); padding: 6px; border: 1px solid palette(mid)"));
    command_->setToolTip(tr("What the launch runs: the same in a terminal gives the same dump"));
    problem_ = new QLabel(this);
    problem_->setWordWrap(true);
    problem_->setStyleSheet(QStringLiteral("color: #b41e1e"));
    note_ = new QLabel(this);
    note_->setWordWrap(true);
    note_->setStyleSheet(QStringLiteral("color: #8a5a00"));

    launch_ = new QPushButton(tr("Launch"), this);
    launch_->setDefault(true);
    auto* cancel = new QPushButton(tr("Cancel"), this);
    connect(launch_, &QPushButton::clicked, this, [this] {
        if (problem().isEmpty()) emit launchRequested(spec());
    });
    connect(cancel, &QPushButton::clicked, this, &LaunchForm::cancelled);
    auto* buttons = new QHBoxLayout;
    buttons->addStretch(1);
    buttons->addWidget(cancel);
    buttons->addWidget(launch_);

    auto* column = new QVBoxLayout;
    column->addWidget(title);
    column->addWidget(intro);
    column->addSpacing(8);
    column->addLayout(grid);
    column->addSpacing(8);
    column->addWidget(new QLabel(tr("Runs:"), this));
    column->addWidget(command_);
    column->addWidget(problem_);
    column->addWidget(note_);
    column->addLayout(buttons);
    column->addStretch(1);
    setReadableColumn(this, column);

    // Tab goes from field to field in the order they stand, the Browse buttons after them: a
    // Browse between the program and its arguments took the space typed after a Tab as a
    // click, and the arguments went into a file dialog.
    QWidget* previous = program_;
    for (QWidget* next :
         std::initializer_list<QWidget*>{arguments_, interpreter_, workingDirectory_, environment_,
                                         output_, config_, launch_, cancel}) {
        setTabOrder(previous, next);
        previous = next;
    }

    connect(program_, &QLineEdit::textEdited, this, &LaunchForm::onProgramEdited);
    // A field the user typed in (or browsed to) is theirs: no longer filled in for them.
    for (auto [edit, chosen] : {std::pair{interpreter_, &interpreterChosen_},
                                {output_, &outputChosen_},
                                {config_, &configChosen_},
                                {arguments_, &argumentsChosen_}})
        connect(edit, &QLineEdit::textEdited, this, [this, chosen = chosen] {
            *chosen = true;
            updateChecks();
        });
    // A folder named after what runs: `python3` then `train.py` runs train.
    connect(arguments_, &QLineEdit::textEdited, this, [this] {
        if (outputChosen_) return;
        output_->setText(suggestedOutput());
        updateChecks();
    });
    connect(workingDirectory_, &QLineEdit::textEdited, this, &LaunchForm::updateChecks);
    // Enter in a field launches, as in a dialog (the form is a page: its default button is not
    // pressed by itself). A disabled Launch ignores it.
    for (QLineEdit* edit :
         {program_, arguments_, interpreter_, workingDirectory_, output_, config_})
        connect(edit, &QLineEdit::returnPressed, launch_, &QPushButton::click);
    connect(environment_, &QPlainTextEdit::textChanged, this, &LaunchForm::updateChecks);
    setSpec({});
}

// Whether `program` names a file (a path, from the working directory when relative) or a
// command on the PATH.
bool LaunchForm::isProgram(const QString& program) const {
    if (program.isEmpty()) return false;
    const bool onPath =
        !program.contains(QLatin1Char('/')) && !QStandardPaths::findExecutable(program).isEmpty();
    return onPath ||
           QFileInfo(QDir(workingDirectory_->text().trimmed()).filePath(program)).isFile();
}

void LaunchForm::onProgramEdited() {
    const QString program = program_->text().trimmed();
    // A script gets the interpreter it needs, and each program a folder of its own, unless the
    // user chose them.
    if (!interpreterChosen_) interpreter_->setText(session::defaultInterpreterFor(program));
    // The arguments and config filled in with the last launch go with that program only:
    // another program would have run silently with them. The same program by another path
    // (python3 made /usr/bin/python3, as a missing torch is told to) keeps them.
    // A name that is no program yet (being typed, a typo) keeps them: one character typed at
    // the end of the script's path emptied the arguments (a GUI walk).
    const bool sameProgram = QFileInfo(program).fileName() == QFileInfo(specProgram_).fileName();
    const bool anotherProgram = !sameProgram && isProgram(program);
    if (!argumentsChosen_) arguments_->setText(anotherProgram ? QString() : specArguments_);
    if (!configChosen_) config_->setText(anotherProgram ? QString() : specConfig_);
    if (!outputChosen_) output_->setText(suggestedOutput());
    updateChecks();
}

void LaunchForm::setSpec(const session::LaunchSpec& spec) {
    program_->setText(spec.program);
    arguments_->setText(shellLine(spec.arguments));
    interpreter_->setText(spec.interpreter.isEmpty() ? session::defaultInterpreterFor(spec.program)
                                                     : spec.interpreter);
    workingDirectory_->setText(spec.workingDirectory);
    environment_->setPlainText(spec.environment.join(QLatin1Char('\n')));
    output_->setText(spec.outputDirectory.isEmpty()
                         ? session::freshOutputDirectory(QStringList{spec.program} + spec.arguments,
                                                         outputParent_)
                         : spec.outputDirectory);
    config_->setText(spec.configPath);
    specProgram_ = spec.program.trimmed();
    specArguments_ = arguments_->text();
    specConfig_ = spec.configPath;
    argumentsChosen_ = configChosen_ = false;
    interpreterChosen_ = !spec.interpreter.isEmpty();
    outputChosen_ = !spec.outputDirectory.isEmpty();
    updateChecks();
}

QString LaunchForm::suggestedOutput() const {
    const QStringList command = QStringList{program_->text().trimmed()} +
                                splitShellWords(arguments_->text()).value_or(QStringList());
    return session::freshOutputDirectory(command, outputParent_);
}

session::LaunchSpec LaunchForm::spec() const {
    session::LaunchSpec s;
    s.program = program_->text().trimmed();
    s.arguments = splitShellWords(arguments_->text()).value_or(QStringList());
    s.interpreter = interpreter_->text().trimmed();
    s.workingDirectory = workingDirectory_->text().trimmed();
    for (const QString& line : environment_->toPlainText().split(QLatin1Char('\n'))) {
        const QString entry = line.trimmed();
        if (!entry.isEmpty() && !entry.startsWith(QLatin1Char('#'))) s.environment << entry;
    }
    s.outputDirectory = output_->text().trimmed();
    s.configPath = config_->text().trimmed();
    // Relative paths are the working directory's, as for the program itself.
    const QDir base(s.workingDirectory.isEmpty() ? QDir::currentPath() : s.workingDirectory);
    if (!s.outputDirectory.isEmpty())
        s.outputDirectory = QDir::cleanPath(base.absoluteFilePath(s.outputDirectory));
    if (!s.configPath.isEmpty())
        s.configPath = QDir::cleanPath(base.absoluteFilePath(s.configPath));
    // A folder that holds a dump gets this run beside it, as the form's note says (probe run
    // refused it without --append: the launch failed and the dump on screen was gone).
    const QFileInfo dump(s.dumpRoot());
    s.appendToDump = !s.outputDirectory.isEmpty() && dump.isDir() && !dump.isSymLink();
    return s;
}

QString LaunchForm::commandLine() const {
    const session::LaunchSpec s = spec();
    return shellLine(QStringList{QStringLiteral("probe")} + s.probeRunArguments());
}

QString LaunchForm::problem() const {
    return problem_->text();
}
QString LaunchForm::note() const {
    return note_->text();
}
QString LaunchForm::configSummary() const {
    return configSummary_->text();
}

void LaunchForm::updateChecks() {
    const session::LaunchSpec s = spec();
    command_->setText(commandLine());
    QString problem = s.problem();
    if (problem.isEmpty() && !splitShellWords(arguments_->text()))
        problem = tr("The arguments have a quote that is not closed.");
    problem_->setText(problem);
    problem_->setVisible(!problem.isEmpty());
    launch_->setEnabled(problem.isEmpty());
    note_->setText(s.appendToDump
                       ? tr("%1 holds a dump already: this run's process will be added beside the "
                            "earlier ones (New folder "
                            "starts a fresh one).")
                             .arg(s.outputDirectory)
                       : QString());
    note_->setVisible(!note_->text().isEmpty());
    updateConfigSummary(s.configPath);
}

void LaunchForm::updateConfigSummary(const QString& path) {
    QString summary;
    bool heavy = false;
    // Read as the launch reads it; why it cannot be is said by problem().
    if (const auto config = path.isEmpty() ? std::nullopt : session::readLaunchConfig(path)) {
        summary = tr("%1: %2 — %3")
                      .arg(QFileInfo(path).fileName(), describeDumpTask(config->task),
                           describeDumpedOps(*config));
        // Every op's tensors, or every layer's in every round, fill a disk quickly.
        heavy = config->dumpEnable && config->wantsTensors();
        if (heavy)
            summary +=
                tr(". Tensors take room fast: each dumped op writes every tensor it reads and "
                   "writes (the statistics task writes a row per tensor instead).");
    }
    configSummary_->setText(summary);
    configSummary_->setStyleSheet(heavy ? QStringLiteral("color: #8a5a00") : QString());
    configSummary_->setVisible(!summary.isEmpty());
}

// Escape leaves the form, as a dialog's does (the page could be left by Cancel only).
void LaunchForm::keyPressEvent(QKeyEvent* event) {
    if (event->key() == Qt::Key_Escape && event->modifiers() == Qt::NoModifier) {
        emit cancelled();
        return;
    }
    QWidget::keyPressEvent(event);
}

}  // namespace probe::widgets
