// The selected op: what it is (path, id, type, parameters) and its statistic rows, all rounds or
// one. Selecting a row moves the cursor to that tensor and round; activating it previews the
// tensor.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <QWidget>

class QCheckBox;
class QLabel;
class QPushButton;
class QTableView;

namespace probe::data {
class DumpCursor;
class DumpStore;
class OpReplay;
class OpTensorsModel;
class OverflowBirths;
struct ReplayVerdict;
}  // namespace probe::data

namespace probe::widgets {

class OpTensorsPanel : public QWidget {
    Q_OBJECT
public:
    OpTensorsPanel(data::DumpStore* store, data::DumpCursor* cursor, QWidget* parent = nullptr);

    QTableView* view() const { return view_; }
    data::OpTensorsModel* model() const { return model_; }
    // Marks the op where an overflow is born ("overflow born here").
    void setOverflowBirths(data::OverflowBirths* births);
    // `probe replay` of the selected op in the cursor's round (off the GUI thread); the verdict
    // is shown under the op's details. False when there is no op to replay.
    bool replayCurrentOp();
    data::OpReplay* replayer() const { return replayer_; }
    QString replayText() const;
    // The op's facts under its name: ids, type, rounds, rows, the round's parameters.
    QString detailsText() const;

signals:
    void previewRequested(uint32_t row);
    // The user picked a row of the table (clicked it, even the one current already).
    void rowPicked();

private:
    void updateHeader();
    // The cursor's row current in the table, scrolled into view unless `scroll` is false.
    void selectCursorRow(bool scroll = true);
    void fitColumns();
    void showVerdict(const data::ReplayVerdict& verdict);

    data::DumpStore* store_;
    data::DumpCursor* cursor_;
    data::OpTensorsModel* model_;
    QLabel* title_;
    QLabel* details_;
    // The parameters of an op in a round, from op_param.json beside its tensors (roundParams).
    struct RoundParams {
        uint32_t op = UINT32_MAX;
        int32_t round = -1;
        bool found = false;               // a tensor file of the round was there to look beside
        std::optional<std::string> text;  // compact JSON; none without a file
        std::string error;                // why it could not be read
    };
    const RoundParams& roundParams(uint32_t op, int32_t round);
    RoundParams roundParams_;
    QCheckBox* roundOnly_;
    QPushButton* replay_;
    QLabel* verdict_;
    data::OpReplay* replayer_;
    data::OverflowBirths* births_ = nullptr;
    QTableView* view_;
    bool syncing_ = false;
    // In the latest round, the table scrolls to the newest row as rows come (false while the
    // user has scrolled away from the end).
    bool followRows_ = true;
    bool columnsFitted_ = false;
};

}  // namespace probe::widgets
