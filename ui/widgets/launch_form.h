// The launch form: what to run under the probe (command or script, arguments, working
// directory, environment, interpreter), where the dump goes and with which config. It shows
// the `probe run` command line it stands for and what is wrong with it as you type; Launch is
// enabled once nothing is.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QWidget>

#include "session/launch_session.h"

class QGridLayout;
class QKeyEvent;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;

namespace probe::widgets {

class LaunchForm : public QWidget {
    Q_OBJECT
public:
    explicit LaunchForm(QWidget* parent = nullptr);

    // Fills the form (an empty output folder gets a fresh one).
    void setSpec(const session::LaunchSpec& spec);
    // Where fresh output folders are suggested from now on ("" : <app data>/runs): beside the
    // last launch's, for a user who keeps their runs elsewhere.
    void suggestOutputsIn(const QString& parent) { outputParent_ = parent; }
    session::LaunchSpec spec() const;
    // What the form says is wrong ("" when Launch is enabled), and its note (an output folder
    // that holds a dump already).
    QString problem() const;
    QString note() const;
    // What the config dumps, in words ("" without a readable config).
    QString configSummary() const;
    // Where config dialogs start (the installed configs folder).
    void setConfigDirectory(const QString& dir) { configDirectory_ = dir; }

    QLineEdit* programEdit() const { return program_; }
    QLineEdit* argumentsEdit() const { return arguments_; }
    QLineEdit* interpreterEdit() const { return interpreter_; }
    QLineEdit* workingDirectoryEdit() const { return workingDirectory_; }
    QPlainTextEdit* environmentEdit() const { return environment_; }
    QLineEdit* outputEdit() const { return output_; }
    QLineEdit* configEdit() const { return config_; }
    QPushButton* launchButton() const { return launch_; }
    QString commandLine() const;

signals:
    void launchRequested(const probe::session::LaunchSpec& spec);
    void cancelled();

protected:
    void keyPressEvent(QKeyEvent* event) override;

private:
    void onProgramEdited();
    bool isProgram(const QString& program) const;
    // A fresh output folder beside the others, named after what the program and arguments run.
    QString suggestedOutput() const;
    void updateChecks();
    void updateConfigSummary(const QString& path);
    QLineEdit* addPathRow(QGridLayout* grid, int row, const QString& label, const QString& tooltip,
                          bool directory, const QString& filter = {});

    QLineEdit* program_;
    QLineEdit* arguments_;
    QLineEdit* interpreter_;
    QLineEdit* workingDirectory_;
    QPlainTextEdit* environment_;
    QLineEdit* output_;
    QLineEdit* config_;
    QLabel* command_;
    QLabel* problem_;
    QLabel* note_;
    QLabel* configSummary_;
    QPushButton* launch_;
    QString configDirectory_;
    QString outputParent_;
    bool interpreterChosen_ = false;  // by the user, not filled in for a .py
    bool outputChosen_ = false;
    // Typed or browsed here, not filled in with the spec.
    bool argumentsChosen_ = false, configChosen_ = false;
    // What the form was filled with: those arguments and that config go with that program only.
    QString specProgram_, specArguments_, specConfig_;
};

}  // namespace probe::widgets
