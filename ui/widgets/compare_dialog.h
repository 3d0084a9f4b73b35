// File › Compare: the reference dump and the candidate (by default the dump shown, a live run
// included), each a folder; where a dump holds several ranks (step0/rank0, step0/rank1; atb:
// data/<device>_<pid>) they are listed, to compare one rank against another.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QDialog>
#include <QStringList>

class QComboBox;
class QLabel;
class QLineEdit;

namespace probe::widgets {

// The rank folders of the dump that holds `path` (full paths, sorted): <dump>/step<N>/rank<R>
// (and proc<pid>), or <atb_dump_data>/data/<device>_<pid>. Empty when there is one or none.
QStringList rankFolders(const QString& path);

class CompareDialog : public QDialog {
    Q_OBJECT
public:
    // `shownDump`: the folder of the dump shown ("" when none), the default candidate.
    CompareDialog(const QString& shownDump, QWidget* parent = nullptr);

    void setReference(const QString& path);
    void setCandidate(const QString& path);
    // The folders chosen, narrowed to the rank chosen (a rank folder), if any.
    QString referencePath() const;
    QString candidatePath() const;
    QComboBox* referenceRanks() const { return referenceRanks_; }
    QComboBox* candidateRanks() const { return candidateRanks_; }
    // Why Compare was refused, under the fields ("" when it was not).
    QString problem() const;
    // Compare: accepted when both folders hold a dump, else the dialog stays, saying why (it
    // closed, and what was typed went with it).
    void accept() override;

private:
    void fillRanks(QLineEdit* edit, QComboBox* ranks);
    QString chosen(QLineEdit* edit, QComboBox* ranks) const;

    QLineEdit* reference_;
    QLineEdit* candidate_;
    QComboBox* referenceRanks_;
    QComboBox* candidateRanks_;
    QLabel* note_;
    QLabel* problem_;
    QString shownDump_;
};

}  // namespace probe::widgets
