// SPDX-License-Identifier: GPL-3.0-or-later
#include "compare_dialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QVBoxLayout>

#include "analysis/compare.h"
#include "context/app_context.h"

namespace probe::widgets {

QStringList rankFolders(const QString& path) {
    std::string error;
    const auto location = analysis::locateDump(path.toStdString(), &error);
    if (!location) return {};
    const QDir root(QString::fromStdString(location->root));
    QStringList out;
    if (root.exists(QStringLiteral("data"))) {  // atb: data/<device>_<pid>
        const QDir data(root.filePath(QStringLiteral("data")));
        for (const QString& process : data.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name))
            out << data.filePath(process);
    } else {  // msprobe: step<N>/rank<R> or proc<pid>
        static const QRegularExpression step(QStringLiteral("^step\\d+$")),
            rank(QStringLiteral("^(rank|proc)\\d+$"));
        for (const QString& s : root.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) {
            if (!step.match(s).hasMatch()) continue;
            const QDir stepDir(root.filePath(s));
            for (const QString& r :
                 stepDir.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name))
                if (rank.match(r).hasMatch()) out << stepDir.filePath(r);
        }
    }
    return out.size() > 1 ? out : QStringList();
}

CompareDialog::CompareDialog(const QString& shownDump, QWidget* parent)
    : QDialog(parent), shownDump_(shownDump) {
    setWindowTitle(tr("Compare two runs"));
    reference_ = new QLineEdit(this);
    reference_->setObjectName(QStringLiteral("reference"));
    reference_->setPlaceholderText(
        tr("the run you trust: a dump folder (atb_dump_data, its parent, an msprobe dump_path)"));
    candidate_ = new QLineEdit(shownDump, this);
    candidate_->setObjectName(QStringLiteral("candidate"));
    candidate_->setPlaceholderText(tr("the run under suspicion"));
    referenceRanks_ = new QComboBox(this);
    candidateRanks_ = new QComboBox(this);
    note_ = new QLabel(tr("The candidate is shown, coloured by verdict; by default it is the dump "
                          "open now (a running "
                          "model too: the comparison follows it as rounds arrive)."),
                       this);
    note_->setWordWrap(true);
    problem_ = new QLabel(this);
    problem_->setWordWrap(true);
    problem_->setStyleSheet(QStringLiteral("color: #c81e1e"));
    problem_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    problem_->setVisible(false);

    auto row = [this](QLineEdit* edit, QComboBox* ranks, const QString& title) {
        auto* line = new QHBoxLayout;
        line->addWidget(edit, 1);
        auto* browse = new QPushButton(tr("Browse…"), this);
        line->addWidget(browse);
        line->addWidget(ranks);
        connect(browse, &QPushButton::clicked, this, [this, edit, title] {
            const QString dir = QFileDialog::getExistingDirectory(this, title, edit->text());
            if (!dir.isEmpty()) edit->setText(dir);
        });
        connect(edit, &QLineEdit::textChanged, this, [this, edit, ranks] {
            fillRanks(edit, ranks);
            problem_->setVisible(false);  // it was the text before's
        });
        fillRanks(edit, ranks);
        return line;
    };
    auto* form = new QFormLayout;
    auto label = [this](const QString& text, QWidget* buddy) {
        auto* l = new QLabel(text, this);
        l->setBuddy(buddy);  // Alt+R, Alt+C
        return l;
    };
    form->addRow(label(tr("&Reference:"), reference_),
                 row(reference_, referenceRanks_, tr("The reference dump folder")));
    form->addRow(label(tr("&Candidate:"), candidate_),
                 row(candidate_, candidateRanks_, tr("The candidate dump folder")));
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("Compare"));
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(note_);
    layout->addWidget(problem_);
    layout->addWidget(buttons);
    resize(760, sizeHint().height());
}

void CompareDialog::setReference(const QString& path) {
    reference_->setText(path);
    // Filled in from the last comparison: typing replaces it rather than adding to its end.
    reference_->selectAll();
    reference_->setFocus();
}

QString CompareDialog::problem() const {
    return problem_->isHidden() ? QString() : problem_->text();
}

void CompareDialog::accept() {
    using context::AppContext;
    QStringList problems;
    QString error;
    const QString reference = referencePath();
    if (reference.isEmpty())
        problems << tr("Choose the reference run.");
    else if (!AppContext::locateCompared(AppContext::ComparedRun::Reference, reference, &error))
        problems << error;
    // The dump shown is taken as it is (a live run's folder may not hold its dump yet).
    const QString candidate = candidatePath();
    if (!candidate.isEmpty() && candidate != shownDump_ &&
        !AppContext::locateCompared(AppContext::ComparedRun::Candidate, candidate, &error))
        problems << error;
    problem_->setText(problems.join(QLatin1Char('\n')));
    problem_->setVisible(!problems.isEmpty());
    if (problems.isEmpty()) QDialog::accept();
}
void CompareDialog::setCandidate(const QString& path) {
    candidate_->setText(path);
}

void CompareDialog::fillRanks(QLineEdit* edit, QComboBox* ranks) {
    ranks->clear();
    const QString path = edit->text().trimmed();
    const QStringList folders =
        path.isEmpty() || !QFileInfo(path).isDir() ? QStringList() : rankFolders(path);
    ranks->setVisible(!folders.isEmpty());
    if (folders.isEmpty()) return;
    ranks->addItem(tr("all ranks"), QString());
    for (const QString& folder : folders) {
        const QFileInfo info(folder);
        ranks->addItem(
            QStringLiteral("%1/%2").arg(QFileInfo(info.path()).fileName(), info.fileName()),
            folder);
    }
    // A rank folder typed or chosen: that rank.
    const QString absolute = QFileInfo(path).absoluteFilePath();
    for (int i = 1; i < ranks->count(); ++i)
        if (QFileInfo(ranks->itemData(i).toString()).absoluteFilePath() == absolute)
            ranks->setCurrentIndex(i);
}

QString CompareDialog::chosen(QLineEdit* edit, QComboBox* ranks) const {
    const QString rank =
        ranks->isVisible() || ranks->count() ? ranks->currentData().toString() : QString();
    return rank.isEmpty() ? edit->text().trimmed() : rank;
}

QString CompareDialog::referencePath() const {
    return chosen(reference_, referenceRanks_);
}
QString CompareDialog::candidatePath() const {
    return chosen(candidate_, candidateRanks_);
}

}  // namespace probe::widgets
