// The session widgets offscreen: the config editor (every key of both kinds through the format
// library, the JSON both ways, Apply), the launch form, the start page; the main window
// launching and attaching to real probes (the native test engine, no PyTorch needed), pushing
// a config from the editor and the dump following it; probe-studio --launch on the command line.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <sys/stat.h>

#include <fstream>
#include <set>

#include <QCheckBox>
#include <QComboBox>
#include <QCommandLinkButton>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPointer>
#include <QPushButton>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTextBlock>
#include <QTextLayout>
#include <QTreeView>
#include <QTreeWidget>
#include <gtest/gtest.h>

#include "attach_dialog.h"
#include "config_document.h"
#include "config_editor.h"
#include "context/app_context.h"
#include "dump_builder.h"
#include "dump_cursor.h"
#include "dump_store.h"
#include "launch_form.h"
#include "main_window.h"
#include "op_selection.h"
#include "op_tree_model.h"
#include "op_tree_panel.h"
#include "probe/format/api_config.h"
#include "probe/format/op_config.h"
#include "session/live_probes.h"
#include "session/live_session.h"
#include "session_panel.h"
#include "start_page.h"
#include "statistics_plot.h"
#include "synthetic_dump.h"
#include "test_support.h"
#include "widget_checks.h"

namespace probe {
namespace {

using data::ConfigDocument;
using test::countPixels;
using test::runStudio;
using test::waitFor;
using widgets::ConfigEditor;
using widgets::MainWindow;

// Types into a line edit as a user does (replacing what it held).
void typeInto(QWidget* field, const QString& text) {
    auto* line = qobject_cast<QLineEdit*>(field);
    ASSERT_TRUE(line);
    line->selectAll();
    if (text.isEmpty())
        QTest::keyClick(line, Qt::Key_Delete);
    else
        QTest::keyClicks(line, text);
}

bool shown(const QLabel* label) {
    return label && label->isVisibleTo(label->window()) && !label->text().isEmpty();
}

// --- the config editor ------------------------------------------------------------------------

class ConfigEditorTest : public ::testing::Test {
protected:
    void SetUp() override {
        editor_.resize(1100, 800);
        editor_.show();
    }
    ConfigDocument document_;
    ConfigEditor editor_{&document_};
};

TEST_F(ConfigEditorTest, EveryKeyHasAFieldWithATooltip) {
    for (const auto kind : {ConfigDocument::Kind::Op, ConfigDocument::Kind::Api}) {
        document_.startNew(kind);
        for (const auto& key : ConfigDocument::formKeys(kind)) {
            SCOPED_TRACE(key);
            QWidget* field = editor_.field(key);
            ASSERT_TRUE(field);
            EXPECT_TRUE(field->isVisibleTo(&editor_));
            EXPECT_GT(field->toolTip().size(), 30) << field->toolTip().toStdString();
            EXPECT_EQ(editor_.caption(key)->toolTip(), field->toolTip());
            EXPECT_FALSE(shown(editor_.issueLabel(key)));
        }
    }
}

TEST_F(ConfigEditorTest, OpLevelFieldsAreJudgedAsYouType) {
    // Typed values: the format library's issue under the field, the JSON beside it follows.
    typeInto(editor_.field("exec_range"), "3,1");
    EXPECT_EQ(document_.value("exec_range"), "3,1");
    EXPECT_TRUE(editor_.jsonEdit()->toPlainText().contains("\"exec_range\": \"3,1\""));
    ASSERT_TRUE(shown(editor_.issueLabel("exec_range")));
    EXPECT_TRUE(editor_.issueLabel("exec_range")
                    ->text()
                    .startsWith("\"3,1\" is not a valid range; accepted:"))
        << editor_.issueLabel("exec_range")->text().toStdString();
    EXPECT_FALSE(editor_.applyButton()->isEnabled());
    // The issue is drawn in red under the field.
    const QImage drawn = editor_.grab().toImage();
    EXPECT_GT(countPixels(
                  drawn, [](QColor c) { return c.red() > 140 && c.green() < 80 && c.blue() < 80; }),
              50);
    typeInto(editor_.field("exec_range"), "0,5");
    EXPECT_FALSE(shown(editor_.issueLabel("exec_range")));
    EXPECT_TRUE(editor_.applyButton()->isEnabled());

    typeInto(editor_.field("ids"), "2_1,x");
    EXPECT_TRUE(editor_.issueLabel("ids")->text().contains("\"x\" is not an op id"));
    typeInto(editor_.field("ids"), "2_1, 3");
    EXPECT_EQ(qobject_cast<QLineEdit*>(editor_.field("ids"))->text(), "2_1, 3");  // left as typed
    EXPECT_EQ(document_.opConfig()->ids, (std::vector<std::string>{"2_1", "3"}));
    typeInto(editor_.field("device"), "gpu");
    EXPECT_TRUE(editor_.issueLabel("device")->text().contains("not a device id"));
    typeInto(editor_.field("device"), "");
    typeInto(editor_.field("op_name"), "Layers.1");
    EXPECT_EQ(document_.opConfig()->opNames, (std::vector<std::string>{"layers.1"}));

    // Choices and switches write proper JSON values.
    auto* task = qobject_cast<QComboBox*>(editor_.field("task"));
    ASSERT_TRUE(task);
    task->setFocus();
    QTest::keyClick(task, Qt::Key_Down);  // statistics -> all
    EXPECT_EQ(document_.value("task"), "all");
    auto* filter = qobject_cast<QComboBox*>(editor_.field("filter_level"));
    filter->setFocus();
    QTest::keyClick(filter, Qt::Key_Down);
    EXPECT_EQ(document_.value("filter_level"), 2);
    auto* enable = qobject_cast<QCheckBox*>(editor_.field("dump_enable"));
    ASSERT_TRUE(enable->isChecked());
    QTest::mouseClick(enable, Qt::LeftButton, {}, QPoint(6, enable->height() / 2));
    EXPECT_EQ(document_.value("dump_enable"), false);
    auto* saveChild = qobject_cast<QCheckBox*>(editor_.field("save_child"));
    QTest::mouseClick(saveChild, Qt::LeftButton, {}, QPoint(6, saveChild->height() / 2));
    EXPECT_EQ(document_.value("save_child"), true);
    EXPECT_FALSE(document_.hasErrors());
    // What the form wrote is what the format library reads from the text.
    const auto reread = format::parseOpConfig(editor_.jsonEdit()->toPlainText().toStdString(), "x");
    ASSERT_TRUE(reread.ok());
    EXPECT_EQ(*reread.config, *document_.opConfig());
}

// A field typed in shows the document once something else replaces it: a launch's config
// without exec_range showed the "all" typed before, over a config that dumps round 0 only (found
// by a GUI walk: ticking dump_enable then applied exec_range 0,0, which dumped nothing).
TEST_F(ConfigEditorTest, AFieldTypedInShowsTheConfigThatReplacesTheDocument) {
    auto* range = qobject_cast<QLineEdit*>(editor_.field("exec_range"));
    ASSERT_TRUE(range);
    typeInto(range, "all");
    EXPECT_EQ(range->text(), "all");
    document_.setFileContent(ConfigDocument::Kind::Op, "/nowhere/sleep.json",
                             R"({"task": "statistics", "dump_enable": false})");
    EXPECT_EQ(range->text(), QString());  // absent: its default, shown as the placeholder
    typeInto(range, "0, 3");              // typing again: left as typed
    EXPECT_EQ(range->text(), "0, 3");
    EXPECT_EQ(document_.value("exec_range"), "0, 3");
    // Emptied: the key goes and its default applies, as the placeholder says ("" was written,
    // which is no range: an error).
    typeInto(range, "");
    EXPECT_FALSE(document_.contains("exec_range")) << document_.text().toStdString();
    EXPECT_FALSE(document_.hasErrors());
    EXPECT_FALSE(shown(editor_.issueLabel("exec_range")));
    typeInto(editor_.field("ids"), "3");
    typeInto(editor_.field("ids"), "");  // an empty list is a value of its own: kept
    EXPECT_EQ(document_.value("ids"), "");
}

TEST_F(ConfigEditorTest, JsonTextAndFormAreOneConfig) {
    // Edited as text: the form shows the values, and the issues at their fields.
    editor_.jsonEdit()->setPlainText(
        R"({"task": "tensors", "dump_enable": "yes", "ids": "0,1", "filter_level": 7, "colour": 1})");
    EXPECT_EQ(qobject_cast<QLineEdit*>(editor_.field("ids"))->text(), "0,1");
    EXPECT_TRUE(qobject_cast<QComboBox*>(editor_.field("task"))->currentText().contains("tensors"));
    EXPECT_TRUE(editor_.issueLabel("task")->text().contains("\"tensors\" is not a valid value"));
    EXPECT_TRUE(editor_.issueLabel("dump_enable")->text().contains("must be a boolean"));
    EXPECT_TRUE(editor_.issueLabel("filter_level")->text().contains("7 is out of range"));
    ASSERT_TRUE(shown(editor_.generalIssuesLabel()));
    EXPECT_TRUE(editor_.generalIssuesLabel()->text().contains("\"colour\": unknown key"));
    // A form edit keeps the rest of the text (and its problems) as they are.
    typeInto(editor_.field("ids"), "4");
    EXPECT_TRUE(editor_.jsonEdit()->toPlainText().contains("\"colour\": 1"));
    EXPECT_TRUE(editor_.jsonEdit()->toPlainText().contains("\"ids\": \"4\""));
    // Broken JSON: the form waits, the line and column of the problem are shown.
    editor_.jsonEdit()->setPlainText("{\"task\": \"all\",\n \"ids\" 1}");
    EXPECT_FALSE(editor_.field("ids")->isEnabled());
    EXPECT_TRUE(editor_.generalIssuesLabel()->text().startsWith("line 2, column"))
        << editor_.generalIssuesLabel()->text().toStdString();
    editor_.jsonEdit()->setPlainText(R"({"task": "all", "ids": "1"})");
    EXPECT_TRUE(editor_.field("ids")->isEnabled());
    EXPECT_FALSE(shown(editor_.generalIssuesLabel()));
}

// Text that is no JSON object: the greyed form keeps the values it showed (it showed every key's
// default, task "tensor", beside a text saying "all": a GUI walk).
TEST_F(ConfigEditorTest, BrokenJsonLeavesTheFormAtTheLastValues) {
    editor_.jsonEdit()->setPlainText(R"({"task": "all", "ids": "3", "save_child": true})");
    auto* task = qobject_cast<QComboBox*>(editor_.field("task"));
    ASSERT_TRUE(task->currentText().startsWith("all")) << task->currentText().toStdString();
    editor_.jsonEdit()->setPlainText(R"({"task": "all", "ids": "3", "save_child": true},,oops)");
    EXPECT_FALSE(editor_.field("ids")->isEnabled());
    EXPECT_TRUE(task->currentText().startsWith("all")) << task->currentText().toStdString();
    EXPECT_EQ(qobject_cast<QLineEdit*>(editor_.field("ids"))->text(), "3");
}

// Undo goes back through the edits of this document only: a file loaded, a new config, a
// session's config are new documents (undo went back into earlier sessions' configs, to an empty
// text, and redo brought another run's: a GUI walk).
TEST_F(ConfigEditorTest, UndoStopsAtTheConfigAsLoaded) {
    document_.setFileContent(ConfigDocument::Kind::Op, "/tmp/first.json",
                             R"({"task": "statistics", "ids": "1"})");
    document_.setFileContent(ConfigDocument::Kind::Op, "/tmp/second.json",
                             R"({"task": "all", "ids": "2"})");
    QPlainTextEdit* json = editor_.jsonEdit();
    EXPECT_FALSE(json->document()->isUndoAvailable());
    QTextCursor end = json->textCursor();
    end.movePosition(QTextCursor::End);
    json->setTextCursor(end);
    json->setFocus();
    QTest::keyClicks(json, " ");
    ASSERT_TRUE(json->document()->isUndoAvailable());
    for (int i = 0; i < 5; ++i) json->undo();
    EXPECT_EQ(json->toPlainText(), R"({"task": "all", "ids": "2"})");
    EXPECT_EQ(document_.text(), R"({"task": "all", "ids": "2"})");
    EXPECT_FALSE(json->document()->isUndoAvailable());
}

TEST_F(ConfigEditorTest, CodeLevelFieldsAreJudgedAsYouType) {
    document_.startNew(ConfigDocument::Kind::Api);
    EXPECT_EQ(editor_.kindBox()->currentIndex(), 1);
    typeInto(editor_.field("step"), "0, 4-6");
    EXPECT_EQ(document_.value("step"), ConfigDocument::Json::parse(R"([0, "4-6"])"));
    EXPECT_EQ(document_.apiConfig()->step, (std::vector<int64_t>{0, 4, 5, 6}));
    typeInto(editor_.field("rank"), "1, two");
    EXPECT_TRUE(editor_.issueLabel("rank")->text().contains("\"two\" is not a range"))
        << editor_.issueLabel("rank")->text().toStdString();
    typeInto(editor_.field("rank"), "");
    typeInto(editor_.field("seed"), "abc");
    EXPECT_TRUE(editor_.issueLabel("seed")->text().contains("must be a whole number"))
        << editor_.issueLabel("seed")->text().toStdString();
    typeInto(editor_.field("seed"), "42");
    EXPECT_EQ(document_.value("seed"), 42);
    typeInto(editor_.field("dump_path"), "");
    EXPECT_TRUE(editor_.issueLabel("dump_path")->text().contains("must not be empty"));
    typeInto(editor_.field("dump_path"), "./out");
    typeInto(editor_.field("tensor.scope"), "Functional.relu.0.forward");
    EXPECT_TRUE(editor_.issueLabel("tensor.scope")->text().contains("exactly two entry names"));
    typeInto(editor_.field("tensor.scope"),
             "Functional.linear.0.forward, Functional.relu.0.forward");
    EXPECT_FALSE(shown(editor_.issueLabel("tensor.scope")));
    typeInto(editor_.field("statistics.list"), "relu, linear");
    EXPECT_EQ(document_.apiConfig()->statistics.list, (std::vector<std::string>{"relu", "linear"}));
    // Data modes: "all" with another one is refused, as the library says.
    const QList<QCheckBox*> modes = editor_.modeBoxes("statistics.data_mode");
    ASSERT_EQ(modes.size(), 5);
    EXPECT_TRUE(modes[0]->isChecked());  // "all", the default
    QTest::mouseClick(modes[1], Qt::LeftButton, {}, QPoint(6, modes[1]->height() / 2));
    EXPECT_TRUE(editor_.issueLabel("statistics.data_mode")->text().contains("cannot be combined"));
    QTest::mouseClick(modes[0], Qt::LeftButton, {}, QPoint(6, modes[0]->height() / 2));
    EXPECT_EQ(document_.apiConfig()->statistics.dataMode, (std::vector<std::string>{"forward"}));
    auto* level = qobject_cast<QComboBox*>(editor_.field("level"));
    level->setFocus();
    QTest::keyClick(level, Qt::Key_Down);  // L1 -> mix
    EXPECT_EQ(document_.apiConfig()->level, "mix");
    auto* summary = qobject_cast<QComboBox*>(editor_.field("statistics.summary_mode"));
    summary->setFocus();
    QTest::keyClick(summary, Qt::Key_Down);
    EXPECT_EQ(document_.apiConfig()->statistics.summaryMode, "md5");
    EXPECT_FALSE(document_.hasErrors()) << document_.text().toStdString();
}

TEST_F(ConfigEditorTest, ApplyWritesTheFileAtomically) {
    test::TempDir dir("ui-config");
    typeInto(editor_.field("ids"), "3");
    typeInto(editor_.field("exec_range"), "2,");
    EXPECT_FALSE(editor_.apply(QString::fromStdString(dir / "refused.json")));
    EXPECT_TRUE(editor_.applyStatus().contains("fix the problems"))
        << editor_.applyStatus().toStdString();
    EXPECT_FALSE(test::exists(dir / "refused.json"));
    typeInto(editor_.field("exec_range"), "2,4");
    const QString path = QString::fromStdString(dir / "op.json");
    ASSERT_TRUE(editor_.apply(path)) << editor_.applyStatus().toStdString();
    EXPECT_TRUE(editor_.applyStatus().contains("Written to " + path))
        << editor_.applyStatus().toStdString();
    EXPECT_EQ(document_.filePath(), path);
    EXPECT_FALSE(document_.isModified());
    const auto written = format::loadOpConfigFile(path.toStdString());
    ASSERT_TRUE(written.ok());
    EXPECT_EQ(written.config->ids, (std::vector<std::string>{"3"}));
    EXPECT_EQ(written.config->execRange.toString(), "2,4");
    EXPECT_EQ(test::listFiles(dir.path()),
              (std::vector<std::string>{"op.json"}));  // no temporary left behind
    // A code-level config too.
    document_.startNew(ConfigDocument::Kind::Api);
    typeInto(editor_.field("step"), "1-2");
    ASSERT_TRUE(editor_.apply(QString::fromStdString(dir / "api.json")));
    const auto api = format::loadApiConfigFile(dir / "api.json");
    ASSERT_TRUE(api.ok());
    EXPECT_EQ(api.config->step, (std::vector<int64_t>{1, 2}));
    // An unwritable place says why.
    typeInto(editor_.field("step"), "3");
    document_.setFileContent(ConfigDocument::Kind::Api,
                             QString::fromStdString(dir / "no/such/dir/api.json"),
                             document_.text());
    EXPECT_FALSE(editor_.apply());
    EXPECT_TRUE(editor_.applyStatus().contains("cannot write"))
        << editor_.applyStatus().toStdString();
}

// --- the launch form and the start page -------------------------------------------------------

// A launch typed as `python3` with the script among its arguments gets a folder named after the
// script, not python3 (found by a user walk); `python3 -m module`, after the module. The
// suggestion follows the arguments as they are typed, until the user chooses a folder.
TEST(LaunchForm, NamesTheOutputFolderAfterWhatRuns) {
    test::TempDir dir("ui-launch-name");
    widgets::LaunchForm form;
    form.resize(1000, 700);
    form.show();
    const auto folder = [&] { return QFileInfo(form.outputEdit()->text()).fileName(); };
    typeInto(form.programEdit(), "python3");
    EXPECT_TRUE(folder().startsWith("python3-")) << folder().toStdString();
    typeInto(form.argumentsEdit(), "-u train.py --epochs 2");
    EXPECT_TRUE(folder().startsWith("train-")) << folder().toStdString();
    EXPECT_TRUE(form.commandLine().endsWith("-- python3 -u train.py --epochs 2"))
        << form.commandLine().toStdString();
    typeInto(form.argumentsEdit(), "-m torch.utils.collect_env");
    EXPECT_TRUE(folder().startsWith("torch.utils.collect_env-")) << folder().toStdString();
    // A folder of the user's stays theirs.
    typeInto(form.outputEdit(), QString::fromStdString(dir / "mine"));
    typeInto(form.argumentsEdit(), "other.py");
    EXPECT_EQ(form.outputEdit()->text(), QString::fromStdString(dir / "mine"));
}

// The last launch's arguments and config go with its program, also when it is named by another
// path: putting /usr/bin/ before python3 (as a python without torch is told to) emptied them.
TEST(LaunchForm, TheSameProgramByAnotherPathKeepsItsArgumentsAndConfig) {
    test::TempDir dir("ui-launch-same");
    const std::string config = dir / "c.json";
    test::writeFile(config, R"({"task": "statistics", "dump_enable": true})");
    widgets::LaunchForm form;
    form.resize(1000, 700);
    form.show();
    session::LaunchSpec last;
    last.program = QStringLiteral("python3");
    last.arguments = QStringList{QStringLiteral("-u"), QStringLiteral("demo.py")};
    last.configPath = QString::fromStdString(config);
    form.setSpec(last);
    // Typed in front of it, key by key.
    form.programEdit()->setFocus();
    form.programEdit()->setCursorPosition(0);
    QTest::keyClicks(form.programEdit(), "/usr/bin/");
    EXPECT_EQ(form.programEdit()->text(), "/usr/bin/python3");
    EXPECT_EQ(form.argumentsEdit()->text(), "-u demo.py");
    EXPECT_EQ(form.configEdit()->text(), QString::fromStdString(config));
    // A name that is no program (a character typed at the end, a typo): they stay.
    form.programEdit()->setCursorPosition(form.programEdit()->text().size());
    QTest::keyClicks(form.programEdit(), "x");
    EXPECT_EQ(form.programEdit()->text(), "/usr/bin/python3x");
    EXPECT_EQ(form.argumentsEdit()->text(), "-u demo.py");
    EXPECT_EQ(form.configEdit()->text(), QString::fromStdString(config));
    // Another program: not given them.
    typeInto(form.programEdit(), "/usr/bin/env");
    EXPECT_EQ(form.argumentsEdit()->text(), "");
    EXPECT_EQ(form.configEdit()->text(), "");
}

TEST(LaunchForm, ChecksTheSpecAsYouTypeAndLaunchesIt) {
    test::TempDir dir("ui-launch");
    widgets::LaunchForm form;
    form.resize(1000, 700);
    form.show();
    typeInto(form.workingDirectoryEdit(), QString::fromStdString(dir.path()));
    typeInto(form.programEdit(), "train.py");
    // A script gets /usr/bin/python3 and a fresh output folder of its own.
    EXPECT_EQ(form.interpreterEdit()->text(), "/usr/bin/python3");
    EXPECT_TRUE(QFileInfo(form.outputEdit()->text()).fileName().startsWith("train-"))
        << form.outputEdit()->text().toStdString();
    EXPECT_TRUE(form.problem().contains("The script train.py does not exist"))
        << form.problem().toStdString();
    EXPECT_FALSE(form.launchButton()->isEnabled());
    // The interpreter as the program and the script its first argument (a new user's way): the
    // missing script was found only by the launch.
    typeInto(form.programEdit(), "/usr/bin/python3");
    typeInto(form.interpreterEdit(), "");
    typeInto(form.argumentsEdit(), "missing.py --steps 3");
    EXPECT_TRUE(form.problem().contains("The script missing.py does not exist"))
        << form.problem().toStdString();
    EXPECT_FALSE(form.launchButton()->isEnabled());
    test::writeFile(dir / "missing.py", "print('here')\n");
    typeInto(form.argumentsEdit(), "missing.py --steps 4");
    EXPECT_FALSE(form.problem().contains("missing.py")) << form.problem().toStdString();
    typeInto(form.programEdit(), "train.py");
    // A folder where the script should be (the interpreter kept from the last script): said,
    // not launched into "did it import torch?".
    ASSERT_EQ(::mkdir((dir / "runs").c_str(), 0755), 0);
    typeInto(form.programEdit(), "runs");
    typeInto(form.interpreterEdit(), "/usr/bin/python3");
    EXPECT_TRUE(form.problem().contains("runs is a folder, not a script"))
        << form.problem().toStdString();
    EXPECT_FALSE(form.launchButton()->isEnabled());
    form.interpreterEdit()->clear();
    typeInto(form.programEdit(), QString::fromStdString(dir / "runs"));
    EXPECT_TRUE(form.problem().contains("runs is a folder, not a program"))
        << form.problem().toStdString();
    typeInto(form.programEdit(), "/no/such/program");
    EXPECT_TRUE(form.problem().contains("The program /no/such/program does not exist"))
        << form.problem().toStdString();
    typeInto(form.interpreterEdit(), "/usr/bin/python3");
    test::writeFile(dir / "train.py", "print('hi')\n");
    typeInto(form.programEdit(), "train.py");
    EXPECT_TRUE(form.problem().isEmpty()) << form.problem().toStdString();
    EXPECT_TRUE(form.launchButton()->isEnabled());

    typeInto(form.argumentsEdit(), "--epochs 2 --name 'a b'");  // quoted as in a shell
    EXPECT_EQ(form.spec().arguments, QStringList({"--epochs", "2", "--name", "a b"}));
    typeInto(form.argumentsEdit(), R"(--name "a \"b\"" c\ d 'x)");
    EXPECT_TRUE(form.problem().contains("quote that is not closed"))
        << form.problem().toStdString();
    typeInto(form.argumentsEdit(), R"(--name "a \"b\"" c\ d)");
    EXPECT_EQ(form.spec().arguments, QStringList({"--name", "a \"b\"", "c d"}));
    typeInto(form.argumentsEdit(), "--epochs 2 --name 'a b'");
    form.environmentEdit()->setPlainText("FOO=1\n\nBAR=x=y");
    typeInto(form.outputEdit(), "out");
    typeInto(form.configEdit(), "missing.json");
    EXPECT_TRUE(form.problem().contains("missing.json does not exist"))
        << form.problem().toStdString();
    test::writeFile(dir / "missing.json", "{}");
    typeInto(form.configEdit(), "missing.json");
    EXPECT_TRUE(form.problem().isEmpty()) << form.problem().toStdString();
    form.environmentEdit()->setPlainText("FOO");
    EXPECT_TRUE(form.problem().contains("NAME=value")) << form.problem().toStdString();
    form.environmentEdit()->setPlainText("FOO=1\n\nBAR=x=y");

    const session::LaunchSpec spec = form.spec();
    EXPECT_EQ(spec.arguments, QStringList({"--epochs", "2", "--name", "a b"}));
    EXPECT_EQ(spec.environment, QStringList({"FOO=1", "BAR=x=y"}));
    EXPECT_EQ(spec.outputDirectory.toStdString(),
              dir / "out");  // relative to the working directory
    EXPECT_EQ(spec.configPath.toStdString(), dir / "missing.json");
    EXPECT_EQ(form.commandLine().toStdString(),
              "probe run --output " + dir / "out" + " --config " + dir / "missing.json" +
                  " -- /usr/bin/python3 train.py --epochs 2 --name 'a b'");
    EXPECT_TRUE(form.note().isEmpty());
    ASSERT_TRUE(QDir().mkpath(QString::fromStdString(dir / "out/atb_dump_data")));
    typeInto(form.outputEdit(), "out");
    EXPECT_TRUE(form.note().contains("holds a dump already")) << form.note().toStdString();
    // ... and the run goes beside it, as the note says (probe run refuses it otherwise).
    EXPECT_TRUE(form.commandLine().contains(" --append ")) << form.commandLine().toStdString();
    QStringList appending = spec.probeRunArguments();
    appending.insert(appending.indexOf("--config"), "--append");

    QSignalSpy launched(&form, &widgets::LaunchForm::launchRequested);
    QTest::mouseClick(form.launchButton(), Qt::LeftButton);
    ASSERT_EQ(launched.count(), 1);
    const auto sent = launched.at(0).at(0).value<session::LaunchSpec>();
    EXPECT_EQ(sent.program, "train.py");
    EXPECT_EQ(sent.probeRunArguments(), appending);
    // The form filled from a recent launch shows it as it was.
    form.setSpec(sent);
    EXPECT_EQ(form.spec().probeRunArguments(), appending);
}

// Enter in any field launches, as the Launch button does (when it is enabled).
TEST(LaunchForm, EnterLaunchesAndEscapeCancels) {
    test::TempDir dir("ui-launch");
    test::writeFile(dir / "train.py", "print('hi')\n");
    widgets::LaunchForm form;
    form.show();
    session::LaunchSpec spec = session::launchSpecFromCommand({"/usr/bin/python3", "train.py"});
    spec.workingDirectory = QString::fromStdString(dir.path());
    form.setSpec(spec);
    QSignalSpy launched(&form, &widgets::LaunchForm::launchRequested);
    for (QLineEdit* field : {form.programEdit(), form.argumentsEdit(), form.outputEdit()}) {
        QTest::keyClick(field, Qt::Key_Return);
        ASSERT_EQ(launched.count(), 1) << field->toolTip().toStdString();
        EXPECT_EQ(launched.takeFirst().at(0).value<session::LaunchSpec>().program, "train.py");
    }
    typeInto(form.programEdit(), "missing.py");  // Launch is disabled: Enter does nothing
    QTest::keyClick(form.programEdit(), Qt::Key_Enter);
    EXPECT_EQ(launched.count(), 0);
    // Escape leaves the form, as Cancel does (it could be left by Cancel only).
    QSignalSpy cancelled(&form, &widgets::LaunchForm::cancelled);
    QTest::keyClick(form.argumentsEdit(), Qt::Key_Escape);
    EXPECT_EQ(cancelled.count(), 1);
    EXPECT_EQ(launched.count(), 0);
}

// Tab goes from the program to its arguments and on through the fields: a Browse button
// between them took the space typed after a Tab as a click (the arguments went into a file
// dialog; a user walk).
TEST(LaunchForm, TabGoesFromFieldToFieldBeforeTheBrowseButtons) {
    widgets::LaunchForm form;
    form.show();
    QApplication::setActiveWindow(&form);
    ASSERT_TRUE(QTest::qWaitForWindowActive(&form));
    form.programEdit()->setFocus();
    const std::vector<QWidget*> order = {form.argumentsEdit(),        form.interpreterEdit(),
                                         form.workingDirectoryEdit(), form.environmentEdit(),
                                         form.outputEdit(),           form.configEdit()};
    for (QWidget* expected : order) {
        QTest::keyClick(QApplication::focusWidget(), Qt::Key_Tab);
        ASSERT_EQ(QApplication::focusWidget(), expected)
            << (QApplication::focusWidget() ? QApplication::focusWidget()->metaObject()->className()
                                            : "nothing");
    }
}

// The form filled with the last launch (the demo's config writes every op's tensors) says what
// its config dumps, and its arguments and config go with that program only: typing another
// program ran it with the demo's config (1.6 GB in 40 s) and arguments without a word.
TEST(LaunchForm, AConfigFilledInFollowsItsProgramAndIsDescribed) {
    test::TempDir dir("ui-launch");
    test::writeFile(dir / "train.py", "print('hi')\n");
    test::writeFile(dir / "other.py", "print('hi')\n");
    test::writeFile(dir / "heavy.json", R"({"task": "all", "dump_enable": true,
        "exec_range": "all", "save_child": true})");
    test::writeFile(dir / "light.json", R"({"task": "statistics", "dump_enable": true,
        "exec_range": "0,3", "ids": "1"})");
    widgets::LaunchForm form;
    form.show();
    session::LaunchSpec last =
        session::launchSpecFromCommand({"/usr/bin/python3", "train.py", "--tokens", "3"});
    last.workingDirectory = QString::fromStdString(dir.path());
    last.configPath = QString::fromStdString(dir / "heavy.json");
    form.setSpec(last);
    EXPECT_TRUE(
        form.configSummary().startsWith("heavy.json: tensors and statistics — dumps every "
                                        "op. Tensors take room fast"))
        << form.configSummary().toStdString();
    EXPECT_TRUE(form.commandLine().contains("--config " + last.configPath));

