// The application's data layer (ui/data) alone, without widgets: the dump store and its loader
// thread, the models under QAbstractItemModelTester (as a dump grows, too), the op selection
// config and the config document of either kind, tensor documents.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <cmath>
#include <functional>

#include <QAbstractItemModelTester>
#include <QFont>
#include <QSignalSpy>
#include <QTest>
#include <gtest/gtest.h>

#include "analysis/dump_reader.h"
#include "config_document.h"
#include "dump_builder.h"
#include "dump_cursor.h"
#include "dump_store.h"
#include "op_filter_proxy.h"
#include "op_selection.h"
#include "op_tensors_model.h"
#include "op_tree_model.h"
#include "probe/format/api_config.h"
#include "probe/format/file_util.h"
#include "probe/format/op_config.h"
#include "probe/format/tensor_bin.h"
#include "statistics_series.h"
#include "synthetic_dump.h"
#include "tensor_document.h"
#include "tensor_values_model.h"
#include "test_support.h"

namespace probe {
namespace {

using analysis::kNone;
using data::OpTreeModel;
using Tester = QAbstractItemModelTester;

bool waitFor(const std::function<bool()>& condition, int ms = 20000) {
    return QTest::qWaitFor(condition, ms);
}

// A store with its tree model and proxy, all under the tester from the start.
struct Session {
    data::DumpStore store;
    data::OpSelection selection;
    OpTreeModel model{&store, &selection};
    data::OpFilterProxy proxy{&store, &selection};
    Tester modelTester{&model, Tester::FailureReportingMode::Fatal};
    Tester proxyTester{&proxy, Tester::FailureReportingMode::Fatal};
    QSignalSpy loaded{&store, &data::DumpStore::initialLoadFinished};

