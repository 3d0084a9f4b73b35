// SPDX-License-Identifier: GPL-3.0-or-later
#include "gradient_series_model.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>

#include <QDir>
#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>

#include "background_pool.h"

namespace probe::data {

namespace {

struct ReadResult {
    std::optional<analysis::GradMonitorData> data;
    std::string error;
};

QString number(double v) {
    if (std::isnan(v)) return QStringLiteral("nan");
    if (std::isinf(v)) return v > 0 ? QStringLiteral("inf") : QStringLiteral("-inf");
    return QString::number(v, 'g', 4);
}

}  // namespace

GradientSeriesModel::GradientSeriesModel(QObject* parent) : QAbstractTableModel(parent) {}

QString GradientSeriesModel::dumpGradientDirectory(const QString& dumpRoot) {
    if (dumpRoot.isEmpty()) return QString();
    const QDir dir(QDir(dumpRoot).absoluteFilePath(QStringLiteral("grad_monitor")));
    if (!dir.exists()) return QString();
    for (const QString& rank : dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot))
        if (!QDir(dir.absoluteFilePath(rank))
                 .entryList({QStringLiteral("grad_reduced_*.csv")}, QDir::Files)
                 .isEmpty())
            return dir.absolutePath();
    return QString();
}

void GradientSeriesModel::load(const QString& dir) {
    const quint64 request = ++request_;
    directory_ = dir;
    if (dir.isEmpty()) {
        problem_.clear();
        clear();
        emit loaded();
        return;
    }
    auto* watcher = new QFutureWatcher<std::shared_ptr<ReadResult>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, request] {
        watcher->deleteLater();
        if (request != request_) return;  // another folder asked for since
        const auto result = watcher->result();
        problem_ = QString::fromStdString(result->error);
        setMonitorData(result->data ? std::move(*result->data) : analysis::GradMonitorData{});
        emit loaded();
    });
    const std::string path = dir.toStdString();
    watcher->setFuture(QtConcurrent::run(backgroundPool(), [path] {
        auto result = std::make_shared<ReadResult>();
        result->data = analysis::readGradMonitor(path, &result->error);
        return result;
    }));
}

void GradientSeriesModel::setMonitorData(analysis::GradMonitorData data) {
    beginResetModel();
    data_ = std::move(data);
    findings_ = analysis::analyzeGradients(data_, analysis::GradThresholds{});
    const size_t n = data_.series.size();
    alerts_.assign(n, 0);
    maxNorm_.assign(n, -1);
    checked_.assign(n, false);
    for (size_t i = 0; i < n; ++i)
        for (const auto& s : data_.series[i].samples)
            if (s.hasNorm && std::isfinite(s.norm)) maxNorm_[i] = std::max(maxNorm_[i], s.norm);
    for (const auto& f : findings_)
        for (size_t i = 0; i < n; ++i)
            if (data_.series[i].rank == f.rank && data_.series[i].name == f.parameter) ++alerts_[i];
    // Default: what has alerts first, then the largest norms.
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [this](size_t a, size_t b) {
        if ((alerts_[a] > 0) != (alerts_[b] > 0)) return alerts_[a] > 0;
        return maxNorm_[a] > maxNorm_[b];
    });
    for (size_t i = 0; i < order.size() && i < static_cast<size_t>(kDefaultChecked); ++i)
        checked_[order[i]] = true;
    endResetModel();
    emit checkedChanged();
}

std::vector<analysis::GradFinding> GradientSeriesModel::findingsOf(int row) const {
    std::vector<analysis::GradFinding> out;
    if (row < 0 || row >= rowCount()) return out;
    const auto& s = series(row);
    for (const auto& f : findings_)
        if (f.rank == s.rank && f.parameter == s.name) out.push_back(f);
    return out;
}

std::vector<int> GradientSeriesModel::checkedRows() const {
    std::vector<int> rows;
    for (size_t i = 0; i < checked_.size(); ++i)
        if (checked_[i]) rows.push_back(static_cast<int>(i));
    return rows;
}

int GradientSeriesModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(data_.series.size());
}

int GradientSeriesModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant GradientSeriesModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    const size_t row = static_cast<size_t>(index.row());
    const auto& s = data_.series[row];
    if (role == Qt::CheckStateRole && index.column() == ParameterColumn)
        return checked_[row] ? Qt::Checked : Qt::Unchecked;
    if (role == Qt::ToolTipRole && alerts_[row] > 0) {
        QStringList lines;
        for (const auto& f : findingsOf(index.row()))
            lines << QString::fromStdString(analysis::formatGradFinding(f));
        return lines.join(QLatin1Char('\n'));
    }
    if (role == Qt::TextAlignmentRole && index.column() != ParameterColumn &&
        index.column() != RankColumn)
        return static_cast<int>(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole) return {};
    switch (index.column()) {
        case ParameterColumn:
            return QString::fromStdString(s.name);
        case RankColumn:
            return QString::fromStdString(s.rank);
        case StepsColumn:
            return static_cast<qulonglong>(s.samples.size());
        case LastNormColumn:
            return s.samples.empty() ? QString() : number(s.samples.back().norm);
        case MaxNormColumn:
            return maxNorm_[row] < 0 ? QString() : number(maxNorm_[row]);
        case AlertsColumn:
            return alerts_[row];
    }
    return {};
}

bool GradientSeriesModel::setData(const QModelIndex& index, const QVariant& value, int role) {
    if (!index.isValid() || index.column() != ParameterColumn || role != Qt::CheckStateRole ||
        index.row() >= rowCount())
        return false;
    const bool on = value.toInt() == Qt::Checked;
    const size_t row = static_cast<size_t>(index.row());
    if (checked_[row] == on) return true;
    checked_[row] = on;
    emit dataChanged(index, index, {Qt::CheckStateRole});
    emit checkedChanged();
    return true;
}

Qt::ItemFlags GradientSeriesModel::flags(const QModelIndex& index) const {
    if (!index.isValid()) return Qt::NoItemFlags;
    Qt::ItemFlags f = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
    if (index.column() == ParameterColumn) f |= Qt::ItemIsUserCheckable;
    return f;
}

QVariant GradientSeriesModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case ParameterColumn:
            return tr("Parameter");
        case RankColumn:
            return tr("Rank");
        case StepsColumn:
            return tr("Steps");
        case LastNormColumn:
            return tr("Last norm");
        case MaxNormColumn:
            return tr("Largest norm");
        case AlertsColumn:
            return tr("Alerts");
    }
    return {};
}

}  // namespace probe::data