    typeInto(form.programEdit(), "other.py");
    EXPECT_TRUE(form.argumentsEdit()->text().isEmpty()) << form.commandLine().toStdString();
    EXPECT_TRUE(form.configEdit()->text().isEmpty()) << form.configEdit()->text().toStdString();
    EXPECT_TRUE(form.configSummary().isEmpty()) << form.configSummary().toStdString();
    EXPECT_FALSE(form.commandLine().contains("--config")) << form.commandLine().toStdString();
    typeInto(form.programEdit(), "train.py");  // back to the program it came with
    EXPECT_EQ(form.spec().configPath, last.configPath);
    EXPECT_EQ(form.spec().arguments, QStringList({"--tokens", "3"}));

    // Arguments and a config chosen here stay whatever the program.
    typeInto(form.argumentsEdit(), "--epochs 1");
    typeInto(form.configEdit(), "light.json");
    EXPECT_EQ(form.configSummary(), "light.json: statistics — 1 ticked op (id 1) in rounds 0 to 3");
    test::writeFile(dir / "some.json", R"({"task": "statistics", "dump_enable": true,
        "ids": "2,3_1,4,5", "op_name": "mlp", "save_child": true, "exec_range": "all"})");
    typeInto(form.configEdit(), "some.json");
    EXPECT_EQ(form.configSummary(),
              "some.json: statistics — 4 ticked ops (ids 2, 3_1, 4, …), 1 name prefix (mlp), with "
              "everything inside them");
    typeInto(form.programEdit(), "other.py");
    EXPECT_EQ(form.spec().configPath.toStdString(), dir / "some.json");
    EXPECT_EQ(form.spec().arguments, QStringList({"--epochs", "1"}));
    EXPECT_TRUE(form.problem().isEmpty()) << form.problem().toStdString();
    typeInto(form.configEdit(), "nothing.json");  // unreadable: the problem says so, not this
    EXPECT_TRUE(form.configSummary().isEmpty()) << form.configSummary().toStdString();
}

