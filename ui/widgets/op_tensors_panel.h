// The selected op: what it is (path, id, type, parameters) and its statistic rows, all rounds or
// one. Selecting a row moves the cursor to that tensor and round; activating it previews the
// tensor.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QWidget>

class QCheckBox;
class QLabel;
class QTableView;

namespace probe::data {
class DumpCursor;
class DumpStore;
class OpTensorsModel;
}  // namespace probe::data

namespace probe::widgets {

class OpTensorsPanel : public QWidget {
    Q_OBJECT
public:
    OpTensorsPanel(data::DumpStore* store, data::DumpCursor* cursor, QWidget* parent = nullptr);

    QTableView* view() const { return view_; }
    data::OpTensorsModel* model() const { return model_; }

signals:
    void previewRequested(uint32_t row);

private:
    void updateHeader();
    void selectCursorRow();
    void fitColumns();

    data::DumpStore* store_;
    data::DumpCursor* cursor_;
    data::OpTensorsModel* model_;
    QLabel* title_;
    QLabel* details_;
    QCheckBox* roundOnly_;
    QTableView* view_;
    bool syncing_ = false;
    bool columnsFitted_ = false;
};

}  // namespace probe::widgets