    Session() {
        store.setIdlePollInterval(40);
        model.setUpdateDelay(0);
        proxy.setOpModel(&model);
    }
    // Waits for this open's own load: an earlier open may have finished already.
    bool open(const std::string& path) {
        const auto before = loaded.count();
        store.open(QString::fromStdString(path));
        return waitFor([&] { return loaded.count() > before; });
    }
    QModelIndex find(const std::string& id) {
        return model.indexOfOp(store.index().findOp(model.process(), id));
    }
    QString text(const std::string& id, int column) {
        return find(id).siblingAtColumn(column).data().toString();
    }
};

int countRows(const QAbstractItemModel& model, const QModelIndex& parent = {}) {
    int n = 0;
    for (int r = 0; r < model.rowCount(parent); ++r)
        n += 1 + countRows(model, model.index(r, 0, parent));
    return n;
}

TEST(DumpStore, LoadsADumpIntoTheTreeModel) {
    test::TempDir dir("ui-data");
    const auto written = test::writeSmallSyntheticDump(dir.path());
    Session s;
    QSignalSpy opened(&s.store, &data::DumpStore::opened);
    ASSERT_TRUE(s.open(dir.path()));
    ASSERT_EQ(opened.count(), 1);
    EXPECT_EQ(opened.front().front().toString().toStdString(), written.root);
    EXPECT_EQ(s.store.dumpState(), "complete");
    EXPECT_EQ(s.model.rowCount(), 3);
    EXPECT_EQ(countRows(s.model), 60);
    EXPECT_EQ(s.text("0", OpTreeModel::NameColumn), "layers.0");
    EXPECT_EQ(s.text("1_0", OpTreeModel::NameColumn), "input_layernorm");
    EXPECT_EQ(s.text("1", OpTreeModel::TypeColumn), "DecoderLayer");
    EXPECT_EQ(s.text("1", OpTreeModel::RoundsColumn), "5");
    EXPECT_EQ(s.text("1", OpTreeModel::ShapeColumn), "16x64");
    EXPECT_EQ(s.text("1", OpTreeModel::DtypeColumn), "float");
    // The planted overflow: layer 1 Inf in its output, layer 2 NaN, layer 0 clean.
    EXPECT_EQ(s.text("1", OpTreeModel::AnomalyColumn), "Inf");
    EXPECT_EQ(s.text("2", OpTreeModel::AnomalyColumn), "NaN");
    EXPECT_EQ(s.text("0", OpTreeModel::AnomalyColumn), "");
    // The last round's statistics are finite again.
    bool ok = false;
    s.text("2", OpTreeModel::NormColumn).toDouble(&ok);
    EXPECT_TRUE(ok) << s.text("2", OpTreeModel::NormColumn).toStdString();
    EXPECT_EQ(s.find("2").data(OpTreeModel::AnomalyRole).toUInt(), unsigned(analysis::kHasNan));
}

TEST(DumpStore, TheTreesStatisticsAreThoseOfTheRoundChosen) {
    test::TempDir dir("ui-data");
    test::DumpBuilder dump(dir.path());
    format::ModelStructure model;
    model.modelName = "Rounds";
    model.nodes.push_back(test::node("layer", "0", "Layer"));
    model.nodes.push_back(test::node("head", "1", "Linear"));
    dump.writeModel(model);
    // The layer has an output in rounds 0..2, the head only in rounds 0 and 2, a NaN in 2.
    std::vector<format::StatRow> layer, head;
    for (int round = 0; round < 3; ++round) {
        const float r = static_cast<float>(round);
        layer.push_back(
            dump.addRow(round, "0", "layer", "Layer", true, {r, 2 * r + 1, -r}, {1, 3 + round}));
        if (round != 1)
            head.push_back(dump.addRow(round, "1", "head", "Linear", true,
                                       {round == 2 ? std::nanf("") : 4.0f, 5.0f}));
    }
    dump.setStatus("complete");
    Session s;
    ASSERT_TRUE(s.open(dir.path()));
    // The column texts, as the tree formats the rows written.
    const auto maxOf = [](const format::StatRow& row) {
        return OpTreeModel::formatValue(*row.max);
    };
    ASSERT_EQ(s.model.round(), -1);
    EXPECT_EQ(s.text("0", OpTreeModel::MaxColumn), maxOf(layer[2]));  // each op's last round
    EXPECT_EQ(s.text("1", OpTreeModel::MaxColumn), "nan");

    s.proxy.sort(OpTreeModel::MaxColumn);  // the sorted proxy follows too (its tester checks)
    s.model.setRound(1);
    EXPECT_EQ(s.text("0", OpTreeModel::MaxColumn), maxOf(layer[1]));
    EXPECT_EQ(s.text("0", OpTreeModel::MeanColumn), OpTreeModel::formatValue(*layer[1].mean));
    EXPECT_EQ(s.text("0", OpTreeModel::ShapeColumn), QString::fromStdString(layer[1].shape));
    EXPECT_EQ(s.text("1", OpTreeModel::MaxColumn), "");  // no row in round 1
    EXPECT_EQ(s.text("1", OpTreeModel::ShapeColumn), "");
    // Greyed as the whole row is (it did not run in round 1), not coloured as a NaN.
    EXPECT_EQ(s.find("1").siblingAtColumn(OpTreeModel::MaxColumn).data(Qt::ForegroundRole),
              s.find("1").data(Qt::ForegroundRole));
    EXPECT_TRUE(s.find("1").data(Qt::ForegroundRole).isValid());
    s.model.setRound(0);
    EXPECT_EQ(s.text("0", OpTreeModel::MaxColumn), maxOf(layer[0]));
    EXPECT_EQ(s.text("0", OpTreeModel::ShapeColumn), "1x3");
    EXPECT_EQ(s.text("1", OpTreeModel::MaxColumn), maxOf(head[0]));
    // Its NaN is in round 2 (below); its rounds do not depend on the round chosen.
    EXPECT_EQ(s.text("1", OpTreeModel::AnomalyColumn), "");
    EXPECT_EQ(s.text("1", OpTreeModel::RoundsColumn), "2");
    s.model.setRound(-1);
    EXPECT_EQ(s.text("1", OpTreeModel::MaxColumn), "nan");
    EXPECT_EQ(s.text("0", OpTreeModel::ShapeColumn), "1x5");
}

// A 0-d tensor (scalar_tensor's output: the Shape column of statistic.csv is empty) reads
// "scalar" in the tree and the tensors table; its empty cell read as a shape not known.
TEST(DumpStore, AScalarsShapeReadsScalar) {
    test::TempDir dir("ui-data");
    test::DumpBuilder dump(dir.path());
    dump.appendRaw(0,
                   "0_777,0,s,aten::scalar_tensor,0,output,0,float,nd,,1.000000,1.000000,"
                   "1.000000,1.000000,N/A\n");
    dump.setStatus("complete");
    Session s;
    ASSERT_TRUE(s.open(dir.path()));
    EXPECT_EQ(s.text("0", OpTreeModel::ShapeColumn), "scalar");
    data::OpTensorsModel tensors(&s.store);
    tensors.setOp(s.store.index().findOp(0, "0"));
    ASSERT_EQ(tensors.rowCount(), 1);
    EXPECT_EQ(tensors.index(0, data::OpTensorsModel::ShapeColumn).data().toString(), "scalar");
}

// With a round chosen, the NaN/Inf marks, their column and the NaN filters say what is in that
// round (they said what was in any round: a NaN of round 1 marked the op in round 0, beside its
// finite numbers), and an op without rows there is greyed. (One that ran under other ids shows
// none there: WithARoundChosenSiblingsAreListedInTheOrderTheyRanThere.)
TEST(DumpStore, WithARoundChosenNanMarksAreThoseOfTheRoundAndOpsThatDidNotRunAreGreyed) {
    test::TempDir dir("ui-data");
    test::DumpBuilder dump(dir.path());
    dump.addRow(0, "0_0", "L/c", "aten::c", true, {1.0f});
    dump.addRow(0, "0", "L", "Layer", true, {1.0f});
    dump.addRow(1, "0_0", "L/c", "aten::c", true, {std::nanf(""), 1.0f});
    dump.addRow(1, "0", "L", "Layer", true, {1.0f});
    dump.addRow(2, "0_1", "L/d", "aten::d", true, {2.0f});
    dump.addRow(2, "0", "L", "Layer", true, {2.0f});
    dump.setStatus("complete");
    Session s;
    ASSERT_TRUE(s.open(dir.path()));
    const auto anomaly = [&](const std::string& id) {
        return s.text(id, OpTreeModel::AnomalyColumn);
    };
    const auto nanRows = [&] {  // what "NaN only" leaves, ancestors included
        int n = 0;
        std::function<void(const QModelIndex&)> count = [&](const QModelIndex& parent) {
            for (int r = 0; r < s.proxy.rowCount(parent); ++r) {
                ++n;
                count(s.proxy.index(r, 0, parent));
            }
        };
        count({});
        return n;
    };
    s.proxy.setShow(data::OpFilterProxy::Show::NanOnly);
    EXPECT_EQ(anomaly("0_0"), "NaN");  // every round
    EXPECT_EQ(anomaly("0"), "NaN below");
    EXPECT_EQ(nanRows(), 2);
    s.model.setRound(0);
    EXPECT_EQ(anomaly("0_0"), "");
    EXPECT_EQ(anomaly("0"), "");
    EXPECT_EQ(s.find("0").data(Qt::DecorationRole), QVariant());
    EXPECT_EQ(nanRows(), 0);
    s.model.setRound(1);
    EXPECT_EQ(anomaly("0_0"), "NaN");
    EXPECT_EQ(anomaly("0"), "NaN below");
    EXPECT_TRUE(s.find("0").data(Qt::DecorationRole).isValid());
    EXPECT_EQ(s.find("0_0").siblingAtColumn(OpTreeModel::AnomalyColumn).data(Qt::ToolTipRole),
              "NaN in this op's statistics in round 1");
    EXPECT_EQ(nanRows(), 2);
    s.proxy.setShow(data::OpFilterProxy::Show::All);

    // Round 2: c has no rows (it did not run), d has.
    s.model.setRound(2);
    EXPECT_EQ(anomaly("0_0"), "");
    const QModelIndex c = s.find("0_0");
    EXPECT_EQ(c.siblingAtColumn(OpTreeModel::IdColumn).data().toString(), "0_0");  // its only id
    EXPECT_TRUE(c.data(Qt::ForegroundRole).isValid());                             // greyed
    EXPECT_TRUE(c.data(Qt::ToolTipRole).toString().contains("no rows in round 2"));
    const QModelIndex d = s.find("0_1");
    EXPECT_EQ(d.siblingAtColumn(OpTreeModel::IdColumn).data().toString(), "0_1");
    EXPECT_FALSE(d.data(Qt::ForegroundRole).isValid());
    s.model.setRound(-1);
    EXPECT_EQ(c.siblingAtColumn(OpTreeModel::IdColumn).data().toString(), "0_0");
    EXPECT_FALSE(c.data(Qt::ForegroundRole).isValid());
}

// A dump of task tensor prints no statistics: the tree shows those of the tensor files, computed
// after the rows are shown, for rows read at the opening and rows the dump grows by alike.
TEST(DumpStore, ATensorDumpsStatisticsComeFromItsTensorFiles) {
    test::TempDir dir("ui-data");
    test::DumpBuilder dump(dir.path());
    dump.setStatisticsPrinted(false);
    dump.setStatus("running");
    dump.addRow(0, "0", "layer", "Layer", true, {1.0f, -2.0f, 3.0f});
    dump.addRow(0, "1", "head", "Linear", true, {std::nanf(""), 5.0f});
    Session s;
    // The rows are shown first, their statistics computed after (a 3 GiB file held the
    // opening for 8 s).
    uint64_t computedAtOpening = 99, awaitingAtOpening = 99;
    QObject::connect(&s.store, &data::DumpStore::initialLoadFinished, [&] {
        computedAtOpening = s.store.index().rowsWithStatisticsFromData();
        awaitingAtOpening = s.store.index().rowsAwaitingStatistics();
    });
    ASSERT_TRUE(s.open(dir.path()));
    EXPECT_EQ(computedAtOpening, 0u);
    EXPECT_EQ(awaitingAtOpening, 2u);
    ASSERT_TRUE(waitFor([&] { return s.store.index().rowsWithStatisticsFromData() == 2; }));
    EXPECT_EQ(s.store.index().rowsAwaitingStatistics(), 0u);
    EXPECT_EQ(s.text("0", OpTreeModel::MaxColumn), OpTreeModel::formatValue(3.0));
    EXPECT_EQ(s.text("0", OpTreeModel::MinColumn), OpTreeModel::formatValue(-2.0));
    EXPECT_EQ(s.text("0", OpTreeModel::MeanColumn), OpTreeModel::formatValue(2.0 / 3));
    EXPECT_EQ(s.text("1", OpTreeModel::MaxColumn), "nan");
    EXPECT_EQ(s.text("1", OpTreeModel::AnomalyColumn), "NaN");

    // The dump grows: the new round's row gets its statistics too.
    dump.addRow(1, "0", "layer", "Layer", true, {0.5f, 0.25f});
    dump.setStatus("complete");
    s.store.pollNow();
    ASSERT_TRUE(waitFor([&] { return s.store.index().rowsWithStatisticsFromData() == 3; }));
    EXPECT_EQ(s.text("0", OpTreeModel::MaxColumn), OpTreeModel::formatValue(0.5));
    EXPECT_EQ(s.text("0", OpTreeModel::RoundsColumn), "2");
}

// An op without output rows shows its first input's shape and statistics: said so ("input" in
// the Shape column, the tensor columns in italics), where they read as its output.
TEST(DumpStore, AnOpWithoutOutputRowsShowsItsInputSaidSo) {
    test::TempDir dir("ui-data");
    test::DumpBuilder dump(dir.path());
    format::ModelStructure model;
    model.modelName = "Inputs";
    model.nodes.push_back(test::node("layer", "0", "Layer"));
    model.nodes.push_back(test::node("sink", "1", "Sink"));
    dump.writeModel(model);
    const auto layerIn = dump.addRow(0, "0", "layer", "Layer", false, {1, 2}, {2, 3});
    const auto layerOut = dump.addRow(0, "0", "layer", "Layer", true, {5, 6}, {2, 4});
    const auto sinkIn = dump.addRow(0, "1", "sink", "Sink", false, {7, 8, 9}, {1, 3});
    dump.setStatus("complete");
    Session s;
    ASSERT_TRUE(s.open(dir.path()));
    EXPECT_EQ(s.text("0", OpTreeModel::ShapeColumn), QString::fromStdString(layerOut.shape));
    EXPECT_EQ(s.text("0", OpTreeModel::MaxColumn), OpTreeModel::formatValue(*layerOut.max));
    EXPECT_EQ(s.text("1", OpTreeModel::ShapeColumn),
              "input " + QString::fromStdString(sinkIn.shape));
    EXPECT_EQ(s.text("1", OpTreeModel::MaxColumn), OpTreeModel::formatValue(*sinkIn.max));
    for (int column :
         {OpTreeModel::MaxColumn, OpTreeModel::MinColumn, OpTreeModel::MeanColumn,
          OpTreeModel::NormColumn, OpTreeModel::ShapeColumn, OpTreeModel::DtypeColumn}) {
        EXPECT_FALSE(
            s.find("0").siblingAtColumn(column).data(Qt::FontRole).value<QFont>().italic());
        EXPECT_TRUE(s.find("1").siblingAtColumn(column).data(Qt::FontRole).value<QFont>().italic());
    }
    EXPECT_FALSE(s.find("1").siblingAtColumn(OpTreeModel::NameColumn).data(Qt::FontRole).isValid());
    EXPECT_NE(layerIn.shape, layerOut.shape);  // the layer's shown shape is its output's
}

TEST(DumpStore, TheTreeGrowsWhileTheDumpIsWritten) {
    test::TempDir dir("ui-data");
    test::DumpBuilder dump(dir.path());
    dump.setStatus("running");
    format::ModelStructure model;
    model.modelName = "Growing";
    model.nodes.push_back(test::node("layer", "0", "Layer"));
    dump.writeModel(model);
    Session s;
    ASSERT_TRUE(s.open(dir.path()));
    EXPECT_EQ(s.model.rowCount(), 1);
    EXPECT_EQ(s.text("0", OpTreeModel::RoundsColumn), "");  // no rows yet
    QSignalSpy changed(&s.model, &QAbstractItemModel::dataChanged);
    QSignalSpy state(&s.store, &data::DumpStore::dumpStateChanged);

    // A child the structure did not know, rows of the layer, then a second layer op.
    dump.addRow(0, "0", "layer", "Layer", false);
    dump.addRow(0, "0_0", "layer/matmul", "aten::mm", true);
    ASSERT_TRUE(waitFor([&] { return s.model.rowCount(s.find("0")) == 1; }));
    EXPECT_EQ(s.text("0_0", OpTreeModel::TypeColumn), "aten::mm");
    ASSERT_TRUE(waitFor([&] { return s.text("0", OpTreeModel::RoundsColumn) == "1"; }));
    EXPECT_GT(changed.count(), 0);
    dump.addRow(1, "0", "layer", "Layer", false);
    dump.addRow(1, "1", "head", "Linear", true, {1.0f, std::nanf("")});
    ASSERT_TRUE(waitFor([&] { return s.model.rowCount() == 2; }));
    ASSERT_TRUE(waitFor([&] { return s.text("0", OpTreeModel::RoundsColumn) == "2"; }));
    EXPECT_EQ(s.text("1", OpTreeModel::AnomalyColumn), "NaN");
    dump.setStatus("complete");
    ASSERT_TRUE(waitFor([&] { return state.count() > 0; }));
    EXPECT_EQ(state.back().front().toString(), "complete");
    EXPECT_TRUE(s.store.index().problems().empty());
}

TEST(DumpStore, TheInitialLoadIndexesWhatTheCommandLineReads) {
    // The loader indexes the folder as it finds it on its own thread and hands the index over
    // whole: the same index readDump builds, every change announced.
    test::TempDir dir("ui-data");
    const auto written = test::writeSmallSyntheticDump(dir.path(), 3000, 30000, 10, false);
    std::string error;
    const auto expected = analysis::readDump(dir.path(), &error);
    ASSERT_TRUE(expected) << error;
    Session s;
    QSignalSpy changed(&s.store, &data::DumpStore::changed);
    ASSERT_TRUE(s.open(dir.path()));
    const auto& idx = s.store.index();
    ASSERT_EQ(idx.rowCount(), written.rows);
    ASSERT_EQ(idx.opCount(), expected->opCount());
    ASSERT_EQ(idx.rowCount(), expected->rowCount());
    for (uint32_t op = 0; op < idx.opCount(); ++op) {
        EXPECT_EQ(idx.op(op).namePath, expected->op(op).namePath);
        EXPECT_EQ(idx.op(op).rounds, expected->op(op).rounds);
    }
    for (uint32_t row = 0; row < idx.rowCount(); row += 97) {
        for (int stat = 0; stat < analysis::kStatCount; ++stat) {
            const double got = idx.row(row).value[stat], want = expected->row(row).value[stat];
            EXPECT_TRUE(got == want || (std::isnan(got) && std::isnan(want))) << row;
        }
    }
    uint64_t announcedRows = 0, announcedOps = 0;
    for (const auto& args : changed) {
        const auto change = args.front().value<analysis::IndexChange>();
        announcedRows += change.newRows;
        announcedOps += change.newOps;
    }
    EXPECT_EQ(announcedRows, written.rows);
    EXPECT_EQ(announcedOps, written.ops);
    EXPECT_EQ(countRows(s.model), static_cast<int>(written.ops));
}

TEST(DumpStore, ASnapshotStaysAsItWasWhileTheDumpGrows) {
    test::TempDir dir("ui-data");
    test::DumpBuilder dump(dir.path());
    dump.setStatus("running");
    dump.addRow(0, "0", "layer", "Layer", false);
    dump.addRow(0, "0", "layer", "Layer", true);
    Session s;
    ASSERT_TRUE(s.open(dir.path()));
    ASSERT_EQ(s.store.index().rowCount(), 2u);
    const std::shared_ptr<const analysis::DumpIndex> snapshot = s.store.snapshot();
    EXPECT_EQ(snapshot.get(), &s.store.index());  // shared, not copied
    dump.addRow(1, "0", "layer", "Layer", false);
    dump.addRow(1, "1", "head", "Linear", true);
    ASSERT_TRUE(waitFor([&] { return s.store.index().rowCount() == 4; }));
    // The growth went to a copy: the snapshot is as it was, the store's index has it all.
    EXPECT_NE(snapshot.get(), &s.store.index());
    EXPECT_EQ(snapshot->rowCount(), 2u);
    EXPECT_EQ(snapshot->opCount(), 1u);
    EXPECT_EQ(s.store.index().opCount(), 2u);
    EXPECT_EQ(s.store.index().rounds(0), (std::vector<int32_t>{0, 1}));
    EXPECT_EQ(s.model.rowCount(), 2);
    // Without a snapshot held, growth is applied in place.
    const analysis::DumpIndex* unshared = &s.store.index();
    dump.addRow(2, "0", "layer", "Layer", false);
    ASSERT_TRUE(waitFor([&] { return s.store.index().rowCount() == 5; }));
    EXPECT_EQ(&s.store.index(), unshared);
}

TEST(DumpStore, AMassUpdateOfExistingOpsPassesTheTester) {
    // A new round touching thousands of known ops is announced as one layout change.
    test::TempDir dir("ui-data");
    const auto written = test::writeSmallSyntheticDump(dir.path(), 3000, 6000, 10);  // one round
    Session s;
    ASSERT_TRUE(s.open(dir.path()));
    QSignalSpy layout(&s.model, &QAbstractItemModel::layoutChanged);
    const QModelIndex deep = s.find("7_3_2");
    ASSERT_TRUE(deep.isValid());
    const QPersistentModelIndex kept(s.proxy.mapFromSource(deep));
    EXPECT_EQ(s.text("7_3_2", OpTreeModel::RoundsColumn), "1");
    // Round 1: the same rows again, as the runtime would append them.
    const std::string round0 = test::readFile(written.root + "/data/0_4242/0/statistic.csv");
    std::string round1;
    for (const auto& line : test::splitLines(round0)) {
        if (line.rfind("0_4242,0,", 0) != 0) {
            round1 += line + "\n";
            continue;
        }
        round1 += "0_4242,1," + line.substr(9) + "\n";
    }
    format::makeDirectories(written.root + "/data/0_4242/1");
    test::writeFile(written.root + "/data/0_4242/1/statistic.csv", round1);
    ASSERT_TRUE(waitFor([&] { return s.text("7_3_2", OpTreeModel::RoundsColumn) == "2"; }));
    EXPECT_GT(layout.count(), 0);
    EXPECT_TRUE(kept.isValid());
    EXPECT_EQ(s.proxy.mapToSource(kept), deep);
    EXPECT_EQ(countRows(s.model), 3000);
}

TEST(DumpStore, ANewerOpenMakesTheOlderResultsStale) {
    test::TempDir big("ui-data-big"), small("ui-data-small");
    test::writeSmallSyntheticDump(big.path(), 20000, 200000, 20);  // tens of polls
    const auto smallDump = test::writeSmallSyntheticDump(small.path());
    Session s;
    QSignalSpy progress(&s.store, &data::DumpStore::loadProgress);
    s.store.open(QString::fromStdString(big.path()));
    ASSERT_TRUE(waitFor([&] { return progress.count() > 0; }));  // the big one is being read
    ASSERT_TRUE(s.open(small.path()));
    EXPECT_EQ(s.store.root().toStdString(), smallDump.root);
    // Whatever the first loader still sends is dropped.
    ASSERT_TRUE(waitFor([&] { return s.store.retiringLoaders() == 0; }));
    EXPECT_EQ(s.store.index().opCount(), smallDump.ops);
    EXPECT_EQ(s.store.index().rowCount(), smallDump.rows);
    EXPECT_EQ(countRows(s.model), 60);
}

TEST(DumpStore, EachProcessHasItsOwnTree) {
    test::TempDir dir("ui-data");
    test::DumpBuilder first(dir.path(), "0_100"), second(dir.path(), "1_200");
    first.addRow(0, "0", "layer", "Layer", true);
    second.addRow(0, "0", "layer", "Layer", true);
    second.addRow(0, "1", "head", "Linear", true);
    first.setStatus("complete");
    second.setStatus("complete");
    Session s;
    QSignalSpy processes(&s.model, &OpTreeModel::processesChanged);
    ASSERT_TRUE(s.open(dir.path()));
    ASSERT_EQ(s.store.index().processCount(), 2u);
    EXPECT_GT(processes.count(), 0);
    const uint32_t other = s.store.index().findProcess("1_200");
    ASSERT_NE(other, kNone);
    const uint32_t shown = s.model.process();
    EXPECT_EQ(s.model.rowCount(), shown == other ? 2 : 1);
    s.model.setProcess(other);
    EXPECT_EQ(s.model.rowCount(), 2);
    EXPECT_EQ(s.text("1", OpTreeModel::NameColumn), "head");
    EXPECT_EQ(s.store.dumpState(), "complete");
}

TEST(DumpStore, ProblemsAndFailuresAreReported) {
    test::TempDir dir("ui-data");
    test::DumpBuilder dump(dir.path());
    dump.addRow(0, "0", "layer", "Layer", false);
    dump.appendRaw(0, "broken,line\n");
    dump.setStatus("complete");
    data::DumpStore store;
    QSignalSpy problems(&store, &data::DumpStore::problemsAdded);
    QSignalSpy loaded(&store, &data::DumpStore::initialLoadFinished);
    store.open(QString::fromStdString(dir.path()));
    ASSERT_TRUE(waitFor([&] { return loaded.count() > 0; }));
    ASSERT_GT(problems.count(), 0);
    EXPECT_TRUE(problems.front().front().toStringList().join("\n").contains(
        "statistic.csv:3: row skipped"));
    EXPECT_EQ(store.index().rowCount(), 1u);

    QSignalSpy failed(&store, &data::DumpStore::openFailed);
    test::TempDir empty("ui-data-empty");
    store.open(QString::fromStdString(empty.path()));
    ASSERT_TRUE(waitFor([&] { return failed.count() > 0; }));
    EXPECT_TRUE(failed.front().front().toString().contains("holds no dump"));
    EXPECT_FALSE(store.isOpen());
    EXPECT_EQ(store.index().opCount(), 0u);
}

TEST(DumpStore, OpensTheMsprobeLayoutAsAModuleTree) {
    test::TempDir dir("ui-data");
    test::writeMsprobeStep(dir / "dump_path", 0, test::kMsprobeDumpJson);
    test::writeMsprobeStep(dir / "dump_path", 1, test::kMsprobeDumpJson);
    Session s;
    ASSERT_TRUE(s.open(dir / "dump_path"));
    EXPECT_EQ(s.store.layout(), analysis::DumpLayout::Msprobe);
    EXPECT_EQ(s.model.rowCount(),
              2);  // the module (with its API call inside) and the parameter gradients
    const QModelIndex module = s.find("Module.fc.Linear.forward.0");
    ASSERT_TRUE(module.isValid());
    ASSERT_EQ(s.model.rowCount(module), 1);
    EXPECT_EQ(s.model.index(0, OpTreeModel::NameColumn, module).data().toString(),
              "Functional.linear.0.forward");
    EXPECT_EQ(s.model.index(0, OpTreeModel::AnomalyColumn, module).data().toString(), "NaN Inf");
    EXPECT_EQ(module.siblingAtColumn(OpTreeModel::AnomalyColumn).data().toString(),
              "NaN Inf below");
    EXPECT_EQ(s.text("Module.fc.Linear.forward.0", OpTreeModel::RoundsColumn), "2");
    // The op-level config does not apply to this layout: nothing to tick.
    EXPECT_FALSE(module.flags() & Qt::ItemIsUserCheckable);
}

TEST(OpSelection, TickingWritesIdsAndTheTreeShowsWhatTheConfigDumps) {
    test::TempDir dir("ui-data");
    test::writeSmallSyntheticDump(dir.path());
    Session s;
    ASSERT_TRUE(s.open(dir.path()));
    const QString check = QStringLiteral("\u2713");
    // The starting config dumps every layer-level op, and nothing below.
    EXPECT_EQ(s.text("0", OpTreeModel::DumpedColumn), check);
    EXPECT_EQ(s.text("0_1", OpTreeModel::DumpedColumn), "");
    QSignalSpy changed(&s.model, &QAbstractItemModel::dataChanged);
    ASSERT_TRUE(s.model.setData(s.find("1"), Qt::Checked, Qt::CheckStateRole));
    EXPECT_EQ(s.selection.config().ids, (std::vector<std::string>{"1"}));
    EXPECT_GT(changed.count(), 0);
    EXPECT_EQ(s.find("1").data(Qt::CheckStateRole).toInt(), int(Qt::Checked));
    EXPECT_EQ(s.text("1", OpTreeModel::DumpedColumn), check);
    EXPECT_EQ(s.text("0", OpTreeModel::DumpedColumn), "");  // ids given: only those
    EXPECT_EQ(s.text("1_0", OpTreeModel::DumpedColumn), "");
    // A child ticked on its own is dumped exactly.
    s.model.setData(s.find("2_3"), Qt::Checked, Qt::CheckStateRole);
    EXPECT_EQ(s.text("2_3", OpTreeModel::DumpedColumn), check);
    // save_child: a ticked op brings its descendants, shown half-ticked.
    s.selection.setIncludesChildren(true);
    EXPECT_EQ(s.find("1_0").data(Qt::CheckStateRole).toInt(), int(Qt::PartiallyChecked));
    EXPECT_EQ(s.text("1_0", OpTreeModel::DumpedColumn), check);
    EXPECT_EQ(s.text("0_0", OpTreeModel::DumpedColumn), "");
    s.model.setData(s.find("2_3"), Qt::Unchecked, Qt::CheckStateRole);
    EXPECT_EQ(s.selection.config().ids, (std::vector<std::string>{"1"}));

    // Saved through the config document that follows the selection, in the documented form, and
    // read back the same by the format library.
    data::ConfigDocument document;
    document.followSelection(&s.selection);
    const QString path = QString::fromStdString(dir / "config.json");
    QString error;
    ASSERT_TRUE(document.save(path, &error)) << error.toStdString();
    const auto reloaded = format::loadOpConfigFile(path.toStdString());
    ASSERT_TRUE(reloaded.ok());
    EXPECT_EQ(*reloaded.config, s.selection.config());
    EXPECT_FALSE(document.isModified());
    data::OpSelection other;
    data::ConfigDocument otherDocument;
    otherDocument.followSelection(&other);
    ASSERT_TRUE(otherDocument.load(path, &error)) << error.toStdString();
    EXPECT_TRUE(other.isTicked("1"));
    EXPECT_TRUE(other.includesChildren());
    // A bad file is loaded to be fixed, with its problems at their keys; the selection (what the
    // tree shows) keeps the last good config.
    test::writeFile(dir / "bad.json", R"({"task": "tensors", "save_child": "yes"})");
    ASSERT_TRUE(otherDocument.load(QString::fromStdString(dir / "bad.json"), &error));
    EXPECT_EQ(otherDocument.issuesAt("task").size(), 1);
    EXPECT_EQ(otherDocument.issuesAt("save_child").size(), 1);
    EXPECT_TRUE(other.isTicked("1"));
    EXPECT_FALSE(otherDocument.save(QString::fromStdString(dir / "bad.json"), &error));
    EXPECT_TRUE(error.contains("task")) << error.toStdString();
    EXPECT_FALSE(document.save(QString::fromStdString(dir / "no/such/dir/c.json"), &error));
    EXPECT_TRUE(error.contains("no/such/dir")) << error.toStdString();
}

TEST(OpFilterProxy, SearchAndShowKeepAncestors) {
    test::TempDir dir("ui-data");
    test::writeSmallSyntheticDump(dir.path());
    Session s;
    ASSERT_TRUE(s.open(dir.path()));
    s.proxy.setSearchText("mlp");
    // Every layer holds an mlp: three layers, each with its matching children only.
    ASSERT_EQ(s.proxy.rowCount(), 3);
    const QModelIndex layer = s.proxy.index(0, 0);
    ASSERT_GT(s.proxy.rowCount(layer), 0);
    for (int r = 0; r < s.proxy.rowCount(layer); ++r)
        EXPECT_TRUE(s.proxy.index(r, 0, layer).data().toString().contains("mlp"));
    s.proxy.setSearchText("layers.1/self");  // a path
    EXPECT_EQ(s.proxy.rowCount(), 1);
    s.proxy.setSearchText("");
    s.proxy.setShow(data::OpFilterProxy::Show::NanOnly);
    ASSERT_EQ(s.proxy.rowCount(), 1);  // only layer 2 has NaN (the layer after the overflow)
    EXPECT_EQ(s.proxy.index(0, OpTreeModel::IdColumn).data().toString(), "2");
    s.proxy.setShow(data::OpFilterProxy::Show::Anomalies);
    EXPECT_EQ(s.proxy.rowCount(), 2);
    s.proxy.setShow(data::OpFilterProxy::Show::Ticked);
    EXPECT_EQ(s.proxy.rowCount(), 0);
    s.selection.setTicked("0_2", true);
    EXPECT_EQ(s.proxy.rowCount(), 1);
    // Sorting by a statistic works on numbers, not text.
    s.proxy.setShow(data::OpFilterProxy::Show::All);
    s.proxy.sort(OpTreeModel::RoundsColumn, Qt::DescendingOrder);
    EXPECT_EQ(s.proxy.rowCount(), 3);
}

TEST(OpTensorsModel, RowsOfAnOpByRound) {
    test::TempDir dir("ui-data");
    test::writeSmallSyntheticDump(dir.path());
    Session s;
    ASSERT_TRUE(s.open(dir.path()));
    data::OpTensorsModel tensors(&s.store);
    Tester tester(&tensors, Tester::FailureReportingMode::Fatal);
    const uint32_t layer = s.store.index().findOp(0, "1");
    tensors.setOp(layer);
    ASSERT_EQ(tensors.rowCount(), 10);  // input and output, five rounds
    EXPECT_EQ(tensors.index(0, data::OpTensorsModel::RoundColumn).data().toInt(), 0);
    EXPECT_EQ(tensors.index(0, data::OpTensorsModel::DirectionColumn).data().toString(), "input");
    EXPECT_EQ(tensors.index(0, data::OpTensorsModel::FileColumn).data().toString(),
              "intensor0.bin");
    tensors.setRound(2);
    ASSERT_EQ(tensors.rowCount(), 2);
    EXPECT_EQ(tensors.index(1, data::OpTensorsModel::MaxColumn).data().toString(), "inf");
    const uint32_t row = tensors.rowAt(1);
    EXPECT_EQ(tensors.tableRowOf(row), 1);
    EXPECT_TRUE(tensors.tensorPath(row).endsWith("2/1_layers.1/after/outtensor0.bin"))
        << tensors.tensorPath(row).toStdString();
}

TEST(DumpCursor, KeepsOpTensorAndRoundTogether) {
    test::TempDir dir("ui-data");
    test::writeSmallSyntheticDump(dir.path());
    Session s;
    ASSERT_TRUE(s.open(dir.path()));
    data::DumpCursor cursor(&s.store);
    QSignalSpy ops(&cursor, &data::DumpCursor::opChanged);
    const auto& idx = s.store.index();
    const uint32_t layer = idx.findOp(0, "1");
    cursor.setOp(layer);
    EXPECT_EQ(cursor.slot(), idx.representativeSlot(layer));
    EXPECT_TRUE(idx.slot(cursor.slot()).isOutput);
    EXPECT_EQ(idx.row(cursor.row()).round, 4);  // the latest round
    const uint32_t nan = idx.firstAnomalousRow(0, analysis::kHasNan);
    cursor.setRow(nan);
    EXPECT_EQ(cursor.op(), idx.findOp(0, "2"));
    EXPECT_EQ(cursor.round(), 2);
    EXPECT_EQ(cursor.row(), nan);
    EXPECT_EQ(ops.count(), 2);
}

TEST(DumpCursor, AnOpChosenBeforeItsRowsGetsItsTensorWhenTheyCome) {
    // A model just launched: its structure is known before any statistic row is written.
    test::TempDir dir("ui-data");
    test::DumpBuilder dump(dir.path());
    dump.setStatus("running");
    format::ModelStructure model;
    model.modelName = "Starting";
    model.nodes.push_back(test::node("layer", "0", "Layer"));
    dump.writeModel(model);
    Session s;
    ASSERT_TRUE(s.open(dir.path()));
    data::DumpCursor cursor(&s.store);
    const uint32_t layer = s.store.index().findOp(0, "0");
    ASSERT_NE(layer, kNone);
    cursor.setOp(layer);
    EXPECT_EQ(cursor.slot(), kNone);
    QSignalSpy slotChanges(&cursor, &data::DumpCursor::slotChanged);
    dump.addRow(0, "0", "layer", "Layer", true);
    ASSERT_TRUE(waitFor([&] { return cursor.slot() != kNone; }));
    EXPECT_EQ(cursor.op(), layer);
    EXPECT_EQ(cursor.slot(), s.store.index().representativeSlot(layer));
    EXPECT_EQ(slotChanges.count(), 1);
    EXPECT_NE(cursor.row(), kNone);
}

TEST(StatisticsSeries, RoundsAndProfilesMarkNonFiniteValues) {
    test::TempDir dir("ui-data");
    test::writeSmallSyntheticDump(dir.path());
    Session s;
    ASSERT_TRUE(s.open(dir.path()));
    const auto& idx = s.store.index();
    const uint32_t slot = idx.representativeSlot(idx.findOp(0, "1"));
    const auto series = data::roundSeries(idx, slot, analysis::Stat::Max);
    EXPECT_EQ(series.x, (QVector<double>{0, 1, 2, 3, 4}));
    EXPECT_TRUE(std::isnan(series.y[2]));  // a gap where the value is +inf
    ASSERT_EQ(series.markers.size(), 1);
    EXPECT_EQ(series.markers[0].x, 2);
    EXPECT_EQ(series.markers[0].mark, data::PlotSeries::Mark::PosInf);
    EXPECT_TRUE(std::isfinite(series.y[3]));
    analysis::DumpIndex::ProfileOptions layers;
    layers.maxDepth = 0;
    const auto profile = data::profileSeries(idx, 0, 2, analysis::Stat::Norm, layers);
    EXPECT_EQ(profile.series.x.size(), 3);
    EXPECT_EQ(profile.layerNames, (QVector<QString>{"layers.0", "layers.1", "layers.2"}));
    EXPECT_EQ(profile.series.markers.size(), 2);  // +inf norm of layer 1, NaN of layer 2
}

QStringList childNames(const QAbstractItemModel& model, const QModelIndex& parent = {}) {
    QStringList names;
    for (int r = 0; r < model.rowCount(parent); ++r)
        names << model.index(r, OpTreeModel::NameColumn, parent).data().toString();
    return names;
}

TEST(DumpStore, TheTreeKeepsOpsInExecutionOrderWhateverOrderTheyAreFoundIn) {
    test::TempDir dir("ui-data");
    test::DumpBuilder dump(dir.path());
    dump.setStatus("running");
    dump.addRow(0, "0", "embed", "Embedding", true);
    dump.addRow(0, "6", "lm_head", "Linear", true);
    dump.addRow(0, "2_1", "layer/mlp", "Mlp", true);
    Session s;
    ASSERT_TRUE(s.open(dir.path()));
    ASSERT_EQ(childNames(s.model), (QStringList{"embed", "layer", "lm_head"}));
    const QPersistentModelIndex head = s.find("6");
    // Rows written by another thread come later: each op goes where its id puts it, under the
    // testers (the rows around an insertion stay what they were).
    dump.addRow(0, "5", "norm", "RmsNorm", true);
    dump.addRow(0, "2_0", "layer/attention", "Attention", true);
    dump.addRow(0, "10", "sample", "Sample", true);
    ASSERT_TRUE(
        waitFor([&] { return s.model.rowCount() == 5 && s.model.rowCount(s.find("2")) == 2; }));
    EXPECT_EQ(childNames(s.model), (QStringList{"embed", "layer", "norm", "lm_head", "sample"}));
    EXPECT_EQ(childNames(s.model, s.find("2")), (QStringList{"attention", "mlp"}));
    EXPECT_EQ(head.row(), 3);  // views' indexes follow
    EXPECT_EQ(childNames(s.proxy), childNames(s.model));
}

// A layer whose control flow changed in round 1 (x and y ran before b, shifting b from 0_1 to
// 0_3), as in the demo's NaN run: with round 1 chosen the tree lists b after them, where it
// ran, and not where its own id puts it (it read as if b ran before x and y). A round that
// arrives while it is chosen is listed so too, under the testers.
TEST(DumpStore, WithARoundChosenSiblingsAreListedInTheOrderTheyRanThere) {
    test::TempDir dir("ui-data");
    test::DumpBuilder dump(dir.path());
    dump.setStatus("running");
    const auto layer = [&](int round, const std::vector<std::string>& children) {
        dump.addLayerRound(round, children);
    };
    layer(0, {"a", "b"});
    layer(1, {"a", "x", "y", "b"});
    layer(2, {"a", "b"});
    Session s;
    ASSERT_TRUE(s.open(dir.path()));
    const auto& idx = s.store.index();
    const uint32_t b = idx.findOp(0, "0_1");
    ASSERT_NE(b, kNone);
    ASSERT_EQ(idx.op(b).name, "b");
    ASSERT_EQ(idx.idIn(b, 1), "0_3");  // the reader found it moved
    const QModelIndex parent = s.find("0");
    const QStringList ownOrder = childNames(s.model, parent);
    ASSERT_EQ(ownOrder.size(), 4);
    const QPersistentModelIndex selected = s.model.indexOfOp(b, OpTreeModel::IdColumn);
    const auto ids = [&] {
        QStringList texts;
        for (int r = 0; r < s.model.rowCount(s.find("0")); ++r)
            texts << s.model.index(r, OpTreeModel::IdColumn, s.find("0")).data().toString();
        return texts;
    };

    s.model.setRound(1);
    EXPECT_EQ(childNames(s.model, s.find("0")), (QStringList{"a", "x", "y", "b"}));
    EXPECT_EQ(ids(), (QStringList{"0_0", "0_1", "0_2", "0_3"}));
    EXPECT_EQ(childNames(s.proxy, s.proxy.mapFromSource(s.find("0"))),
              childNames(s.model, s.find("0")));
    EXPECT_EQ(selected.row(), 3);  // a view's selection moves with the op
    EXPECT_EQ(s.model.opAt(selected), b);
    // Sorting by id sorts by the ids shown.
    s.proxy.sort(OpTreeModel::IdColumn, Qt::DescendingOrder);
    EXPECT_EQ(childNames(s.proxy, s.proxy.mapFromSource(s.find("0"))),
              (QStringList{"b", "y", "x", "a"}));
    s.proxy.sort(-1);
    // A search by id finds the id shown: b's in round 1 (0_3), and still its own (0_1).
    s.proxy.setSearchText("0_3");
    EXPECT_EQ(childNames(s.proxy, s.proxy.mapFromSource(s.find("0"))), (QStringList{"b"}));
    s.model.setRound(-1);  // no op shows 0_3 now
    EXPECT_EQ(s.proxy.rowCount(), 0);
    s.model.setRound(1);
    EXPECT_EQ(childNames(s.proxy, s.proxy.mapFromSource(s.find("0"))), (QStringList{"b"}));
    s.proxy.setSearchText("0_1");
    EXPECT_TRUE(childNames(s.proxy, s.proxy.mapFromSource(s.find("0"))).contains("b"));
    s.proxy.setSearchText("");
    s.model.setRound(0);  // b ran under its own id there
    EXPECT_EQ(childNames(s.model, s.find("0")), ownOrder);
    EXPECT_EQ(s.model.opAt(selected), b);
    s.model.setRound(-1);
    EXPECT_EQ(childNames(s.model, s.find("0")), ownOrder);

    // Round 3, chosen before it is written: z ran before b there. Once a round's rows are read
    // (`children` rows under the layer, b at 0_2 in it), round 3 is listed in its order: z before
    // b, the selection on b, the proxy alike.
    const auto listedInRound3 = [&](int round, int children) {
        ASSERT_TRUE(waitFor([&] { return s.model.rowCount(s.find("0")) == children; }));
        ASSERT_TRUE(waitFor([&] { return idx.idIn(b, round) == "0_2"; }));
        const QStringList listed = childNames(s.model, s.find("0"));
        ASSERT_EQ(listed.size(), children);
        EXPECT_LT(listed.indexOf("z"), listed.indexOf("b"));
        EXPECT_EQ(listed.front(), "a");
        EXPECT_EQ(s.model.opAt(selected), b);
        EXPECT_EQ(selected.row(), listed.indexOf("b"));
        EXPECT_EQ(childNames(s.proxy, s.proxy.mapFromSource(s.find("0"))), listed);
    };
    s.model.setRound(3);
    layer(3, {"a", "z", "b"});
    ASSERT_NO_FATAL_FAILURE(listedInRound3(3, 5));

    // Round 4 brings a new op under the layer while round 3, listed in its own order, stays
    // chosen: the new row goes in, the order of round 3 stays, and every index views are told of
    // names the op it stands for.
    std::vector<std::pair<QModelIndex, QModelIndex>> told;
    QObject::connect(
        &s.model, &QAbstractItemModel::dataChanged,
        [&](const QModelIndex& from, const QModelIndex& to) { told.emplace_back(from, to); });
    layer(4, {"a", "w", "b"});
    ASSERT_NO_FATAL_FAILURE(listedInRound3(4, 6));
    ASSERT_TRUE(waitFor([&] { return !told.empty(); }));
    for (const auto& [from, to] : told)
        for (const QModelIndex& index : {from, to})
            EXPECT_EQ(index, s.model.index(index.row(), index.column(), index.parent()));

    // Round 5 runs a alone: b, which ran under other ids, shows none there (its own read as this
    // round's); x, which has only its own, shows it; both greyed.
    layer(5, {"a"});
    ASSERT_TRUE(waitFor(
        [&] { return s.store.index().op(s.store.index().findOp(0, "0")).rounds.size() == 6; }));
    s.model.setRound(5);
    const auto idOf = [&](uint32_t op) {
        return s.model.indexOfOp(op, OpTreeModel::IdColumn).data().toString();
    };
    EXPECT_EQ(idOf(b), "");
    uint32_t x = kNone;
    for (uint32_t child : idx.op(idx.findOp(0, "0")).children)
        if (idx.op(child).name == "x") x = child;
    ASSERT_NE(x, kNone);
    EXPECT_EQ(idOf(x), "0_1");
    EXPECT_TRUE(s.model.indexOfOp(b).data(Qt::ForegroundRole).isValid());
}

TEST(DumpStore, MsprobeOpsFirstSeenInALaterStepGoWhereTheyRan) {
    test::TempDir dir("ui-data");
    test::writeMsprobeStep(dir / "dump_path", 1,
                           test::msprobeCalls({{"Torch.matmul.0.forward", 1},
                                               {"Torch.relu.0.forward", 2},
                                               {"Functional.linear.1.forward", 3}}));
    Session s;
    ASSERT_TRUE(s.open(dir / "dump_path"));
    ASSERT_EQ(s.model.rowCount(), 3);
    // Step 2 runs an extra op first and another in the middle.
    test::writeMsprobeStep(dir / "dump_path", 2,
                           test::msprobeCalls({{"Tensor.__mul__.0.forward", 10},
                                               {"Torch.matmul.0.forward", 11},
                                               {"Torch.relu.0.forward", 12},
                                               {"Tensor.__add__.0.forward", 13},
                                               {"Functional.linear.1.forward", 14}}));
    ASSERT_TRUE(waitFor([&] { return s.model.rowCount() == 5; }));
    const QStringList order{"Tensor.__mul__.0.forward", "Torch.matmul.0.forward",
                            "Torch.relu.0.forward", "Tensor.__add__.0.forward",
                            "Functional.linear.1.forward"};
    EXPECT_EQ(childNames(s.model), order);
    // Opened whole, the same order.
    Session whole;
    ASSERT_TRUE(whole.open(dir / "dump_path"));
    EXPECT_EQ(childNames(whole.model), order);
}

TEST(StatisticsSeries, APinnedRoundIsPlacedOpByOpNotByPosition) {
    // Step 2 runs an extra op first (an `x * 2` in the training script): step 1's values belong
    // at the same ops of step 2's axis, with a gap at the op step 1 did not run.
    test::TempDir dir("ui-data");
    test::writeMsprobeStep(dir / "dump_path", 1,
                           test::msprobeCalls({{"Torch.matmul.0.forward", 1},
                                               {"Torch.relu.0.forward", 2},
                                               {"Functional.linear.1.forward", 3}}));
    test::writeMsprobeStep(dir / "dump_path", 2,
                           test::msprobeCalls({{"Tensor.__mul__.0.forward", 10},
                                               {"Torch.matmul.0.forward", 11},
                                               {"Torch.relu.0.forward", 12},
                                               {"Functional.linear.1.forward", 13}}));
    Session s;
    ASSERT_TRUE(s.open(dir / "dump_path"));
    const auto& idx = s.store.index();
    analysis::DumpIndex::ProfileOptions layers;
    layers.maxDepth = 0;
    const auto step2 = data::profileSeries(idx, 0, 2, analysis::Stat::Norm, layers);
    ASSERT_EQ(step2.series.y, (QVector<double>{10, 11, 12, 13}));
    const auto step1 =
        data::alignedProfileSeries(idx, 0, 1, analysis::Stat::Norm, layers, step2.series);
    ASSERT_EQ(step1.x, step2.series.x);
    EXPECT_TRUE(std::isnan(step1.y[0]));
    EXPECT_EQ(step1.rows[0], kNone);
    EXPECT_EQ(step1.y.mid(1), (QVector<double>{1, 2, 3}));
    EXPECT_EQ(idx.row(step1.rows[1]).round, 1);

    // The other way round: step 2 on step 1's axis leaves out the op step 1 lacks.
    const auto step1Own = data::profileSeries(idx, 0, 1, analysis::Stat::Norm, layers);
    EXPECT_EQ(
        data::alignedProfileSeries(idx, 0, 2, analysis::Stat::Norm, layers, step1Own.series).y,
        (QVector<double>{11, 12, 13}));
}

TEST(StatisticsSeries, APinnedAtbRoundIsPlacedByOpId) {
    test::TempDir dir("ui-data");
    test::DumpBuilder dump(dir.path());
    dump.addRow(1, "0", "embed", "Embedding", true, {3, 4});  // norm 5
    dump.addRow(1, "2", "head", "Linear", true, {6, 8});      // norm 10
    dump.addRow(2, "0", "embed", "Embedding", true, {0, 1});  // norm 1
    dump.addRow(2, "1", "layer", "Layer", true, {0, 2});      // norm 2, only in round 2
    dump.addRow(2, "2", "head", "Linear", true, {0, 3});      // norm 3
    dump.setStatus("complete");
    Session s;
    ASSERT_TRUE(s.open(dir.path()));
    const auto& idx = s.store.index();
    analysis::DumpIndex::ProfileOptions layers;
    layers.maxDepth = 0;
    const auto round2 = data::profileSeries(idx, 0, 2, analysis::Stat::Norm, layers);
    ASSERT_EQ(round2.series.y, (QVector<double>{1, 2, 3}));
    const auto round1 =
        data::alignedProfileSeries(idx, 0, 1, analysis::Stat::Norm, layers, round2.series);
    ASSERT_EQ(round1.y.size(), 3);
    EXPECT_EQ(round1.y[0], 5);
    EXPECT_TRUE(std::isnan(round1.y[1]));
    EXPECT_EQ(round1.y[2], 10);
}

TEST(TensorDocument, LoadsRendersAndPagesATensor) {
    test::TempDir dir("ui-data");
    test::DumpBuilder dump(dir.path());
    std::vector<float> values(300 * 4);
    for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 7) - 2.0f;
    values[5] = std::nanf("");
    values[6] = INFINITY;
    const auto row = dump.addRow(0, "0", "layer", "Layer", true, values, {300, 4});
    data::TensorDocument document;
    QSignalSpy loaded(&document, &data::TensorDocument::loaded);
    QSignalSpy image(&document, &data::TensorDocument::imageReady);
    data::TensorValuesModel valuesModel(&document);
    Tester tester(&valuesModel, Tester::FailureReportingMode::Fatal);
    document.open(QString::fromStdString(row.tensorPath));
    ASSERT_TRUE(waitFor([&] { return image.count() > 0; }));
    ASSERT_TRUE(document.tensor());
    EXPECT_EQ(document.tensor()->stats.nanCount, 1u);
    EXPECT_EQ(document.histogram().nan, 1u);
    EXPECT_EQ(document.histogram().posInf, 1u);
    EXPECT_EQ(document.geometry().rows, 300);
    EXPECT_EQ(document.geometry().cols, 4);
    // The image: one pixel per element; NaN red, Inf green, values grey.
    const QImage& img = document.image().image;
    ASSERT_EQ(img.size(), QSize(4, 300));
    EXPECT_EQ(QColor(img.pixel(1, 1)), QColor(230, 20, 20));
    EXPECT_EQ(QColor(img.pixel(2, 1)), QColor(20, 210, 40));
    EXPECT_EQ(QColor(img.pixel(0, 0)).red(), QColor(img.pixel(0, 0)).blue());
    // The overlay shows negative values blue.
    image.clear();
    document.setOverlay(data::TensorDocument::Overlay::NanInfNegative);
    ASSERT_TRUE(waitFor([&] { return image.count() > 0; }));
    const QColor negative(document.image().image.pixel(0, 0));  // value -2
    EXPECT_EQ(negative.red(), 0);
    EXPECT_GT(negative.blue(), 90);
    // Values a page at a time.
    EXPECT_EQ(valuesModel.pageCount(), 2);
    EXPECT_EQ(valuesModel.rowCount(), data::TensorValuesModel::kPageRows);
    EXPECT_EQ(valuesModel.columnCount(), 4);
    EXPECT_EQ(valuesModel.index(1, 1).data().toString(), "nan");
    EXPECT_EQ(valuesModel.index(1, 2).data().toString(), "inf");
    EXPECT_EQ(valuesModel.index(0, 0).data().toString(), "-2");
    valuesModel.setPage(1);
    EXPECT_EQ(valuesModel.rowCount(), 300 - data::TensorValuesModel::kPageRows);
    EXPECT_EQ(valuesModel.headerData(0, Qt::Vertical).toString(),
              QString::number(data::TensorValuesModel::kPageRows));
    // A big slice is drawn a block per pixel, keeping its NaN visible.
    const auto small = data::TensorDocument::renderSlice(*document.tensor(), 0, 300, 4,
                                                         data::TensorDocument::Overlay::None, 100);
    EXPECT_EQ(small.blockSize, 3);
    EXPECT_EQ(QColor(small.image.pixel(0, 0)), QColor(230, 20, 20));
}

// Values near the largest double: the greys still run from black at the least to white at the
// most (the span between them is beyond a double: every value was drawn black), also a block
// per pixel (whose sum is beyond one too).
TEST(TensorDocument, ValuesNearTheLargestDoubleAreDrawnInTheirGreys) {
    test::TempDir dir("ui-data");
    const std::vector<double> values = {1e308, -1e308, 0, 1e308, -1e308, 0};
    format::BinHeader header;
    header.dtypeCode = static_cast<int32_t>(format::DType::Double);
    header.dims = {2, 3};
    header.dataLength = values.size() * sizeof(double);
    std::string bytes = format::makeBinHeader(header);
    bytes.append(reinterpret_cast<const char*>(values.data()), header.dataLength);
    const std::string path = dir.path() + "/huge.bin";
    test::writeFile(path, bytes);
    data::TensorDocument document;
    QSignalSpy image(&document, &data::TensorDocument::imageReady);
    document.open(QString::fromStdString(path));
    ASSERT_TRUE(waitFor([&] { return image.count() > 0; }));
    const QImage& img = document.image().image;
    ASSERT_EQ(img.size(), QSize(3, 2));
    EXPECT_EQ(QColor(img.pixel(0, 0)), QColor(255, 255, 255));  // 1e308
    EXPECT_EQ(QColor(img.pixel(1, 0)), QColor(0, 0, 0));        // -1e308
    EXPECT_EQ(QColor(img.pixel(2, 0)), QColor(128, 128, 128));  // 0, halfway
    // Blocks of two rows: each the mean of equal values.
    const auto blocks = data::TensorDocument::renderSlice(*document.tensor(), 0, 2, 3,
                                                          data::TensorDocument::Overlay::None, 2);
    ASSERT_EQ(blocks.blockSize, 2);
    ASSERT_EQ(blocks.image.size(), QSize(2, 1));
    EXPECT_EQ(QColor(blocks.image.pixel(0, 0)), QColor(128, 128, 128));  // 1e308, -1e308 twice
    EXPECT_EQ(QColor(blocks.image.pixel(1, 0)), QColor(128, 128, 128));  // 0 and 0
    // The least subnormal against 0: black and white too (halved, their span was 0).
    const std::vector<double> tiny = {0, 5e-324};
    header.dims = {1, 2};
    header.dataLength = tiny.size() * sizeof(double);
    bytes = format::makeBinHeader(header);
    bytes.append(reinterpret_cast<const char*>(tiny.data()), header.dataLength);
    test::writeFile(path, bytes);
    image.clear();
    document.open(QString::fromStdString(path));
    ASSERT_TRUE(waitFor([&] { return image.count() > 0; }));
    EXPECT_EQ(QColor(document.image().image.pixel(0, 0)), QColor(0, 0, 0));
    EXPECT_EQ(QColor(document.image().image.pixel(1, 0)), QColor(255, 255, 255));
}

// A complex tensor's cells show both parts, as Python prints them ("3-4.5j"); a NaN or an Inf in
// either part colours the cell (only the real parts were shown: an imaginary NaN was invisible).
TEST(TensorDocument, ShowsBothPartsOfComplexValues) {
    test::TempDir dir("ui-data");
    const std::vector<float> parts = {3, 4, 3, -4.5f, -1, std::nanf(""), 0.25f, INFINITY};
    format::BinHeader header;
    header.dtypeCode = static_cast<int32_t>(format::DType::Complex64);
    header.dims = {2, 2};
    header.dataLength = parts.size() * sizeof(float);
    std::string bytes = format::makeBinHeader(header);
    bytes.append(reinterpret_cast<const char*>(parts.data()), header.dataLength);
    const std::string path = dir.path() + "/complex.bin";
    test::writeFile(path, bytes);

    data::TensorDocument document;
    QSignalSpy image(&document, &data::TensorDocument::imageReady);
    data::TensorValuesModel valuesModel(&document);
    Tester tester(&valuesModel, Tester::FailureReportingMode::Fatal);
    document.open(QString::fromStdString(path));
    ASSERT_TRUE(waitFor([&] { return image.count() > 0; }));
    ASSERT_TRUE(document.tensor()) << document.error().toStdString();
    ASSERT_EQ(valuesModel.rowCount(), 2);
    ASSERT_EQ(valuesModel.columnCount(), 2);
    EXPECT_EQ(valuesModel.index(0, 0).data().toString(), "3+4j");
    EXPECT_EQ(valuesModel.index(0, 1).data().toString(), "3-4.5j");
    EXPECT_EQ(valuesModel.index(1, 0).data().toString(), "-1+nanj");
    EXPECT_EQ(valuesModel.index(1, 1).data().toString(), "0.25+infj");
    EXPECT_EQ(valuesModel.index(0, 1).data(Qt::ToolTipRole).toString(),
              "element 1: real part 3, imaginary part -4.5");
    EXPECT_FALSE(valuesModel.index(0, 0).data(Qt::BackgroundRole).isValid());
    EXPECT_EQ(valuesModel.index(1, 0).data(Qt::BackgroundRole).value<QColor>(),
              QColor(255, 190, 190));  // NaN's, though its real part is -1
    EXPECT_EQ(valuesModel.index(1, 1).data(Qt::BackgroundRole).value<QColor>(),
              QColor(190, 255, 190));  // Inf's
}

// The Values tab shows each value exactly, in its own precision, as the .csv export writes it:
// seven significant digits showed two floats one ulp apart alike, and an index of eight digits
// as 1.234568e+07.
TEST(TensorDocument, ShowsEveryValueExactly) {
    test::TempDir dir("ui-data");
    // The Values tab's first row for a one-dimensional tensor of these bytes.
    const auto shown = [&](format::DType dtype, const std::string& bytes, int64_t count) {
        format::BinHeader header;
        header.dtypeCode = static_cast<int32_t>(dtype);
        header.dims = {count};
        header.dataLength = bytes.size();
        const std::string path =
            dir.path() + "/" + std::to_string(static_cast<int>(dtype)) + ".bin";
        test::writeFile(path, format::makeBinHeader(header) + bytes);
        data::TensorDocument document;
        data::TensorValuesModel values(&document);
        QSignalSpy image(&document, &data::TensorDocument::imageReady);
        document.open(QString::fromStdString(path));
        QStringList texts;
        if (!waitFor([&] { return image.count() > 0; })) return texts;
        for (int c = 0; c < values.columnCount(); ++c)
            texts << values.index(0, c).data().toString();
        return texts;
    };
    const auto bytesOf = [](const auto& values) {
        return std::string(reinterpret_cast<const char*>(values.data()),
                           values.size() * sizeof(values[0]));
    };
    const float one = 1.0f, next = std::nextafter(one, 2.0f), after = std::nextafter(next, 2.0f);
    const std::vector<float> floats = {one, next, after, 0.1f, -3.5e-8f};
    const QStringList floatTexts = shown(format::DType::Float, bytesOf(floats), 5);
    ASSERT_EQ(floatTexts.size(), 5);
    EXPECT_EQ(floatTexts[0], "1");
    EXPECT_EQ(floatTexts[3], "0.1");
    EXPECT_NE(floatTexts[1], floatTexts[2]);
    for (int c = 0; c < 5; ++c)  // each reads back to its float
        EXPECT_EQ(std::strtof(floatTexts[c].toStdString().c_str(), nullptr), floats[c]) << c;

    const std::vector<int64_t> indices = {12345678, 100000, 10000000, 9007199254740993};
    EXPECT_EQ(shown(format::DType::Int64, bytesOf(indices), 4),
              (QStringList{"12345678", "100000", "10000000", "9007199254740993"}));
    const std::vector<float> round = {100000.0f, 1e-5f, 3e20f};
    EXPECT_EQ(shown(format::DType::Float, bytesOf(round), 3),
              (QStringList{"100000", "1e-05", "3e+20"}));

    const std::vector<double> doubles = {0.1, 1.0 / 3.0};
    const QStringList doubleTexts = shown(format::DType::Double, bytesOf(doubles), 2);
    ASSERT_EQ(doubleTexts.size(), 2);
    EXPECT_EQ(doubleTexts[0], "0.1");
    EXPECT_EQ(std::strtod(doubleTexts[1].toStdString().c_str(), nullptr), 1.0 / 3.0);
}

TEST(TensorDocument, FollowsDeduplicatedFilesAndReportsBrokenOnes) {
    test::TempDir dir("ui-data");
    test::DumpBuilder dump(dir.path());
    const auto first = dump.addRow(0, "2_1", "layer/mm", "aten::mm", true, {1, 2, 3, 4}, {2, 2});
    format::StatRow second = first;
    second.opId = "2_2";
    second.opName = "layer/add";
    second.isOutput = false;
    second.tensorPath =
        dump.writeAliasBin(0, "2_2_add/before/intensor0.bin", "2_1_outtensor0.bin", {2, 2});
    dump.appendRaw(0, format::formatStatRow(second));
    dump.setStatus("complete");
    Session s;
    ASSERT_TRUE(s.open(dir.path()));
    const auto& idx = s.store.index();
    const uint32_t row = idx.slotRow(idx.op(idx.findOp(0, "2_2")).tensorSlots[0], 0);
    data::TensorDocument document;
    QSignalSpy image(&document, &data::TensorDocument::imageReady);
    document.open(QString::fromStdString(second.tensorPath), [&](const QString& alias) {
        return QString::fromStdString(idx.resolveTensorAlias(row, alias.toStdString()));
    });
    ASSERT_TRUE(waitFor([&] { return image.count() > 0; }));
    EXPECT_TRUE(document.note().contains("De-duplicated")) << document.note().toStdString();
    EXPECT_EQ(document.tensor()->at(3), 4.0);

    // A header-only file naming itself as its first copy (a damaged dump): it showed as an empty
    // heatmap. Now a message, and no tensor to draw.
    format::StatRow third = second;
    third.opId = "2_3";
    third.opName = "layer/mul";
    third.tensorPath =
        dump.writeAliasBin(0, "2_3_mul/before/intensor0.bin", "2_3_intensor0.bin", {2, 2});
    dump.appendRaw(0, format::formatStatRow(third));
    Session again;
    ASSERT_TRUE(again.open(dir.path()));
    const auto& index = again.store.index();
    const uint32_t selfRow = index.slotRow(index.op(index.findOp(0, "2_3")).tensorSlots[0], 0);
    QSignalSpy selfFailed(&document, &data::TensorDocument::failed);
    document.open(QString::fromStdString(third.tensorPath), [&](const QString& alias) {
        return QString::fromStdString(index.resolveTensorAlias(selfRow, alias.toStdString()));
    });
    ASSERT_TRUE(waitFor([&] { return selfFailed.count() > 0; }));
    EXPECT_TRUE(document.error().contains("names itself")) << document.error().toStdString();
    EXPECT_FALSE(document.tensor());
    // No "the data was written once, in <this file>" beside it.
    EXPECT_TRUE(document.note().isEmpty()) << document.note().toStdString();

    // A truncated file: a message, no tensor.
    std::string bytes = test::readFile(first.tensorPath);
    test::writeFile(dir / "cut.bin", bytes.substr(0, bytes.size() - 3));
    QSignalSpy failed(&document, &data::TensorDocument::failed);
    document.open(QString::fromStdString(dir / "cut.bin"));
    ASSERT_TRUE(waitFor([&] { return failed.count() > 0; }));
    EXPECT_TRUE(document.error().contains("cut.bin")) << document.error().toStdString();
    EXPECT_FALSE(document.tensor());
}

TEST(TensorDocument, ACraftedHeaderIsAMessageNotAnException) {
    // A length near 2^64 was resized for on the loading thread: QUnhandledException took the
    // application down.
    test::TempDir dir("ui-data");
    const std::string path = dir / "crafted.bin";
    test::writeFile(
        path,
        "$Version=1.0\n$Object.Count=1\n$Object.Length=18446744073709551615\nformat=2\ndtype=0\n"
        "dims=4\n$Object.data=0,18446744073709551615\n$End=1\n0123456789abcdef");
    data::TensorDocument document;
    QSignalSpy failed(&document, &data::TensorDocument::failed);
    document.open(QString::fromStdString(path));
    ASSERT_TRUE(waitFor([&] { return failed.count() > 0; }));
    EXPECT_TRUE(document.error().startsWith(QString::fromStdString(path + ": header line 3:")))
        << document.error().toStdString();
    EXPECT_FALSE(document.tensor());
}

// One bad and one good value of a key, as the form would write them.
struct KeyCase {
    std::string key;
    data::ConfigDocument::Json bad, good;
};

// Sets each key to a bad value, then to a good one, and checks that the document's issues at
// that key are exactly what the format library says about the same text.
void checkEveryKey(data::ConfigDocument& document, const std::vector<KeyCase>& cases) {
    using Kind = data::ConfigDocument::Kind;
    std::vector<std::string> covered;
    for (const auto& c : cases) {
        SCOPED_TRACE(c.key);
        covered.push_back(c.key);
        ASSERT_TRUE(document.setValue(c.key, c.bad));
        const std::string text = document.text().toStdString();
        const auto library = document.kind() == Kind::Op ? format::parseOpConfig(text, "x").issues
                                                         : format::parseApiConfig(text, "x").issues;
        ASSERT_EQ(library.size(), 1u) << format::describeIssues(library);
        EXPECT_EQ(library[0].key, c.key);
        const QStringList shown = document.issuesAt(c.key);
        ASSERT_EQ(shown.size(), 1) << shown.join('\n').toStdString();
        EXPECT_TRUE(shown[0].startsWith(QString::fromStdString(library[0].problem)))
            << shown[0].toStdString();
        EXPECT_TRUE(document.hasErrors());
        EXPECT_TRUE(
            document.generalIssues(data::ConfigDocument::formKeys(document.kind())).isEmpty());
        ASSERT_TRUE(document.setValue(c.key, c.good));
        EXPECT_TRUE(document.issuesAt(c.key).isEmpty())
            << document.issuesAt(c.key).join('\n').toStdString();
        EXPECT_FALSE(document.hasErrors()) << document.text().toStdString();
        EXPECT_EQ(document.value(c.key), c.good);
    }
    // The cases cover the whole form.
    EXPECT_EQ(covered, data::ConfigDocument::formKeys(document.kind()));
}

TEST(ConfigDocument, EveryOpLevelKeyIsJudgedByTheFormatLibrary) {
    data::ConfigDocument document;
    ASSERT_EQ(document.kind(), data::ConfigDocument::Kind::Op);
    EXPECT_FALSE(document.hasErrors());
    checkEveryKey(document, {{"task", "tensors", "all"},
                             {"dump_enable", "yes", true},
                             {"exec_range", "3,1", "0,5"},
                             {"ids", "1,,2", "0,2_1"},
                             {"op_name", "a,,b", "Prefill_layer"},
                             {"save_child", 1, true},
                             {"device", "gpu0", "0,1"},
                             {"filter_level", 3, 2}});
    ASSERT_TRUE(document.opConfig());
    EXPECT_EQ(document.opConfig()->ids, (std::vector<std::string>{"0", "2_1"}));
    EXPECT_EQ(document.opConfig()->filterLevel, 2);
    // Syntax errors and unknown keys are for the whole text, with line and column.
    document.setText("{\n  \"task\": \"all\",\n  \"dump_enabel\": true\n}\n");
    EXPECT_EQ(document.generalIssues(data::ConfigDocument::formKeys(document.kind()))
                  .join('\n')
                  .toStdString(),
              "key \"dump_enabel\": unknown key (a misspelling?); accepted: task, dump_enable, "
              "exec_range, ids, op_name, "
              "save_child, device, filter_level, grad_monitor, overflow_nums, stop_after_overflow");
    document.setText("{\n  \"task\": \"all\",\n  \"ids\" \"1\"\n}\n");
    EXPECT_FALSE(document.isObject());
    const QStringList general =
        document.generalIssues(data::ConfigDocument::formKeys(document.kind()));
    ASSERT_EQ(general.size(), 1);
    EXPECT_TRUE(general[0].startsWith("line 3, column")) << general[0].toStdString();
    EXPECT_FALSE(document.setValue("task", "all"));  // the form waits for valid JSON
}

TEST(ConfigDocument, EveryCodeLevelKeyIsJudgedByTheFormatLibrary) {
    data::ConfigDocument document;
    document.startNew(data::ConfigDocument::Kind::Api);
    EXPECT_FALSE(document.hasErrors()) << document.text().toStdString();
    checkEveryKey(document,
                  {{"task", "dump", "tensor"},
                   {"dump_path", "", "./my_dump"},
                   {"rank", {"x"}, {0, "2-3"}},
                   {"step", {-1}, {1}},
                   {"level", "L3", "mix"},
                   {"seed", -1, 42},
                   {"is_deterministic", "no", true},
                   {"extra_info", 0, false},
                   {"statistics.scope", {"relu"}, data::ConfigDocument::Json::array()},
                   {"statistics.list", "relu", {"relu"}},
                   {"statistics.data_mode", {"all", "forward"}, {"forward", "input"}},
                   {"statistics.summary_mode", "sha", "md5"},
                   {"tensor.scope", {"a", "b", "c"}, data::ConfigDocument::Json::array()},
                   {"tensor.list", 3, data::ConfigDocument::Json::array()},
                   {"tensor.data_mode", data::ConfigDocument::Json::array(), {"backward"}}});
    ASSERT_TRUE(document.apiConfig());
    EXPECT_EQ(document.apiConfig()->rank, (std::vector<int64_t>{0, 2, 3}));
    EXPECT_EQ(document.apiConfig()->statistics.summaryMode, "md5");
    // msprobe keys this tool ignores are warnings, not errors.
    ASSERT_TRUE(document.setValue("async_dump", false));
    EXPECT_FALSE(document.hasErrors());
    EXPECT_TRUE(document.generalIssues(data::ConfigDocument::formKeys(document.kind()))
                    .join('\n')
                    .contains("warning"));
}

// Why the form cannot be used, said where the form is: a number out of range in what reads as an
// object (the editor said only "not a JSON object"), a JSON value of another kind.
TEST(ConfigDocument, SaysWhyTheTextIsNoObject) {
    data::ConfigDocument document;
    document.setText("{\"task\": \"statistics\", \"overflow_nums\": 1e999}");
    EXPECT_FALSE(document.isObject());
    EXPECT_TRUE(document.notAnObjectWhy().startsWith("line 1, column "))
        << document.notAnObjectWhy().toStdString();
    EXPECT_TRUE(document.notAnObjectWhy().contains("1e999"))
        << document.notAnObjectWhy().toStdString();
    document.setText("[1, 2]");
    EXPECT_EQ(document.notAnObjectWhy(), "it is a JSON array");
    document.setText("{}");
    EXPECT_TRUE(document.isObject());
    EXPECT_TRUE(document.notAnObjectWhy().isEmpty());
}

TEST(ConfigDocument, TextRoundTripAndFiles) {
    test::TempDir dir("ui-data");
    data::ConfigDocument document;
    QSignalSpy changed(&document, &data::ConfigDocument::changed);
    // Written by hand: its key order is kept when the form changes a key.
    const QString typed =
        "{\"save_child\": true, \"task\": \"statistics\", \"dump_enable\": true, \"exec_range\": "
        "\"all\"}";
    document.setText(typed);
    EXPECT_TRUE(document.isModified());
    EXPECT_EQ(changed.count(), 1);
    EXPECT_EQ(document.value("save_child"), true);
    EXPECT_TRUE(document.value("ids").is_null());
    EXPECT_FALSE(document.contains("ids"));
    ASSERT_TRUE(document.setValue("ids", "3"));
    const auto rewritten = nlohmann::ordered_json::parse(document.text().toStdString());
    std::vector<std::string> keys;
    for (const auto& item : rewritten.items()) keys.push_back(item.key());
    EXPECT_EQ(keys,
              (std::vector<std::string>{"save_child", "task", "dump_enable", "exec_range", "ids"}));
    // Saved atomically; the file is what the format library reads back as the same config.
    const QString path = QString::fromStdString(dir / "op.json");
    QString error;
    ASSERT_TRUE(document.save(path, &error)) << error.toStdString();
    EXPECT_FALSE(document.isModified());
    EXPECT_EQ(document.filePath(), path);
    EXPECT_EQ(QString::fromStdString(test::readFile(path.toStdString())), document.text());
    const auto reread = format::loadOpConfigFile(path.toStdString());
    ASSERT_TRUE(reread.ok());
    EXPECT_EQ(*reread.config, *document.opConfig());
    // An edit taken back is no edit: it kept its "*", and was kept over the next session's
    // config as the user's (found by a new user).
    const QString saved = document.text();
    document.setText(saved + "xx");
    EXPECT_TRUE(document.isModified());
    document.setText(saved);
    EXPECT_FALSE(document.isModified());

    // A code-level file is recognised by its keys when loaded.
    test::writeFile(
        dir / "api.json",
        R"({"task": "tensor", "level": "L0", "step": ["0-2"], "tensor": {"data_mode": ["forward"]}})");
    ASSERT_TRUE(document.load(QString::fromStdString(dir / "api.json"), &error))
        << error.toStdString();
    EXPECT_EQ(document.kind(), data::ConfigDocument::Kind::Api);
    EXPECT_FALSE(document.isModified());
    ASSERT_TRUE(document.apiConfig());
    EXPECT_EQ(document.apiConfig()->step, (std::vector<int64_t>{0, 1, 2}));
    ASSERT_TRUE(document.setValue("tensor.list", {"relu"}));
    ASSERT_TRUE(document.save(QString::fromStdString(dir / "api2.json"), &error));
    const auto api = format::loadApiConfigFile(dir / "api2.json");
    ASSERT_TRUE(api.ok());
    EXPECT_EQ(api.config->tensor.list, (std::vector<std::string>{"relu"}));
    EXPECT_EQ(api.config->level, "L0");
    // Unreadable files say so.
    EXPECT_FALSE(document.load(QString::fromStdString(dir / "absent.json"), &error));
    EXPECT_TRUE(error.contains("absent.json")) << error.toStdString();
}

TEST(ConfigDocument, FollowsTheOpSelectionBothWays) {
    data::OpSelection selection;
    data::ConfigDocument document;
    document.followSelection(&selection);
    EXPECT_EQ(*document.opConfig(), selection.config());
    // Ticks in the tree write ids and save_child into the text.
    selection.setTicked("2", true);
    selection.setTicked("0_1", true);
    selection.setIncludesChildren(true);
    EXPECT_EQ(document.value("ids"), "2,0_1");
    EXPECT_EQ(document.value("save_child"), true);
    EXPECT_TRUE(document.isModified());
    // The text's ids become the ticks.
    ASSERT_TRUE(document.setValue("ids", "3"));
    EXPECT_TRUE(selection.isTicked("3"));
    EXPECT_FALSE(selection.isTicked("2"));
    // A half-edited text keeps its other keys when a tick arrives; the tree keeps its last good
    // config meanwhile.
    ASSERT_TRUE(document.setValue("exec_range", "5,"));
    EXPECT_TRUE(document.hasErrors());
    selection.setTicked("4", true);
    EXPECT_EQ(document.value("ids"), "3,4");
    EXPECT_EQ(document.value("exec_range"), "5,");
    ASSERT_TRUE(document.setValue("exec_range", "5,9"));
    EXPECT_EQ(selection.config().execRange.toString(), "5,9");
    EXPECT_TRUE(selection.isTicked("4"));
    // A code-level document leaves the tree alone.
    document.startNew(data::ConfigDocument::Kind::Api);
    selection.setTicked("1", true);
    EXPECT_FALSE(document.contains("ids"));
    // Back to op-level: the tree's config, ticks included.
    document.startNew(data::ConfigDocument::Kind::Op);
    EXPECT_EQ(document.value("ids"), "3,4,1");
}

}  // namespace
}  // namespace probe