// An invalid config and an output folder that cannot be made keep Launch disabled, the config's
// problems worded by the format library, as `probe config validate` words them.
TEST(LaunchForm, RefusesAnInvalidConfigAndAnOutputFolderThatCannotBeMade) {
    test::TempDir dir("ui-launch");
    test::writeFile(dir / "train.py", "print('hi')\n");
    const std::string bad = R"({"task":"bogus","dump_enable":"yes"})";
    test::writeFile(dir / "bad.json", bad);
    test::writeFile(dir / "good.json",
                    R"({"task": "statistics", "dump_enable": true, "exec_range": "all"})");
    test::writeFile(dir / "afile", "");
    widgets::LaunchForm form;
    session::LaunchSpec spec = session::launchSpecFromCommand({"/usr/bin/python3", "train.py"});
    spec.workingDirectory = QString::fromStdString(dir.path());
    spec.outputDirectory = "/proc/nope";
    spec.configPath = QString::fromStdString(dir / "bad.json");
    form.setSpec(spec);
    const auto issues = format::parseOpConfig(bad, dir / "bad.json").issues;
    ASSERT_GE(issues.size(), 2u);  // the task and dump_enable
    for (const auto& issue : issues)
        EXPECT_TRUE(form.problem().contains(QString::fromStdString(issue.toString())))
            << form.problem().toStdString();
    EXPECT_TRUE(form.problem().contains("The output folder /proc/nope cannot be created in /proc"))
        << form.problem().toStdString();
    EXPECT_FALSE(form.launchButton()->isEnabled());
    EXPECT_FALSE(form.spec().problem().isEmpty());  // what a launch checks before it starts

    typeInto(form.configEdit(), QString::fromStdString(dir / "good.json"));
    EXPECT_FALSE(form.problem().contains("not valid")) << form.problem().toStdString();
    EXPECT_FALSE(form.launchButton()->isEnabled());
    typeInto(form.outputEdit(), QString::fromStdString(dir / "afile/out"));
    EXPECT_TRUE(form.problem().contains("is not a folder")) << form.problem().toStdString();
    EXPECT_FALSE(form.launchButton()->isEnabled());
    // A folder that can be made: fine, and the check leaves nothing behind.
    typeInto(form.outputEdit(), QString::fromStdString(dir / "new/out"));
    EXPECT_TRUE(form.problem().isEmpty()) << form.problem().toStdString();
    EXPECT_TRUE(form.launchButton()->isEnabled());
    EXPECT_EQ(QDir(QString::fromStdString(dir.path()))
                  .entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot),
              QStringList({"afile", "bad.json", "good.json", "train.py"}));
}

