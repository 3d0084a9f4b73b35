// The gradient monitor's series (analysis::readGradMonitor) as a table of parameters: rank,
// steps, last and largest norm, what probe grads finds in each (analysis::analyzeGradients).
// Rows are checkable: the checked ones are plotted. Files are read off the GUI thread. No widgets.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <vector>

#include <QAbstractTableModel>
#include <QString>

#include "analysis/grad_monitor.h"

namespace probe::data {

class GradientSeriesModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        ParameterColumn,
        RankColumn,
        StepsColumn,
        LastNormColumn,
        MaxNormColumn,
        AlertsColumn,
        ColumnCount
    };

    explicit GradientSeriesModel(QObject* parent = nullptr);

    // The folder of a dump where `probe run` puts the monitor's files ("grad_monitor": true):
    // <dump root>/grad_monitor, when it holds CSV files; else "".
    static QString dumpGradientDirectory(const QString& dumpRoot);

    // Reads the monitor's files below `dir` on a worker thread; loaded() follows. "" clears.
    void load(const QString& dir);
    void setMonitorData(analysis::GradMonitorData data);
    void clear() { setMonitorData({}); }
    QString directory() const { return directory_; }
    bool isEmpty() const { return data_.series.empty(); }
    QString problem() const { return problem_; }

    const analysis::GradSeries& series(int row) const {
        return data_.series[static_cast<size_t>(row)];
    }
    // What probe grads finds in that parameter, by step.
    std::vector<analysis::GradFinding> findingsOf(int row) const;
    const std::vector<analysis::GradFinding>& findings() const { return findings_; }
    std::vector<int> checkedRows() const;
    // The parameters with findings are checked, then the largest norms, up to this many.
    static constexpr int kDefaultChecked = 8;

    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    int columnCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

signals:
    // The files were read (or could not be: problem()).
    void loaded();
    // Which rows are checked changed.
    void checkedChanged();

private:
    analysis::GradMonitorData data_;
    std::vector<analysis::GradFinding> findings_;
    std::vector<int> alerts_;      // findings per row
    std::vector<double> maxNorm_;  // largest finite norm per row
    std::vector<bool> checked_;
    QString directory_, problem_;
    quint64 request_ = 0;
};

}  // namespace probe::data