TEST(StartPage, OffersTheDemoAndTheRecentSessions) {
    session::RecentSessions recent;
    recent.clear();
    widgets::StartPage page(&recent);
    page.resize(1000, 700);
    page.show();
    EXPECT_FALSE(page.recentList()->isVisibleTo(&page));  // nothing yet
    session::RecentSession opened;
    opened.kind = session::RecentSession::Kind::Open;
    opened.path = "/dumps/one";
    recent.add(opened);
    session::RecentSession launched;
    launched.kind = session::RecentSession::Kind::Launch;
    launched.launch =
        session::launchSpecFromCommand({"/usr/bin/python3", "train.py", "--epochs", "2"});
    launched.path = "/runs/x/atb_dump_data";
    recent.add(launched);
    ASSERT_EQ(page.recentList()->count(), 2);  // follows the list as it changes
    EXPECT_TRUE(page.recentList()->isVisibleTo(&page));
    EXPECT_TRUE(
        page.recentList()->item(0)->text().startsWith("python3 train.py --epochs 2\nlaunched "))
        << page.recentList()->item(0)->text().toStdString();
    EXPECT_TRUE(page.recentList()->item(1)->text().startsWith("/dumps/one\nopened "));
    QSignalSpy activated(&page, &widgets::StartPage::recentActivated);
    page.activateRecent(1);
    ASSERT_EQ(activated.count(), 1);
    EXPECT_EQ(activated.at(0).at(0).value<session::RecentSession>().path, "/dumps/one");

    QSignalSpy demo(&page, &widgets::StartPage::launchDemoRequested);
    QTest::mouseClick(page.demoButton(), Qt::LeftButton);
    EXPECT_EQ(demo.count(), 1);
    page.setDemoAvailable(false, "not installed");
    EXPECT_FALSE(page.demoButton()->isEnabled());
    recent.clear();
    EXPECT_EQ(page.recentList()->count(), 0);
}

// The model's standard error is coloured by what each line says, not all red: errors red,
// warnings orange, the rest (the probe's summary among it) in the text colour.
TEST(SessionPanel, StandardErrorIsColouredByLevel) {
    widgets::SessionPanel panel;
    panel.appendLog(
        "probe run: probe_native_engine exited with 0\ndump: /x/atb_dump_data (complete)\n"
        "  no NaN or Inf in any statistic\n[probe] warning: the disk is almost full\n",
        true);
    panel.appendLog("Traceback (most recent call last):\nValueError: bad shape\nhalf a li", true);
    panel.appendLog("ne\n", true);
    auto colourOf = [&](const QString& line) {
        for (QTextBlock block = panel.log()->document()->begin(); block.isValid();
             block = block.next())
            if (block.text() == line)
                return block.begin().fragment().charFormat().foreground().color();
        ADD_FAILURE() << "no line " << line.toStdString() << " in\n"
                      << panel.log()->toPlainText().toStdString();
        return QColor();
    };
    const QColor text = panel.log()->palette().color(QPalette::Text);
    const QColor red(170, 30, 30);
    auto isText = [&](const QColor& c) {
        return c == text || c == QColor(Qt::black) || !c.isValid();
    };
    EXPECT_TRUE(isText(colourOf("  no NaN or Inf in any statistic")))
        << colourOf("  no NaN or Inf in any statistic").name().toStdString();
    EXPECT_TRUE(isText(colourOf("probe run: probe_native_engine exited with 0")));
    EXPECT_NE(colourOf("[probe] warning: the disk is almost full"), red);
    EXPECT_FALSE(isText(colourOf("[probe] warning: the disk is almost full")));
    EXPECT_EQ(colourOf("Traceback (most recent call last):"), red);
    EXPECT_EQ(colourOf("ValueError: bad shape"), red);
    EXPECT_TRUE(isText(colourOf("half a line"))) << "a line written in two pieces is one line";
}

// The application's notes and standard error's lines start lines of their own after part of a
// line of standard output ("prompt:[sleeping] the probe stopped"); the rest of that line follows.
TEST(SessionPanel, NotesAndErrorLinesDoNotJoinAPartLineOfOutput) {
    widgets::SessionPanel panel;
    panel.appendLog("prompt:", false);
    panel.appendNote("[sleeping] the probe stopped\n");
    panel.appendLog(" [203, 34]\nnext", false);
    panel.appendLog("warning: slow\n", true);
    panel.appendLog(" line\n", false);
    EXPECT_EQ(panel.log()->toPlainText(),
              "prompt:\n[sleeping] the probe stopped\n [203, 34]\nnext\nwarning: slow\n line\n");
}

// The log follows the output, also after the panel was made smaller (the end moved away from
// where the bar was, and the log stopped following: found by a GUI walk), and stops following
// while the user has scrolled up, until they are back at the end.
TEST(SessionPanel, TheLogFollowsTheOutputUnlessTheUserScrolledUp) {
    widgets::SessionPanel panel;
    panel.resize(700, 400);
    panel.show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(&panel));
    QScrollBar* bar = panel.log()->verticalScrollBar();
    auto lines = [&](int from, int count) {
        for (int i = from; i < from + count; ++i)
            panel.appendLog(QStringLiteral("line %1\n").arg(i), false);
        QCoreApplication::processEvents();
    };
    lines(0, 200);
    ASSERT_GT(bar->maximum(), 0);
    EXPECT_EQ(bar->value(), bar->maximum());
    const int tall = panel.log()->height();
    panel.resize(700, 250);  // the window made smaller: the end moves
    ASSERT_TRUE(waitFor([&] { return panel.log()->height() < tall - 100; }))
        << panel.log()->height() << " of " << tall;
    lines(200, 5);
    EXPECT_EQ(bar->value(), bar->maximum()) << bar->value() << " of " << bar->maximum();
    panel.resize(700, 400);
    ASSERT_TRUE(waitFor([&] { return panel.log()->height() == tall; }));
    lines(205, 5);
    EXPECT_EQ(bar->value(), bar->maximum()) << bar->value() << " of " << bar->maximum();
    // The user scrolls up: what they read stays where it is.
    bar->triggerAction(QAbstractSlider::SliderPageStepSub);
    QCoreApplication::processEvents();
    const int reading = bar->value();
    ASSERT_LT(reading, bar->maximum());
    lines(210, 5);
    EXPECT_EQ(bar->value(), reading);
    // Back at the end: it follows again.
    bar->triggerAction(QAbstractSlider::SliderToMaximum);
    QCoreApplication::processEvents();
    lines(215, 5);
    EXPECT_EQ(bar->value(), bar->maximum());
}

// A long line (the command the session ran, a long path in a traceback) wraps at the log's width
// as a terminal's does: it was cut at the panel's edge, read only by scrolling sideways.
TEST(SessionPanel, LongLinesWrapAtTheLogsWidth) {
    widgets::SessionPanel panel;
    panel.resize(400, 300);
    panel.show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(&panel));
    const QString command =
        "$ probe run --output /home/someone/runs/llama-20261206-153000 "
        "--config /home/someone/configs/every_op.json -- python3 train.py";
    panel.appendNote(command);
    panel.appendLog(command + " and its output\n", false);
    QCoreApplication::processEvents();
    EXPECT_EQ(panel.log()->horizontalScrollBar()->maximum(), 0);
    QTextBlock block = panel.log()->document()->begin();
    ASSERT_TRUE(block.isValid());
    ASSERT_NE(block.layout(), nullptr);
    EXPECT_GT(block.layout()->lineCount(), 1) << "wrapped onto more lines";
}

// Without XDG_RUNTIME_DIR the probes of a desktop session cannot be found: the attach dialog
// says so (where it matters), not every start.
TEST(AttachDialog, SaysWhenTheRuntimeDirectoryMatters) {
    test::TempDir sockets("probe-sockets");
    const QByteArray saved = qgetenv("XDG_RUNTIME_DIR");
    qunsetenv("XDG_RUNTIME_DIR");
    qunsetenv("PROBE_CONTROL_DIR");
    {
        widgets::AttachDialog dialog;
        bool said = false;
        for (auto* label : dialog.findChildren<QLabel*>())
            said = said || label->text().contains("XDG_RUNTIME_DIR is not set");
        EXPECT_TRUE(said);
    }
    qputenv("PROBE_CONTROL_DIR",
            QByteArray::fromStdString(
                sockets.path()));  // a folder named: the runtime directory does not matter
    ::chmod(sockets.path().c_str(), 0700);
    {
        widgets::AttachDialog dialog;
        const auto labels = dialog.findChildren<QLabel*>();
        EXPECT_FALSE(labels.isEmpty());  // not ASSERT: the environment is restored below
        for (auto* label : labels)
            EXPECT_FALSE(label->text().contains("XDG_RUNTIME_DIR")) << label->text().toStdString();
    }
    qunsetenv("PROBE_CONTROL_DIR");
    if (!saved.isEmpty()) qputenv("XDG_RUNTIME_DIR", saved);
}

// --- the main window with live probes ---------------------------------------------------------

class LiveWindowTest : public ::testing::Test {
protected:
    void SetUp() override {
        ::setenv("PROBE_CONTROL_DIR", sockets_.path().c_str(), 1);
        ::chmod(sockets_.path().c_str(), 0700);
        test::writeFile(dir_ / "config.json",
                        R"({"task": "statistics", "dump_enable": true, "exec_range": "all"})");
        context_.setProbeExecutable(PROBE_CLI);
        context_.setDataDirectory(PROBE_DATADIR);
        context_.store()->setIdlePollInterval(100);
        window_.resize(1400, 900);
        window_.show();
    }
    void TearDown() override {
        if (engine_.state() != QProcess::NotRunning) {
            engine_.kill();
            engine_.waitForFinished(5000);
        }
        ::unsetenv("PROBE_CONTROL_DIR");
    }
    session::LaunchSpec engineSpec(int rounds, int sleepMs) {
        session::LaunchSpec spec;
        spec.program = PROBE_NATIVE_ENGINE;
        spec.arguments = {"--rounds", QString::number(rounds), "--sleep-ms",
                          QString::number(sleepMs)};
        spec.outputDirectory = QString::fromStdString(dir_ / "out");
        spec.configPath = QString::fromStdString(dir_ / "config.json");
        return spec;
    }
    size_t rounds() const {
        const auto& idx = context_.store()->index();
        return idx.processCount() > 0 ? idx.rounds(0).size() : 0;
    }
    const analysis::DumpIndex::Op& op(const std::string& id) const {
        const auto& idx = context_.store()->index();
        return idx.op(idx.findOp(0, id));
    }

    test::TempDir dir_{"ui-live"}, sockets_{"probe-sockets"};
    context::AppContext context_;
    MainWindow window_{&context_};
    QProcess engine_;
};

TEST_F(LiveWindowTest, LaunchedModelFillsTheTreeAndPlotsAndFollowsAPushedConfig) {
    ASSERT_TRUE(context_.launch(engineSpec(100000, 10)));
    EXPECT_EQ(window_.page(), MainWindow::Page::Workspace);
    auto* panel = window_.sessionPanel();
    ASSERT_TRUE(panel->isVisibleTo(&window_));
    // The dump opens as the model starts and fills the tree and the plot while it runs.
    window_.showView(MainWindow::View::Plot);
    ASSERT_TRUE(waitFor([&] {
        return rounds() >= 3 && context_.cursor()->op() != analysis::kNone;
    })) << panel->log()->toPlainText().toStdString();
    EXPECT_EQ(context_.store()->root().toStdString(), dir_ / "out/atb_dump_data");
    EXPECT_EQ(window_.treePanel()->model()->rowCount(),
              4);  // WordEmbedding, two decoder layers, LmHead
    ASSERT_TRUE(waitFor([&] {
        return !window_.statisticsPlot()->series().isEmpty() &&
               window_.statisticsPlot()->series()[0].x.size() >= 3;
    }));
    EXPECT_EQ(panel->stateText(), "dumping");
    EXPECT_TRUE(window_.statusText().contains("running")) << window_.statusText().toStdString();
    EXPECT_TRUE(panel->log()->toPlainText().contains("probe attached"))
        << panel->log()->toPlainText().toStdString();

    // The editor holds the probe's config file, in force.
    auto* editor = window_.configEditor();
    auto* document = context_.configDocument();
    ASSERT_TRUE(
        waitFor([&] { return document->filePath().toStdString() == dir_ / "config.json"; }));
    EXPECT_TRUE(editor->inForceText().contains("has in force"))
        << editor->inForceText().toStdString();

    // Only decoder layer 1 from now on: typed in the form, applied, answered by the probe.
    window_.showView(MainWindow::View::Config);
    typeInto(editor->field("ids"), "1");
    EXPECT_TRUE(editor->inForceText().contains("Not in force"))
        << editor->inForceText().toStdString();
    EXPECT_TRUE(context_.selection()->isTicked("1"));  // the tree shows the tick
    QTest::mouseClick(editor->applyButton(), Qt::LeftButton);
    ASSERT_TRUE(waitFor([&] { return editor->applyStatus().startsWith("Applied by the probe"); }))
        << editor->applyStatus().toStdString();
    EXPECT_TRUE(editor->inForceText().contains("has in force"));
    EXPECT_EQ(format::loadOpConfigFile(dir_ / "config.json").config->ids,
              (std::vector<std::string>{"1"}));

    // The dump follows: the embedding's rows stop (the probe may be some rounds ahead of what
    // the window has read when its answer comes), layer 1's go on.
    const int32_t readAtApply = static_cast<int32_t>(rounds()) - 1;
    // Fetched afresh each time: the index's ops may move as it grows.
    auto roundsOf = [&](const std::string& id) { return op(id).rounds; };
    auto lastRound = [&] { return context_.store()->index().rounds(0).back(); };
    ASSERT_TRUE(waitFor([&] { return lastRound() >= roundsOf("0").back() + 3; }))
        << "rows of op 0 still written after the config dropped it";
    const int32_t embeddingLast = roundsOf("0").back();
    EXPECT_GE(embeddingLast, readAtApply);  // dumped until the config changed
    const std::vector<int32_t> layerRounds = roundsOf("1");
    for (int32_t r = embeddingLast + 1; r <= lastRound(); ++r)
        EXPECT_TRUE(std::binary_search(layerRounds.begin(), layerRounds.end(), r))
            << "no row of op 1 in round " << r;

    // Stop ends the model; the panel says how.
    QTest::mouseClick(panel->stopButton(), Qt::LeftButton);
    ASSERT_TRUE(waitFor([&] { return context_.liveSession()->hasEnded(); }));
    EXPECT_EQ(panel->stateText(), "stopped by you");  // not a crash
    // "Dumping follows it from the next layer-level op" goes with the probe (it stayed, in
    // green, above "Not the config that was in force": a GUI walk).
    EXPECT_FALSE(editor->applyStatus().startsWith("Applied by the probe"))
        << editor->applyStatus().toStdString();
    EXPECT_FALSE(panel->stopButton()->isEnabled());
    // Nothing is in force now: the editor says what was.
    const QString ended =
        QStringLiteral("This is the config that was in force when the probe (pid %1) ended.")
            .arg(context_.liveSession()->probePid());
    EXPECT_TRUE(editor->inForceText().contains(ended)) << editor->inForceText().toStdString();
    ASSERT_TRUE(waitFor([&] { return context_.store()->dumpState() == "complete"; }));
    // It is a recent session now, to launch again.
    const auto recent = context_.recentSessions()->list();
    ASSERT_FALSE(recent.isEmpty());
    EXPECT_EQ(recent[0].kind, session::RecentSession::Kind::Launch);
    EXPECT_EQ(recent[0].launch.program, PROBE_NATIVE_ENGINE);

    // Another dump opened: the editor no longer holds the stopped run's file, and Apply does
    // not write it (it wrote ticks made on the other dump into that run's config).
    const std::string before = test::readFile(dir_ / "config.json");
    context_.openDump(QString::fromStdString(dir_ / "out"));
    ASSERT_TRUE(waitFor([&] { return context_.liveSession() == nullptr; }));
    EXPECT_TRUE(document->filePath().isEmpty()) << document->filePath().toStdString();
    EXPECT_TRUE(editor->applyStatus().isEmpty()) << editor->applyStatus().toStdString();
    // It shows the config the dump was made with as a copy of the run's record beside it (probe
    // run keeps one with --config too), not the editor's last document carried over as a "new
    // config" (it said "new config" with the run's ids "1" ticked, taken from no file).
    const std::string record = dir_ / "out/probe_config.json";
    EXPECT_EQ(document->origin().toStdString(), record);
    EXPECT_EQ(document->text().toStdString(), test::readFile(record));
    EXPECT_EQ(test::readFile(record), before);  // what the run ended with
    EXPECT_TRUE(context_.selection()->isTicked("1"));
    EXPECT_TRUE(editor->apply(QString::fromStdString(dir_ / "other.json")))
        << editor->applyStatus().toStdString();
    EXPECT_TRUE(editor->applyStatus().contains("other.json"))
        << editor->applyStatus().toStdString();
    EXPECT_EQ(test::readFile(dir_ / "config.json"), before);
}

// Edits of a run's config that were not applied, when another dump replaces the run: kept as a
// new config, said, the run's file untouched (they went without a word).
TEST_F(LiveWindowTest, UnappliedEditsOfARunsConfigAreKeptWhenAnotherDumpOpens) {
    ASSERT_TRUE(context_.launch(engineSpec(100000, 10)));
    auto* editor = window_.configEditor();
    auto* document = context_.configDocument();
    const QString runConfig = QString::fromStdString(dir_ / "config.json");
    ASSERT_TRUE(waitFor([&] { return document->filePath() == runConfig; }));
    ASSERT_TRUE(waitFor([&] { return rounds() >= 1; }));
    const std::string before = test::readFile(dir_ / "config.json");
    window_.showView(MainWindow::View::Config);
    typeInto(editor->field("ids"), "1");
    ASSERT_TRUE(document->isModified());
    const QString edited = document->text();

    test::TempDir other("ui-live");
    test::writeSmallSyntheticDump(other.path());
    ASSERT_TRUE(context_.openDump(QString::fromStdString(other.path())));
    ASSERT_TRUE(waitFor([&] { return context_.liveSession() == nullptr; }));
    EXPECT_EQ(document->text(), edited);
    EXPECT_TRUE(document->filePath().isEmpty()) << document->filePath().toStdString();
    EXPECT_EQ(document->origin(), runConfig);
    EXPECT_TRUE(document->isModified());
    EXPECT_TRUE(context_.selection()->isTicked("1"));
    EXPECT_TRUE(
        editor->applyStatus().startsWith("Your edits of " + runConfig + " were not applied"))
        << editor->applyStatus().toStdString();
    // The ticks are ids of the run's model: said to be maybe other ops here.
    EXPECT_TRUE(editor->applyStatus().contains("Your edits tick ops by id (ids 1)"))
        << editor->applyStatus().toStdString();
    EXPECT_EQ(editor->fileText(), "new config, not written yet: a copy of " +
                                      QFileInfo(runConfig).dir().dirName() +
                                      "/config.json, edited");
    EXPECT_EQ(test::readFile(dir_ / "config.json"), before);
}

// A dump opened over a running model ("Stop it and go on"): the run's log stays in the Session
// panel, with how it ended, until another run starts (it went at once, the SIGTERM said only in
// probe_status.json).
TEST_F(LiveWindowTest, TheLogOfARunStoppedByOpeningADumpStaysWithHowItEnded) {
    ASSERT_TRUE(context_.launch(engineSpec(100000, 10)));
    auto* panel = window_.sessionPanel();
    ASSERT_TRUE(waitFor([&] { return rounds() >= 1; }));
    ASSERT_TRUE(waitFor([&] { return !panel->log()->toPlainText().isEmpty(); }));
    const QString before = panel->log()->toPlainText();

    test::TempDir other("ui-live");
    test::writeSmallSyntheticDump(other.path());
    ASSERT_TRUE(context_.openDump(QString::fromStdString(other.path())));
    ASSERT_TRUE(waitFor([&] { return context_.liveSession() == nullptr; }));
    EXPECT_TRUE(panel->log()->toPlainText().startsWith(before));
    EXPECT_TRUE(panel->log()->toPlainText().contains("The window shows another dump now"));
    EXPECT_TRUE(panel->stateText().startsWith("last run: ")) << panel->stateText().toStdString();
    ASSERT_TRUE(waitFor([&] { return panel->stateText() == "last run: stopped by you"; }))
        << panel->stateText().toStdString();
    EXPECT_FALSE(panel->stopButton()->isEnabled());
    // Another dump keeps it; a new run starts its own log.
    ASSERT_TRUE(context_.openDump(QString::fromStdString(other.path())));
    EXPECT_EQ(panel->stateText(), "last run: stopped by you");
    EXPECT_TRUE(panel->log()->toPlainText().startsWith(before));
    session::LaunchSpec next = engineSpec(1, 0);
    next.outputDirectory = QString::fromStdString(dir_ / "out2");
    ASSERT_TRUE(context_.launch(next));
    EXPECT_FALSE(panel->log()->toPlainText().contains("The window shows another dump now"));
    EXPECT_FALSE(panel->stateText().startsWith("last run")) << panel->stateText().toStdString();
}

// Ops ticked in an opened dump's config copy, not applied, when a launch replaces the dump: kept
// as a new config and said, for Apply to give the probe (the launch's config replaced them
// without a word, although opening another dump keeps them).
TEST_F(LiveWindowTest, UnappliedEditsOfADumpsConfigAreKeptWhenALaunchReplacesIt) {
    test::TempDir other("ui-live");
    test::writeSmallSyntheticDump(other.path());
    ASSERT_TRUE(context_.openDump(QString::fromStdString(other.path())));
    ASSERT_TRUE(waitFor([&] { return context_.store()->index().opCount() > 0; }));
    auto* editor = window_.configEditor();
    auto* document = context_.configDocument();
    window_.showView(MainWindow::View::Config);
    typeInto(editor->field("ids"), "1");
    ASSERT_TRUE(document->isModified());
    const QString edited = document->text();

    ASSERT_TRUE(context_.launch(engineSpec(100000, 10)));
    ASSERT_TRUE(waitFor([&] { return context_.liveSession()->hello().has_value(); }));
    ASSERT_TRUE(waitFor([&] { return rounds() >= 1; }));
    EXPECT_EQ(document->text(), edited);
    EXPECT_TRUE(document->isModified());
    EXPECT_TRUE(document->filePath().isEmpty()) << document->filePath().toStdString();
    EXPECT_TRUE(context_.selection()->isTicked("1"));
    EXPECT_TRUE(editor->applyStatus().startsWith("Your edits were not applied"))
        << editor->applyStatus().toStdString();
    EXPECT_TRUE(editor->applyStatus().contains("Check the ticks in the op tree before Apply"))
        << editor->applyStatus().toStdString();
    EXPECT_TRUE(editor->inForceText().contains("Not in force"))
        << editor->inForceText().toStdString();
    // Apply gives them to the launched probe, which follows them.
    EXPECT_TRUE(editor->apply()) << editor->applyStatus().toStdString();
    ASSERT_TRUE(waitFor([&] { return editor->applyStatus().startsWith("Applied by the probe"); }))
        << editor->applyStatus().toStdString();
    const auto written = format::parseOpConfig(test::readFile(dir_ / "config.json"), "config");
    ASSERT_TRUE(written.config);
    EXPECT_EQ(written.config->ids, std::vector<std::string>{"1"});
}

// Stop, for a model that ignores SIGTERM: after the grace period the model is killed, not only
// probe run (which relays the model's output, so the model would run on without it).
TEST_F(LiveWindowTest, StopKillsAModelThatIgnoresSigtermAfterTheGracePeriod) {
    session::LaunchSpec spec = engineSpec(100000, 10);
    spec.arguments << QStringLiteral("--ignore-sigterm");
    ASSERT_TRUE(context_.launch(spec));
    auto* live = context_.liveSession();
    ASSERT_TRUE(waitFor([&] { return live->hello().has_value(); }));
    const pid_t model = static_cast<pid_t>(live->hello()->pid);
    ASSERT_GT(model, 0);
    live->stop();
    ASSERT_TRUE(waitFor([&] { return live->hasEnded(); }, 30000));
    // Gone, or a zombie waiting for whoever adopted it.
    const auto running = [&] {
        std::ifstream in("/proc/" + std::to_string(model) + "/stat");
        std::string stat;
        std::getline(in, stat);
        const size_t close = stat.rfind(')');
        return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
    };
    EXPECT_TRUE(waitFor([&] { return !running(); }, 30000));
}

// A launch without a config after a dump was opened: the Config tab shows what probe run follows
// then, its starting point, not the copy of the opened dump's config (a run that ended before
// its probe said hello left it there, read as the run's: "dumps every op").
TEST_F(LiveWindowTest, ALaunchWithoutAConfigShowsTheDefaultNotTheOpenedDumps) {
    test::TempDir other("ui-live");
    const auto written = test::writeSmallSyntheticDump(other.path());
    const QString dumpsConfig =
        QFileInfo(QString::fromStdString(written.root)).dir().absoluteFilePath("probe_config.json");
    test::writeFile(dumpsConfig.toStdString(),
                    R"({"task": "tensor", "dump_enable": true, "save_child": true})");
    ASSERT_TRUE(context_.openDump(QString::fromStdString(other.path())));
    auto* document = context_.configDocument();
    ASSERT_EQ(document->origin(), dumpsConfig);  // the precondition: the dump's copy is shown
    session::LaunchSpec spec = engineSpec(1, 0);
    spec.program = QStringLiteral("/bin/true");  // ends at once, no probe ever says hello
    spec.arguments.clear();
    spec.configPath.clear();
    ASSERT_TRUE(context_.launch(spec));
    ASSERT_TRUE(waitFor([&] { return context_.liveSession()->hasEnded(); }));
    EXPECT_NE(document->origin(), dumpsConfig);
    EXPECT_FALSE(document->isModified());
    ASSERT_TRUE(document->opConfig());
    EXPECT_EQ(*document->opConfig(), format::OpConfig::startingPoint());
}

// A launch without a config of the user's: `probe run` writes the run's record beside its dump
// (out/probe_config.json), the config the probe follows. Once the model has ended, ticks applied
// go to another file, never into that record (they did: its "ids" said a layer the run never
// singled out).
TEST_F(LiveWindowTest, ApplyAfterTheModelEndedLeavesTheRunsRecordAlone) {
    session::LaunchSpec spec = engineSpec(20, 20);
    spec.configPath.clear();
    ASSERT_TRUE(context_.launch(spec));
    auto* editor = window_.configEditor();
    auto* document = context_.configDocument();
    const QString record = QString::fromStdString(dir_ / "out/probe_config.json");
    ASSERT_TRUE(waitFor([&] { return context_.liveSession()->hello().has_value(); }));
    ASSERT_TRUE(waitFor([&] { return context_.liveSession()->hasEnded(); }));
    ASSERT_EQ(context_.liveSession()->exitCode(), 0);
    ASSERT_TRUE(QFileInfo(record).isFile());
    const std::string before = test::readFile(record.toStdString());
    // A copy of the record, said to be what was in force.
    EXPECT_TRUE(document->filePath().isEmpty()) << document->filePath().toStdString();
    EXPECT_EQ(document->origin(), record);
    EXPECT_EQ(document->text().toStdString(), before);
    EXPECT_TRUE(editor->inForceText().contains("This is the config that was in force"))
        << editor->inForceText().toStdString();

    window_.showView(MainWindow::View::Config);
    typeInto(editor->field("ids"), "1");
    const QString other = QString::fromStdString(dir_ / "other.json");
    ASSERT_TRUE(editor->apply(other)) << editor->applyStatus().toStdString();
    EXPECT_TRUE(editor->applyStatus().startsWith("Written to " + other))
        << editor->applyStatus().toStdString();
    EXPECT_EQ(format::loadOpConfigFile(other.toStdString()).config->ids,
              (std::vector<std::string>{"1"}));
    EXPECT_EQ(test::readFile(record.toStdString()), before);
}

// A run with a config of the user's (probe run --config) keeps a copy of it beside its dump as its
// record, as a run without one keeps its probe_config.json: a window opening the dump later shows
// the config it was made with (it said "new config": the copy of a config made up). The user's
// file is never written to; a record already there is kept by --append.
TEST_F(LiveWindowTest, ARunWithAConfigOfTheUsersKeepsItsRecordForTheApp) {
    const std::string mine = dir_ / "config.json";
    test::writeFile(mine, "{\"task\": \"statistics\", \"dump_enable\": true, \"ids\": \"1\"}\n");
    const std::string given = test::readFile(mine);
    ASSERT_TRUE(context_.launch(engineSpec(2, 0)));
    ASSERT_TRUE(waitFor([&] { return context_.liveSession()->hasEnded(); }));
    ASSERT_EQ(context_.liveSession()->exitCode(), 0);
    const std::string record = dir_ / "out/probe_config.json";

    context::AppContext later;
    MainWindow window(&later);
    QSignalSpy loaded(&later, &context::AppContext::sessionLoaded);
    later.openDump(QString::fromStdString(dir_ / "out"));
    ASSERT_TRUE(waitFor([&] { return loaded.count() > 0; }));
    ASSERT_TRUE(loaded.front().front().toBool());
    EXPECT_EQ(later.configDocument()->origin().toStdString(), record);
    EXPECT_EQ(later.configDocument()->text().toStdString(), given);
    EXPECT_TRUE(later.selection()->isTicked("1"));
    EXPECT_TRUE(window.treePanel()->configText().startsWith(
        "Config: new config from out/probe_config.json — 1 ticked op"))
        << window.treePanel()->configText().toStdString();
    ASSERT_TRUE(QFileInfo(QString::fromStdString(record)).isFile());
    EXPECT_EQ(test::readFile(record), given);
    EXPECT_EQ(test::readFile(mine), given);

    // Another run added to the folder with another config: the record of the first stays.
    const std::string second = dir_ / "second.json";
    test::writeFile(second, R"({"task": "statistics", "dump_enable": true, "exec_range": "all"})");
    session::LaunchSpec spec = engineSpec(1, 0);
    spec.configPath = QString::fromStdString(second);
    spec.appendToDump = true;
    ASSERT_TRUE(context_.launch(spec));
    ASSERT_TRUE(waitFor([&] { return context_.liveSession()->hasEnded(); }));
    ASSERT_EQ(context_.liveSession()->exitCode(), 0);
    EXPECT_EQ(test::readFile(record), given);
    EXPECT_TRUE(window_.sessionPanel()->log()->toPlainText().contains(
        QString::fromStdString(record) + " was there before this run and is kept"))
        << window_.sessionPanel()->log()->toPlainText().toStdString();
}

// The record follows the user's config edited while the program ran, as a run's own
// probe_config.json does: it says what the run ended with.
TEST_F(LiveWindowTest, TheRecordOfAConfigOfTheUsersSaysWhatTheRunEndedWith) {
    const std::string mine = dir_ / "config.json";
    ASSERT_TRUE(context_.launch(engineSpec(100000, 10)));
    ASSERT_TRUE(waitFor([&] { return context_.liveSession()->hello().has_value(); }));
    const std::string record = dir_ / "out/probe_config.json";
    ASSERT_EQ(test::readFile(record), test::readFile(mine));
    const std::string edited = R"({"task": "statistics", "dump_enable": true, "ids": "2"})";
    test::writeFile(mine, edited);
    context_.liveSession()->stop();
    ASSERT_TRUE(waitFor([&] { return context_.liveSession()->hasEnded(); }));
    EXPECT_EQ(test::readFile(record), edited);
    EXPECT_EQ(test::readFile(mine), edited);
}

// A program that ends before anything is dumped: the status bar says so, with the exit code,
// and no longer that it waits for the probe.
TEST_F(LiveWindowTest, AProgramThatEndsBeforeDumpingIsNotWaitedFor) {
    session::LaunchSpec spec = engineSpec(0, 0);
    spec.program = "/bin/sh";
    spec.arguments = {"-c", "echo boom; exit 3"};
    ASSERT_TRUE(context_.launch(spec));
    ASSERT_TRUE(waitFor([&] { return context_.liveSession()->hasEnded(); }));
    const QString ended =
        "The program ended (exited with code 3) before the probe dumped anything.";
    ASSERT_TRUE(waitFor([&] { return window_.statusText() == ended; }))
        << window_.statusText().toStdString();
    EXPECT_EQ(window_.sessionPanel()->stateText(), "failed, exit code 3");
    EXPECT_TRUE(window_.sessionPanel()->log()->toPlainText().contains("boom"));
    // The config tab holds the launch's config though no probe said hello (it showed a new one).
    EXPECT_EQ(context_.configDocument()->filePath(), spec.configPath);
    EXPECT_EQ(context_.configDocument()->text().toStdString(),
              test::readFile(spec.configPath.toStdString()));
}

TEST_F(LiveWindowTest, RowsShowSoonAfterTheProbeSaysSoHoweverLongTheModelWasQuiet) {
    // Polling the folder backs off while nothing changes (up to the idle interval, long here);
    // the socket's rows_written doorbell makes the window read the folder at once: each round's
    // rows are shown before the model, quiet for seconds between rounds, writes the next one.
    context_.store()->setIdlePollInterval(60000);
    ASSERT_TRUE(context_.launch(engineSpec(3, 2500)));
    auto* live = context_.liveSession();
    ASSERT_TRUE(waitFor([&] { return live->canPushConfig(); }));
    int64_t toldRound = -1;         // the round of the latest doorbell
    std::set<int64_t> shownRounds;  // rounds whose rows the window had after their doorbell
    // Rounds checked when the next one was told (the first may be written before attaching).
    std::vector<int64_t> checked;
    QObject::connect(live->control(), &session::ControlClient::rowsWritten,
                     [&](const format::control::RowsWritten& written) {
                         if (written.round != toldRound && toldRound >= 0) {
                             EXPECT_TRUE(shownRounds.count(toldRound))
                                 << "round " << toldRound << " was not shown before round "
                                 << written.round << " was written";
                             checked.push_back(toldRound);
                         }
                         toldRound = written.round;
                     });
    QObject::connect(context_.store(), &data::DumpStore::changed,
                     [&](const analysis::IndexChange& change) {
                         if (change.newRows > 0 && toldRound >= 0) shownRounds.insert(toldRound);
                     });
    ASSERT_TRUE(waitFor([&] { return !checked.empty() && rounds() >= 3; }, 60000))
        << checked.size();
    ASSERT_FALSE(checked.empty());
    live->stop();
}

TEST_F(LiveWindowTest, ALaunchReplacesTheRunningModelWithoutWaitingForIt) {
    ASSERT_TRUE(context_.launch(engineSpec(100000, 10)));
    ASSERT_TRUE(waitFor([&] { return context_.liveSession()->canPushConfig(); }));
    const qint64 first = context_.liveSession()->probePid();
    QPointer<session::LiveSession> firstSession = context_.liveSession();
    session::LaunchSpec second = engineSpec(100000, 10);
    second.outputDirectory = QString::fromStdString(dir_ / "second");
    ASSERT_TRUE(context_.launch(second));
    // The first model is stopped in the background: launching did not wait for it to end.
    ASSERT_FALSE(firstSession.isNull());
    EXPECT_FALSE(firstSession->hasEnded())
        << session::sessionStateName(firstSession->state()).toStdString();
    ASSERT_TRUE(waitFor([&] { return test::processHasEnded(first); }))
        << "state " << test::processState(first);
    ASSERT_TRUE(waitFor([&] { return rounds() >= 2; }));
    EXPECT_EQ(context_.store()->root().toStdString(), dir_ / "second/atb_dump_data");
    EXPECT_EQ(window_.sessionPanel()->stateText(), "dumping");
    EXPECT_NE(context_.liveSession()->probePid(), first);
}

// A launch into a folder that holds an earlier run (--append) opens at its own process, not at
// the earlier run's (found by a GUI walk: the tree showed the process that had ended).
TEST_F(LiveWindowTest, ALaunchAddedToADumpOpensAtItsOwnProcess) {
    ASSERT_TRUE(context_.launch(engineSpec(2, 0)));
    ASSERT_TRUE(waitFor([&] { return context_.liveSession()->hasEnded(); }));
    session::LaunchSpec again = engineSpec(100000, 10);
    again.appendToDump = true;
    ASSERT_TRUE(context_.launch(again));
    ASSERT_TRUE(waitFor([&] { return context_.liveSession()->canPushConfig(); }));
    const QString pid = QString::number(context_.liveSession()->probePid());
    auto shownProcess = [&] {
        const auto& idx = context_.store()->index();
        const uint32_t op = context_.cursor()->op();
        return op == analysis::kNone ? QString()
                                     : QString::fromStdString(idx.process(idx.op(op).process).key);
    };
    ASSERT_TRUE(waitFor([&] { return context_.store()->index().processCount() == 2; }));
    // "<pid>", or "<device>_<pid>" when the device is known.
    EXPECT_TRUE(waitFor([&] {
        return shownProcess() == pid || shownProcess().endsWith("_" + pid);
    })) << shownProcess().toStdString()
        << ", not the live run's " << pid.toStdString();
    context_.liveSession()->stop();
}

TEST_F(LiveWindowTest, AttachesToARunningProbeAndDetaches) {
    engine_.start(PROBE_NATIVE_ENGINE, {"--output", QString::fromStdString(dir_ / "engine"),
                                        "--config", QString::fromStdString(dir_ / "config.json"),
                                        "--rounds", "100000", "--sleep-ms", "10"});
    session::LiveProbeInfo probe;
    ASSERT_TRUE(waitFor([&] {
        for (const auto& p : session::liveProbes())
            if (p.pid == engine_.processId()) probe = p;
        return probe.pid != 0;
    }));
    {
        // The attach dialog lists it, with its command line.
        widgets::AttachDialog dialog;
        ASSERT_TRUE(dialog.selectPid(engine_.processId()));
        EXPECT_EQ(dialog.selectedProbe().socketPath, probe.socketPath);
        EXPECT_TRUE(dialog.list()->currentItem()->text(1).contains("probe_native_engine"));
        // Refreshed while open (every second), the rows of probes still running stay as they
        // are: rebuilt, the row under the mouse, its tooltip and a double click begun went.
        const QPersistentModelIndex shown = dialog.list()->currentIndex();
        dialog.refresh();
        EXPECT_TRUE(shown.isValid());
        EXPECT_EQ(QModelIndex(shown), dialog.list()->currentIndex());
        EXPECT_EQ(dialog.selectedProbe().pid, engine_.processId());
    }
    context_.attach(probe);
    ASSERT_TRUE(waitFor([&] { return rounds() >= 2; }));
    EXPECT_EQ(context_.store()->root().toStdString(), dir_ / "engine/atb_dump_data");
    EXPECT_EQ(window_.sessionPanel()->stateText(), "dumping");
    EXPECT_EQ(window_.sessionPanel()->stopButton()->text(), "Detach");
    EXPECT_EQ(context_.configDocument()->filePath().toStdString(), dir_ / "config.json");
    const auto recent = context_.recentSessions()->list();
    ASSERT_FALSE(recent.isEmpty());
    EXPECT_EQ(recent[0].kind, session::RecentSession::Kind::Attach);
    EXPECT_EQ(recent[0].pid, engine_.processId());

    // Stopping dumping from the editor puts the probe to sleep; the panel shows it.
    window_.showView(MainWindow::View::Config);
    QCheckBox* enable = qobject_cast<QCheckBox*>(window_.configEditor()->field("dump_enable"));
    QTest::mouseClick(enable, Qt::LeftButton, {}, QPoint(6, enable->height() / 2));
    const QString logBefore = window_.sessionPanel()->log()->toPlainText();
    ASSERT_TRUE(window_.configEditor()->apply());
    ASSERT_TRUE(waitFor([&] { return window_.sessionPanel()->stateText() == "sleeping"; }));
    ASSERT_TRUE(waitFor(
        [&] { return window_.configEditor()->applyStatus().startsWith("Applied by the probe"); }));
    // Someone else writes a broken config file: the probe refuses it and keeps its config; the
    // editor and the log say so.
    test::replaceFile(dir_ / "config.json", R"({"task": "tensors"})");
    ASSERT_TRUE(waitFor([&] {
        return window_.configEditor()->applyStatus().contains(
            "refused a change of its config file");
    })) << window_.configEditor()->applyStatus().toStdString();
    // One apply, said once: the probe's watcher saw the file the probe wrote as it applied the
    // push before it saw this one, and said nothing of it.
    const QString log = window_.sessionPanel()->log()->toPlainText();
    const QString said =
        log.mid(logBefore.size(),
                log.indexOf("the probe refused a config", logBefore.size()) - logBefore.size());
    EXPECT_EQ(said.count("config applied") + said.count("applied a config"), 1)
        << said.toStdString();
    EXPECT_TRUE(window_.configEditor()->applyStatus().contains("\"tensors\" is not a valid value"));
    EXPECT_TRUE(
        window_.sessionPanel()->log()->toPlainText().contains("the probe refused a config"));
    EXPECT_EQ(window_.sessionPanel()->stateText(), "sleeping");

    // Detached while the status bar shows a passing message (as a comparison's verdict): the
    // session's state is not drawn over it, and shows once the message goes.
    window_.show();
    auto* sessionState = window_.statusBar()->findChild<QLabel*>("sessionState");
    ASSERT_NE(sessionState, nullptr);
    window_.statusBar()->showMessage("a passing message", 60000);
    QTest::mouseClick(window_.sessionPanel()->stopButton(), Qt::LeftButton);
    ASSERT_TRUE(waitFor([&] { return window_.sessionPanel()->stateText() == "detached"; }));
    EXPECT_TRUE(sessionState->text().contains("detached"));
    EXPECT_FALSE(sessionState->isVisible());
    window_.statusBar()->clearMessage();
    EXPECT_TRUE(sessionState->isVisible());
    // Detaching does not end the program: its probe still answers a new connection.
    session::ControlClient again;
    QSignalSpy greeted(&again, &session::ControlClient::hello);
    again.connectToProbe(probe.socketPath);
    ASSERT_TRUE(waitFor([&] { return greeted.count() > 0; }));
    EXPECT_EQ(engine_.state(), QProcess::Running);
}

TEST_F(LiveWindowTest, RecentSessionsAreTakenUpFromTheStartPage) {
    test::TempDir dump("ui-live");
    synthetic::SyntheticDumpOptions options;
    options.output = dump.path();
    options.ops = 20;
    options.rows = 100;
    synthetic::writeSyntheticDump(options);
    context_.openDump(QString::fromStdString(dump.path()));
    ASSERT_TRUE(
        waitFor([&] { return context_.store()->isOpen(); }));  // a folder is recent once it opened
    window_.showPage(MainWindow::Page::Start);
    auto* list = window_.startPage()->recentList();
    ASSERT_GE(list->count(), 1);
    EXPECT_TRUE(list->item(0)->text().startsWith(QString::fromStdString(dump.path())));
    context_.store()->close();
    window_.startPage()->activateRecent(0);
    EXPECT_EQ(window_.page(), MainWindow::Page::Workspace);
    ASSERT_TRUE(waitFor([&] { return context_.store()->initialLoadDone(); }));
    EXPECT_EQ(context_.store()->index().opCount(), 20u);
    // A launch comes back as the launch form, filled in.
    session::RecentSession launched;
    launched.kind = session::RecentSession::Kind::Launch;
    launched.launch = engineSpec(3, 0);
    context_.recentSessions()->add(launched);
    window_.showPage(MainWindow::Page::Start);
    window_.startPage()->activateRecent(0);
    EXPECT_EQ(window_.page(), MainWindow::Page::Launch);
    EXPECT_EQ(window_.launchForm()->programEdit()->text(), PROBE_NATIVE_ENGINE);
    EXPECT_EQ(window_.launchForm()->spec().probeRunArguments(),
              launched.launch.probeRunArguments());
    // File › Launch (no spec): the form remembers the last launch, into a fresh folder beside
    // the last one's (not back in <app data>/runs for a user who keeps runs elsewhere).
    window_.showPage(MainWindow::Page::Start);
    window_.showLaunchForm();
    EXPECT_EQ(window_.launchForm()->programEdit()->text(), PROBE_NATIVE_ENGINE);
    EXPECT_EQ(window_.launchForm()->spec().arguments, launched.launch.arguments);
    const QString suggested = window_.launchForm()->spec().outputDirectory;
    EXPECT_NE(suggested, launched.launch.outputDirectory);
    EXPECT_EQ(QFileInfo(suggested).absolutePath(), QString::fromStdString(dir_.path()))
        << suggested.toStdString();
    // So is the folder the New folder button and a new program name suggest.
    window_.launchForm()->programEdit()->setText("/x/other.py");
    Q_EMIT window_.launchForm()->programEdit()->textEdited("/x/other.py");
    EXPECT_TRUE(window_.launchForm()->outputEdit()->text().startsWith(
        QString::fromStdString(dir_ / "other-")))
        << window_.launchForm()->outputEdit()->text().toStdString();
}

// --- the command line -------------------------------------------------------------------------

TEST(CommandLineSessions, LaunchedModelScreenshotAndUsageErrors) {
    test::TempDir dir("ui-cli-live");
    test::TempDir sockets("probe-sockets");
    ::chmod(sockets.path().c_str(), 0700);
    ::setenv("PROBE_CONTROL_DIR", sockets.path().c_str(), 1);
    test::writeFile(dir / "config.json",
                    R"({"task": "statistics", "dump_enable": true, "exec_range": "all"})");
    const QString png = QString::fromStdString(dir / "live.png");
    // The window once the live dump has 4 rounds: the tree, the plot, the session's log.
    test::StudioRun run =
        runStudio({"--output", QString::fromStdString(dir / "out"), "--config",
                   QString::fromStdString(dir / "config.json"), "--screenshot", png, "--view",
                   "plot", "--wait-rounds", "4", "--size", "1200x800", "--launch", "--",
                   PROBE_NATIVE_ENGINE, "--rounds", "100000", "--sleep-ms", "10"});
    ASSERT_EQ(run.exitCode, 0) << run.err.toStdString();
    QImage image(png);
    ASSERT_EQ(image.size(), QSize(1200, 800));
    EXPECT_GT(countPixels(image, [](QColor c) { return c == QColor(30, 140, 60); }),
              100);  // the green "dumping" badge
    EXPECT_TRUE(test::exists(dir / "out/atb_dump_data/probe_status.json"));
    // The model was stopped when the application quit.
    EXPECT_TRUE(session::liveProbes().isEmpty());

    // The start page, the launch form filled with a command, the config editor with a file.
    for (const QStringList& arguments :
         {QStringList{"--view", "start"},
          QStringList{"--view", "launch", "--", "/usr/bin/python3", "train.py", "--epochs", "2"},
          QStringList{"--view", "config", "--config",
                      QString::fromStdString(dir / "config.json")}}) {
        QFile::remove(png);
        run = runStudio(QStringList{"--screenshot", png} + arguments);
        EXPECT_EQ(run.exitCode, 0) << arguments.join(' ').toStdString() << run.err.toStdString();
        EXPECT_FALSE(QImage(png).isNull());
    }

    run = runStudio({"--launch", "--screenshot", png});
    EXPECT_EQ(run.exitCode, 64);
    EXPECT_TRUE(run.err.contains("--launch needs the command")) << run.err.toStdString();
    run = runStudio({"--output", "x", "--screenshot", png});
    EXPECT_EQ(run.exitCode, 64);
    EXPECT_TRUE(run.err.contains("--output goes with --launch")) << run.err.toStdString();
    run = runStudio({QString::fromStdString(dir.path()), "--launch", "--", "x"});
    EXPECT_EQ(run.exitCode, 64);
    run = runStudio({"--attach", "999999", "--screenshot", png});
    EXPECT_EQ(run.exitCode, 1);
    EXPECT_TRUE(run.err.contains("no probe runs in process 999999")) << run.err.toStdString();
    run = runStudio({"--config", QString::fromStdString(dir / "absent.json"), "--screenshot", png});
    EXPECT_EQ(run.exitCode, 1);
    EXPECT_TRUE(run.err.contains("absent.json")) << run.err.toStdString();
    // A folder whose name is not valid UTF-8: Qt cannot hold it, and it was said not to exist
    // (as "/tmp/...\uFFFD..."). The shell makes the byte: QProcess takes text.
    {
        const std::string odd = dir / "run\xff";
        test::DumpBuilder oddDump(odd);
        oddDump.addRow(0, "0", "embed", "Layer", true);
        oddDump.setStatus("complete");
        QProcess process;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.remove(QStringLiteral("DISPLAY"));
        process.setProcessEnvironment(env);
        process.start(QStringLiteral("/bin/sh"),
                      {"-c", "exec \"$0\" \"$1$(printf '\\377')\" --screenshot \"$2\"",
                       QStringLiteral(PROBE_STUDIO), QString::fromStdString(dir / "run"), png});
        ASSERT_TRUE(process.waitForFinished(120000));
        const QString err = QString::fromLocal8Bit(process.readAllStandardError());
        EXPECT_EQ(process.exitCode(), 1) << err.toStdString();
        EXPECT_TRUE(err.contains("run\\xFF\") is not valid text")) << err.toStdString();
        EXPECT_FALSE(err.contains("does not exist")) << err.toStdString();
    }
    // A program that does not exist: probe run refuses it, the screenshot says so.
    run = runStudio({"--screenshot", png, "--output", QString::fromStdString(dir / "none"),
                     "--launch", "--", "/no/such/program"});
    EXPECT_EQ(run.exitCode, 1);
    EXPECT_TRUE(run.err.contains("/no/such/program")) << run.err.toStdString();
    ::unsetenv("PROBE_CONTROL_DIR");
}

}  // namespace
}  // namespace probe
