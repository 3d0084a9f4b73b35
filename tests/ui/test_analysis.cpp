// The Qt-free readers and index (ui/analysis): both layouts, complete and growing dumps, and
// broken files, which must give messages and never crash.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>

#include "analysis/atb_dump.h"
#include "analysis/atb_dump_reader.h"
#include "analysis/compare.h"
#include "analysis/compare_report.h"
#include "analysis/dump_reader.h"
#include "analysis/key_table.h"
#include "analysis/msprobe_dump.h"
#include "analysis/overflow_check.h"
#include "analysis/parallel_for.h"
#include "analysis/tensor_export.h"
#include "analysis/tensor_view.h"
#include "dump_builder.h"
#include "probe/format/file_util.h"
#include "probe/format/structure_json.h"
#include "probe/format/tensor_bin.h"
#include "read_dump.h"
#include "synthetic_dump.h"
#include "test_support.h"

namespace probe {
namespace {

using analysis::DumpIndex;
using analysis::kNone;

// Reads everything there is now, `budget` bytes of rows per poll.
DumpIndex readAll(analysis::DumpReader& reader, uint64_t budget = analysis::kDefaultPollBudget) {
    DumpIndex index(reader.layout(), reader.root());
    for (int polls = 0; polls < 100000; ++polls) {
        auto delta = reader.poll(budget);
        const bool more = delta.more;
        index.apply(std::move(delta));
        if (!more) break;
    }
    return index;
}

std::unique_ptr<analysis::DumpReader> open(const std::string& path) {
    std::string error;
    auto reader = analysis::openDumpReader(path, &error);
    EXPECT_TRUE(reader) << error;
    return reader;
}

bool anyProblemContains(const DumpIndex& index, const std::string& text) {
    for (const auto& p : index.problems())
        if (p.find(text) != std::string::npos) return true;
    return false;
}

std::string problems(const DumpIndex& index) {
    std::string out;
    for (const auto& p : index.problems()) out += p + "\n";
    return out;
}

// --- atb layout -------------------------------------------------------------------------------

TEST(AtbReader, ReadsASyntheticDumpWhole) {
    test::TempDir dir("ui-analysis");
    const auto written = test::writeSmallSyntheticDump(dir.path());
    auto reader = open(dir.path());  // the --output directory: atb_dump_data is found below it
    ASSERT_TRUE(reader);
    EXPECT_EQ(reader->layout(), analysis::DumpLayout::Atb);
    EXPECT_EQ(reader->root(), written.root);
    DumpIndex index = readAll(*reader);
    EXPECT_TRUE(reader->finished());
    EXPECT_TRUE(index.problems().empty()) << problems(index);
    ASSERT_EQ(index.processCount(), 1u);
    EXPECT_EQ(index.process(0).key, "0_4242");
    EXPECT_EQ(index.opCount(), written.ops);
    EXPECT_EQ(index.rowCount(), written.rows);
    EXPECT_EQ(index.rounds(0), (std::vector<int32_t>{0, 1, 2, 3, 4}));
    ASSERT_EQ(index.process(0).topOps.size(), 3u);
    const auto& layer1 = index.op(index.process(0).topOps[1]);
    EXPECT_EQ(layer1.id, "1");
    EXPECT_EQ(layer1.name, "layers.1");
    EXPECT_EQ(layer1.type, "DecoderLayer");
    ASSERT_FALSE(layer1.children.empty());
    const auto& child = index.op(layer1.children[0]);
    EXPECT_EQ(child.id, "1_0");
    EXPECT_EQ(child.namePath, "layers.1/input_layernorm");
    EXPECT_EQ(child.depth, 1);
    ASSERT_TRUE(index.status());
    EXPECT_EQ(index.status()->state, format::DumpState::Complete);

    // The planted overflow: layer 1's output is +inf in round 2, everything after NaN.
    EXPECT_EQ(layer1.anomalies, analysis::kHasInf);
    const uint32_t layer2 = index.findOp(0, "2");
    EXPECT_TRUE(index.op(layer2).anomalies & analysis::kHasNan);
    const uint32_t firstNan = index.firstAnomalousRow(0, analysis::kHasNan);
    ASSERT_NE(firstNan, kNone);
    EXPECT_EQ(index.row(firstNan).round, 2);
    EXPECT_EQ(index.slot(index.row(firstNan).slot).op, layer2);
    EXPECT_FALSE(index.slot(index.row(firstNan).slot).isOutput);
    // Statistics come through exactly (six decimals in the file).
    const uint32_t out = index.slotRow(index.representativeSlot(layer2), 0);
    ASSERT_NE(out, kNone);
    EXPECT_TRUE(index.row(out).has(analysis::Stat::Norm));
    EXPECT_TRUE(std::isfinite(index.row(out).get(analysis::Stat::Norm)));

    // Every tensor path read back from its statistic.csv line names a real file.
    size_t withFiles = 0;
    for (uint32_t r = 0; r < index.rowCount(); ++r) {
        if (!index.row(r).hasTensorFile) continue;
        ++withFiles;
        std::string error;
        const std::string path = index.tensorPath(r, &error);
        EXPECT_TRUE(format::fileExists(path)) << "row " << r << ": '" << path << "' " << error;
    }
    EXPECT_EQ(withFiles, written.tensorFiles);
}

TEST(AtbReader, SmallPollBudgetsBuildTheSameIndex) {
    test::TempDir dir("ui-analysis");
    test::writeSmallSyntheticDump(dir.path());
    auto whole = open(dir.path());
    auto pieces = open(dir.path());
    DumpIndex a = readAll(*whole);
    DumpIndex b = readAll(*pieces, 700);  // a few rows per poll, file boundaries crossed mid-poll
    ASSERT_GT(a.rowCount(), 0u);
    ASSERT_EQ(a.rowCount(), b.rowCount());
    ASSERT_EQ(a.opCount(), b.opCount());
    for (uint32_t r = 0; r < a.rowCount(); ++r) {
        const auto &x = a.row(r), &y = b.row(r);
        ASSERT_EQ(x.round, y.round);
        ASSERT_EQ(a.op(a.slot(x.slot).op).id, b.op(b.slot(y.slot).op).id);
        ASSERT_EQ(x.slot, y.slot);
        ASSERT_EQ(std::memcmp(x.value, y.value, sizeof x.value), 0);
        ASSERT_EQ(a.tensorPath(r), b.tensorPath(r)) << "row " << r;
    }
}

// A delta's rows handed back to the reader once applied are filled again by a later poll (new
// memory at every poll was a tenth of probe summary's time), with that poll's rows only.
TEST(DumpReader, RowsHandedBackAreFilledAgainWithTheNextPollsRowsOnly) {
    test::TempDir dir("ui-analysis");
    test::writeSmallSyntheticDump(dir.path());
    auto reusing = open(dir.path());
    auto fresh = open(dir.path());
    ASSERT_TRUE(reusing && fresh);
    int polls = 0, reused = 0;
    const analysis::StatRecord* handedBack = nullptr;
    for (bool more = true; more; ++polls) {
        auto a = reusing->poll(2000);
        auto b = fresh->poll(2000);
        more = a.more;
        ASSERT_EQ(a.more, b.more);
        ASSERT_EQ(a.rows.size(), b.rows.size()) << "poll " << polls;
        for (size_t i = 0; i < a.rows.size(); ++i) {
            ASSERT_EQ(a.rows[i].lineOffset, b.rows[i].lineOffset);
            ASSERT_EQ(a.rows[i].slot, b.rows[i].slot);
            ASSERT_EQ(std::memcmp(a.rows[i].value, b.rows[i].value, sizeof a.rows[i].value), 0);
        }
        reused += handedBack && a.rows.data() == handedBack;
        handedBack = a.rows.data();
        reusing->reuseRows(std::move(a.rows));
    }
    EXPECT_GT(polls, 3);
    EXPECT_GE(reused, polls - 3);  // all but the first, and those needing more room
}

TEST(DumpIndex, ADeltaAppliedInPiecesBuildsTheSameIndex) {
    test::TempDir dir("ui-analysis");
    const auto written = test::writeSmallSyntheticDump(dir.path());
    auto first = open(dir.path());
    auto second = open(dir.path());
    ASSERT_TRUE(first && second);
    DumpIndex whole(first->layout(), first->root()), pieced(second->layout(), second->root());
    size_t piecesApplied = 0;
    for (bool more = true; more;) {
        auto delta = first->poll(analysis::kDefaultPollBudget);
        more = delta.more;
        whole.apply(std::move(delta));
    }
    for (bool more = true; more;) {
        auto delta = second->poll(analysis::kDefaultPollBudget);
        more = delta.more;
        auto pieces = analysis::splitDelta(std::move(delta), 7);  // a few items each
        for (auto& piece : pieces) {
            EXPECT_LE(piece.rows.size(), 7u);
            EXPECT_LE(piece.ops.size(), 7u);
            EXPECT_LE(piece.tensorSlots.size(), 7u);
            const auto change = pieced.apply(std::move(piece));
            ++piecesApplied;
            EXPECT_EQ(change.firstNewRow + change.newRows, pieced.rowCount());
        }
    }
    EXPECT_GT(piecesApplied, written.rows / 7);
    EXPECT_TRUE(pieced.problems().empty()) << problems(pieced);  // no reference pointed forwards
    ASSERT_EQ(whole.opCount(), written.ops);
    ASSERT_EQ(pieced.opCount(), whole.opCount());
    ASSERT_EQ(pieced.slotCount(), whole.slotCount());
    ASSERT_EQ(pieced.rowCount(), whole.rowCount());
    ASSERT_EQ(pieced.stringCount(), whole.stringCount());
    for (uint32_t o = 0; o < whole.opCount(); ++o) {
        const auto &x = whole.op(o), &y = pieced.op(o);
        ASSERT_EQ(x.namePath, y.namePath);
        ASSERT_EQ(x.type, y.type);
        ASSERT_EQ(x.parent, y.parent);
        ASSERT_EQ(x.row, y.row);
        ASSERT_EQ(x.children, y.children);
        ASSERT_EQ(x.rounds, y.rounds);
        ASSERT_EQ(x.subtreeAnomalies, y.subtreeAnomalies);
    }
    for (uint32_t r = 0; r < whole.rowCount(); ++r) {
        const auto &x = whole.row(r), &y = pieced.row(r);
        ASSERT_EQ(x.slot, y.slot);
        ASSERT_EQ(x.round, y.round);
        ASSERT_EQ(whole.text(x.shape), pieced.text(y.shape));
        ASSERT_EQ(std::memcmp(x.value, y.value, sizeof x.value), 0);
    }
    EXPECT_EQ(pieced.rounds(0), whole.rounds(0));
    ASSERT_TRUE(pieced.status());
    EXPECT_EQ(pieced.status()->state, format::DumpState::Complete);
}

// The app copies an index while a comparison holds the old one (DumpStore::unshareIndex) and
// goes on applying a live dump's deltas to the copy. A child op added under an op that lies in
// the copy's last, partly filled chunk of ops: growing that chunk must not move the parent the
// apply holds a reference to (a plain copy of the chunks kept no room, and the app crashed
// about once in six comparisons with a live run).
TEST(DumpIndex, ACopyGrowsWithoutMovingItsOps) {
    DumpIndex original(analysis::DumpLayout::Atb, "/nowhere");
    analysis::DumpDelta setup;
    setup.processes.push_back({"0_1"});
    constexpr uint32_t kParents = 4096 + 10;  // past the first chunk of 4096 ops
    for (uint32_t o = 0; o < kParents; ++o)
        setup.ops.push_back(
            {0, kNone, std::to_string(o), "layer" + std::to_string(o), "T", "", std::nullopt});
    original.apply(std::move(setup));
    DumpIndex copy(original);
    const DumpIndex::Op* parent = &copy.op(kParents - 1);
    analysis::DumpDelta children;
    for (uint32_t c = 0; c < 40; ++c)
        children.ops.push_back({0, kParents - 1,
                                std::to_string(kParents - 1) + "_" + std::to_string(c),
                                "child" + std::to_string(c), "T", "", std::nullopt});
    copy.apply(std::move(children));
    EXPECT_EQ(&copy.op(kParents - 1), parent);
    ASSERT_EQ(copy.opCount(), kParents + 40);
    ASSERT_EQ(copy.op(kParents - 1).children.size(), 40u);
    for (uint32_t c = 0; c < 40; ++c) {
        const auto& child = copy.op(copy.op(kParents - 1).children[c]);
        EXPECT_EQ(child.namePath,
                  "layer" + std::to_string(kParents - 1) + "/child" + std::to_string(c));
        EXPECT_EQ(child.row, c);
    }
    EXPECT_EQ(original.opCount(), kParents);  // the original is its own
    EXPECT_TRUE(original.op(kParents - 1).children.empty());
}

// The ops a delta's rows touch are reported sorted and once each, however the rows run through
// them: one ascending run (rows in execution order), a few (a delta reaching into the next
// rounds: merged run by run), many (sorted whole), with anomalies touching ancestors too.
TEST(DumpIndex, TouchedOpsAreSortedAndUniqueWhateverTheOrderOfTheRows) {
    constexpr uint32_t kOps = 300;
    std::mt19937 random(5);
    for (const int runs : {1, 2, 3, 8, 9, 40}) {
        DumpIndex index(analysis::DumpLayout::Atb, "/nowhere");
        analysis::DumpDelta setup;
        setup.processes.push_back({"0_1"});
        for (uint32_t o = 0; o < kOps; ++o) {
            // A chain of ten: an op's anomaly touches its ancestors.
            const uint32_t parent = o % 10 == 0 ? kNone : o - 1;
            setup.ops.push_back(
                {0, parent, std::to_string(o), "op" + std::to_string(o), "T", "", std::nullopt});
            setup.tensorSlots.push_back({o, true, "0"});
        }
        index.apply(std::move(setup));
        // Each run: an ascending stretch of ops starting anywhere, some touched twice.
        analysis::DumpDelta rows;
        std::set<uint32_t> expected;
        for (int run = 0; run < runs; ++run) {
            const uint32_t from = random() % kOps, count = 1 + random() % 60;
            for (uint32_t o = from; o < std::min(kOps, from + count); ++o) {
                for (int twice = 0; twice < (o % 7 == 0 ? 2 : 1); ++twice) {
                    analysis::StatRecord record;
                    record.slot = o;
                    record.round = run;
                    record.present = 1;
                    record.value[0] = o % 13 == 0 ? std::nan("") : 1.0;
                    record.anomalies = analysis::anomalyBits(record.value[0]);
                    rows.rows.push_back(record);
                }
                expected.insert(o);
                if (o % 13 == 0)  // its ancestors' badges change
                    for (uint32_t a = o; a % 10 != 0;) expected.insert(--a);
            }
        }
        const auto change = index.apply(std::move(rows));
        ASSERT_FALSE(expected.empty());
        EXPECT_EQ(change.touchedOps, std::vector<uint32_t>(expected.begin(), expected.end()))
            << runs << " runs";
    }
}

// The readers' inline comparison of short texts says what memcmp says, for every length up to
// 40 bytes and a difference at every position (or none).
TEST(KeyTable, SameBytesAgreesWithMemcmpForEveryLengthAndPlaceOfADifference) {
    std::string a, b;
    int compared = 0, different = 0;
    for (size_t size = 0; size <= 40; ++size) {
        a.assign(size, 'x');
        for (size_t i = 0; i < size; ++i) a[i] = static_cast<char>('a' + (i * 7) % 26);
        for (size_t at = 0; at <= size; ++at) {  // at == size: no difference
            b = a;
            if (at < size) b[at] = static_cast<char>(b[at] ^ 0x20);
            const bool same = std::memcmp(a.data(), b.data(), size) == 0;
            EXPECT_EQ(analysis::sameBytes(a.data(), b.data(), size), same) << size << " " << at;
            EXPECT_EQ(analysis::sameText(a, b), same) << size << " " << at;
            ++compared;
            different += same ? 0 : 1;
        }
        if (size > 0) {  // texts of different lengths never match
            EXPECT_FALSE(analysis::sameText(a, std::string_view(a).substr(0, size - 1)));
        }
    }
    EXPECT_EQ(compared, 861);   // 41 lengths, size + 1 places each: 1 + 2 + ... + 41
    EXPECT_EQ(different, 820);  // all but the 41 without a difference
}

// The table the readers find ops and strings by: the first item of a key is found, whatever
// the growth and the collisions.
TEST(KeyTable, FindsTheFirstItemOfEachKeyThroughGrowthAndCollisions) {
    std::vector<std::string> keys;
    analysis::KeyTable table;
    auto find = [&](uint64_t hash, const std::string& key) {
        return table.find(hash, [&](uint32_t item) { return keys[item] == key; });
    };
    for (uint32_t i = 0; i < 20000; ++i) {
        keys.push_back("k" + std::to_string(i % 700));
        // Every tenth key shares one hash with all the others so marked: long probe runs.
        const uint64_t hash = i % 10 == 0 ? 12345 : analysis::hashText(keys.back());
        table.insert(hash, i);
    }
    EXPECT_EQ(table.size(), 20000u);
    int found = 0;
    for (uint32_t i = 0; i < 700; ++i) {
        const std::string key = "k" + std::to_string(i);
        // Its first item: i itself; items i % 10 == 0 are under the shared hash.
        const uint64_t hash = i % 10 == 0 ? 12345 : analysis::hashText(key);
        EXPECT_EQ(find(hash, key), i) << key;
        ++found;
    }
    EXPECT_EQ(found, 700);
    EXPECT_EQ(find(analysis::hashText("absent"), "absent"), analysis::KeyTable::kAbsent);
    EXPECT_EQ(find(12345, "absent"), analysis::KeyTable::kAbsent);
}

// Room reserved for a structure file's ops: the items added after it fit without a growth, and
// a reserve between inserts (the table growing then) keeps each key's first item the one found.
TEST(KeyTable, ReservedRoomTakesTheItemsWithoutGrowingAndKeepsTheFirstOfEachKey) {
    std::vector<std::string> keys;
    analysis::KeyTable table;
    auto find = [&](uint64_t hash, const std::string& key) {
        return table.find(hash, [&](uint32_t item) { return keys[item] == key; });
    };
    auto insert = [&](uint32_t i) {
        keys.push_back("k" + std::to_string(i % 700));
        table.insert(i % 10 == 0 ? 12345 : analysis::hashText(keys.back()), i);
    };
    for (uint32_t i = 0; i < 300; ++i) insert(i);
    table.reserve(19700);
    const size_t capacity = table.capacity();
    EXPECT_GE(capacity, 20000u);
    for (uint32_t i = 300; i < 20000; ++i) insert(i);
    EXPECT_EQ(table.capacity(), capacity);
    EXPECT_EQ(table.size(), 20000u);
    for (uint32_t i = 0; i < 700; ++i) {
        const std::string key = "k" + std::to_string(i);
        EXPECT_EQ(find(i % 10 == 0 ? 12345 : analysis::hashText(key), key), i) << key;
    }
    table.reserve(0);
    EXPECT_EQ(table.capacity(), capacity);
    analysis::KeyTable empty;
    empty.reserve(100000);
    EXPECT_GE(empty.capacity(), 100000u);
    EXPECT_LT(empty.capacity(), 200000u);
    EXPECT_EQ(empty.find(7, [](uint32_t) { return true; }), analysis::KeyTable::kAbsent);
}

// The reader's helper runs one job after another on the same thread, and hands back what a job
// threw.
TEST(HelperThread, RunsJobsInTurnAndHandsBackWhatTheyThrow) {
    analysis::HelperThread helper;
    std::vector<std::thread::id> ran;
    std::vector<int> results;
    for (int job = 0; job < 50; ++job) {
        helper.start([&, job] {
            ran.push_back(std::this_thread::get_id());
            results.push_back(job * job);
        });
        helper.wait();
    }
    ASSERT_EQ(results.size(), 50u);
    for (int job = 0; job < 50; ++job) EXPECT_EQ(results[static_cast<size_t>(job)], job * job);
    for (const auto& id : ran) EXPECT_EQ(id, ran.front());
    EXPECT_NE(ran.front(), std::this_thread::get_id());
    helper.start([] { throw std::runtime_error("no memory left"); });
    try {
        helper.wait();
        ADD_FAILURE() << "the job's exception was lost";
    } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "no memory left");
    }
    helper.start([&] { results.push_back(-1); });  // still serving
    helper.wait();
    EXPECT_EQ(results.back(), -1);
}

// The same index, op by op and row by row (indices included).
void expectSameIndex(const DumpIndex& a, const DumpIndex& b) {
    ASSERT_EQ(a.processCount(), b.processCount());
    ASSERT_EQ(a.opCount(), b.opCount());
    ASSERT_EQ(a.slotCount(), b.slotCount());
    ASSERT_EQ(a.rowCount(), b.rowCount());
    ASSERT_EQ(a.stringCount(), b.stringCount());
    EXPECT_EQ(a.sources(), b.sources());
    EXPECT_EQ(a.problems(), b.problems());
    for (uint32_t p = 0; p < a.processCount(); ++p) {
        EXPECT_EQ(a.process(p).key, b.process(p).key);
        EXPECT_EQ(a.process(p).topOps, b.process(p).topOps);
        EXPECT_EQ(a.process(p).rounds, b.process(p).rounds);
        EXPECT_EQ(a.process(p).rows, b.process(p).rows);
    }
    for (uint32_t o = 0; o < a.opCount(); ++o) {
        const auto &x = a.op(o), &y = b.op(o);
        ASSERT_EQ(x.id, y.id);
        ASSERT_EQ(x.namePath, y.namePath);
        ASSERT_EQ(x.type, y.type);
        ASSERT_EQ(x.param, y.param);
        ASSERT_EQ(x.parent, y.parent);
        ASSERT_EQ(x.row, y.row);
        ASSERT_EQ(x.children, y.children);
        ASSERT_EQ(x.tensorSlots, y.tensorSlots);
        ASSERT_EQ(x.rounds, y.rounds);
        ASSERT_EQ(x.rowCount, y.rowCount);
        ASSERT_EQ(x.anomalies, y.anomalies);
        ASSERT_EQ(x.subtreeAnomalies, y.subtreeAnomalies);
        ASSERT_EQ(a.findOp(x.process, x.id), b.findOp(y.process, y.id));
    }
    for (uint32_t s = 0; s < a.slotCount(); ++s) {
        ASSERT_EQ(a.slot(s).op, b.slot(s).op);
        ASSERT_EQ(a.slot(s).index, b.slot(s).index);
        ASSERT_EQ(a.slot(s).rows, b.slot(s).rows);
    }
    for (uint32_t r = 0; r < a.rowCount(); ++r) {
        const auto &x = a.row(r), &y = b.row(r);
        ASSERT_EQ(x.slot, y.slot);
        ASSERT_EQ(x.round, y.round);
        ASSERT_EQ(x.source, y.source);
        ASSERT_EQ(x.lineOffset, y.lineOffset);
        ASSERT_EQ(x.present, y.present);
        ASSERT_EQ(x.anomalies, y.anomalies);
        ASSERT_EQ(a.text(x.dtype), b.text(y.dtype));
        ASSERT_EQ(a.text(x.shape), b.text(y.shape));
        ASSERT_EQ(std::memcmp(x.value, y.value, sizeof x.value), 0);
    }
}

// readDump applies each delta on a thread of its own while it reads the next: two processes of
// several statistic.csv files each, more than one poll's worth, give the index that polling and
// applying in turn gives.
TEST(DumpReader, ReadDumpBuildsTheIndexThatPollingAndApplyingInTurnBuilds) {
    test::TempDir dir("ui-analysis");
    synthetic::SyntheticDumpOptions options;
    options.output = dir.path();
    options.ops = 3000;
    options.rows = 90000;  // about 10 MB of rows per process: several polls
    options.layers = 7;
    options.nanLayer = 3;
    options.nanRound = 2;
    synthetic::writeSyntheticDump(options);
    options.devicePid = "1_4343";
    options.nanLayer = 5;
    const auto written = synthetic::writeSyntheticDump(options);
    std::string error;
    auto read = analysis::readDump(dir.path(), &error);
    ASSERT_TRUE(read) << error;
    auto reader = open(dir.path());
    ASSERT_TRUE(reader);
    const DumpIndex inTurn = readAll(*reader, 1u << 20);
    EXPECT_EQ(read->processCount(), 2u);
    EXPECT_EQ(read->rowCount(), 2 * written.rows);
    EXPECT_EQ(read->opCount(), 2 * written.ops);
    EXPECT_GE(read->sources().size(), 2 * written.rounds);
    EXPECT_TRUE(read->problems().empty()) << problems(*read);
    expectSameIndex(*read, inTurn);
    // The planted overflows, one per process, where they were planted.
    for (uint32_t p = 0; p < 2; ++p) {
        const uint32_t row = read->firstAnomalousRow(p, analysis::kHasInf);
        ASSERT_NE(row, kNone);
        EXPECT_EQ(read->row(row).round, 2);
        const auto& op = read->op(read->slot(read->row(row).slot).op);
        EXPECT_EQ(op.id, p == 0 ? "3_0_0" : "5_0_0");  // the planted layer's first op
    }
}

// Layer files whose layers the model file describes are only checked: a broken one is still
// reported, and one describing a layer the model file lacks is read whole after all.
TEST(AtbReader, ALayerFileTheModelFileLacksIsReadWhole) {
    test::TempDir whole("ui-analysis"), cut("ui-analysis");
    synthetic::SyntheticDumpOptions options;
    options.ops = 200;
    options.rows = 400;  // one round: the rows name the ops of every layer
    options.layers = 4;
    options.output = whole.path();
    const auto written = synthetic::writeSyntheticDump(options);
    options.output = cut.path();
    const auto root = synthetic::writeSyntheticDump(options).root;
    // The model file without layer 1, rows without layer 1's ops: only its layer file names them.
    const std::string modelPath = root + "/info/model/0_4242/SyntheticModel.json";
    auto model = format::readModelStructure(test::readFile(modelPath), modelPath).value;
    ASSERT_TRUE(model);
    ASSERT_EQ(model->nodes.size(), 4u);
    const size_t layerOneNodes = model->nodes[1].nodes.size();
    ASSERT_GT(layerOneNodes, 0u);
    model->nodes.erase(model->nodes.begin() + 1);
    test::writeFile(modelPath, model->toJson().dump());
    for (const auto& round :
         format::listDirectory(root + "/data/0_4242", format::EntryKind::Directories)) {
        const std::string csv = root + "/data/0_4242/" + round + "/statistic.csv";
        std::istringstream lines(test::readFile(csv));
        std::string kept, line;
        while (std::getline(lines, line))
            if (line.find(",layers.1") == std::string::npos) kept += line + "\n";
        test::writeFile(csv, kept);
    }
    // Layer 2's file broken: the model file describes layer 2, so it is only checked.
    test::writeFile(root + "/info/layer/0_4242/layers.2_2.json", "{\"opName\": \"layers.2_2\", ");

    auto reference = open(whole.path());
    auto reader = open(cut.path());
    ASSERT_TRUE(reference && reader);
    const DumpIndex expected = readAll(*reference);
    const DumpIndex index = readAll(*reader);
    ASSERT_EQ(expected.opCount(), written.ops);
    EXPECT_EQ(index.opCount(), expected.opCount());
    EXPECT_TRUE(anyProblemContains(index, "layers.2_2.json:1:")) << problems(index);
    EXPECT_EQ(index.problems().size(), 1u) << problems(index);
    const uint32_t layer = index.findOp(0, "1");
    ASSERT_NE(layer, kNone);
    EXPECT_EQ(index.op(layer).type, "DecoderLayer");
    EXPECT_EQ(index.op(layer).children.size(), layerOneNodes);
    EXPECT_EQ(index.op(layer).rowCount, 0u);
    size_t underLayerOne = 0;
    for (uint32_t o = 0; o < expected.opCount(); ++o) {
        const auto& want = expected.op(o);
        const uint32_t found = index.findOp(0, want.id);
        ASSERT_NE(found, kNone) << want.id;
        const auto& got = index.op(found);
        EXPECT_EQ(got.namePath, want.namePath);
        EXPECT_EQ(got.type, want.type);
        EXPECT_EQ(got.param, want.param);
        EXPECT_EQ(got.depth, want.depth);
        underLayerOne += want.id == "1" || want.id.rfind("1_", 0) == 0 ? 1 : 0;
    }
    EXPECT_GT(underLayerOne, layerOneNodes);
}

// A model file big enough to be read in parts (its top-level nodes side by side) builds the
// index its layer files alone build; a layer file whose text is its node's in the model is not
// read again, while a layer file that differs is read, and a broken one or a broken model is
// reported with its place as when read whole.
TEST(AtbReader, ABigModelFileReadInPartsReadsAsWhole) {
    test::TempDir withModel("ui-analysis"), layersOnly("ui-analysis");
    synthetic::SyntheticDumpOptions options;
    options.ops = 8000;
    options.rows = 8000;
    options.layers = 10;
    options.output = withModel.path();
    const auto written = synthetic::writeSyntheticDump(options);
    options.output = layersOnly.path();
    const auto bare = synthetic::writeSyntheticDump(options);
    const std::string modelPath = written.root + "/info/model/0_4242/SyntheticModel.json";
    const std::string modelText = test::readFile(modelPath);
    ASSERT_GE(modelText.size(), 1u << 20);  // read in parts
    const auto parts = format::cutModelText(modelText);
    ASSERT_TRUE(parts);
    ASSERT_EQ(parts->nodes.size(), 10u);
    std::filesystem::remove(bare.root + "/info/model/0_4242/SyntheticModel.json");

    auto expectSameOps = [&](const DumpIndex& index, const DumpIndex& expected) {
        ASSERT_EQ(index.opCount(), expected.opCount());
        for (uint32_t o = 0; o < expected.opCount(); ++o) {
            const auto& want = expected.op(o);
            const uint32_t found = index.findOp(0, want.id);
            ASSERT_NE(found, kNone) << want.id;
            EXPECT_EQ(index.op(found).namePath, want.namePath);
            EXPECT_EQ(index.op(found).type, want.type);
            EXPECT_EQ(index.op(found).param, want.param);
            EXPECT_EQ(index.op(found).depth, want.depth);
            EXPECT_EQ(index.op(found).rowCount, want.rowCount);
        }
    };
    auto bareReader = open(layersOnly.path());
    ASSERT_TRUE(bareReader);
    const DumpIndex expected = readAll(*bareReader);
    ASSERT_EQ(expected.opCount(), written.ops);
    EXPECT_TRUE(expected.problems().empty()) << problems(expected);
    {
        auto reader = open(withModel.path());
        ASSERT_TRUE(reader);
        const DumpIndex index = readAll(*reader);
        EXPECT_TRUE(index.problems().empty()) << problems(index);
        expectSameOps(index, expected);
    }
    // Layer 3's file broken, layer 5's written otherwise (indented): only layer 3 is a problem.
    const std::string layerDir = written.root + "/info/layer/0_4242/";
    test::writeFile(layerDir + "layers.3_3.json", std::string(parts->nodes[3]).substr(0, 5000));
    const auto layerFive = nlohmann::ordered_json::parse(parts->nodes[5]);
    test::writeFile(layerDir + "layers.5_5.json", layerFive.dump(2));
    {
        auto reader = open(withModel.path());
        ASSERT_TRUE(reader);
        const DumpIndex index = readAll(*reader);
        EXPECT_TRUE(anyProblemContains(index, "layers.3_3.json:1:")) << problems(index);
        EXPECT_EQ(index.problems().size(), 1u) << problems(index);
        expectSameOps(index, expected);
    }
    // The model broken inside layer 6's node: reported at its line and column, as read whole;
    // the layer files (layer 3's mended) name the ops instead.
    test::writeFile(layerDir + "layers.3_3.json", std::string(parts->nodes[3]));
    std::string broken = modelText;
    const size_t at = static_cast<size_t>(parts->nodes[6].data() - modelText.data()) + 4000;
    broken.erase(broken.find("\"inTensors\":[", at) + 12, 1);
    test::writeFile(modelPath, broken);
    const auto whole = format::readModelStructure(broken, modelPath);
    ASSERT_TRUE(whole.jsonError);
    {
        auto reader = open(withModel.path());
        ASSERT_TRUE(reader);
        const DumpIndex index = readAll(*reader);
        EXPECT_TRUE(anyProblemContains(index, whole.jsonError->toString())) << problems(index);
        EXPECT_EQ(index.problems().size(), 1u) << problems(index);
        expectSameOps(index, expected);
    }
}

TEST(AtbReader, FollowsADumpAsItGrows) {
    test::TempDir dir("ui-analysis");
    test::DumpBuilder dump(dir.path());
    dump.setStatus("running");
    dump.writeModel([] {
        format::ModelStructure m;
        m.modelName = "Tiny";
        m.nodes.push_back(test::node("layer", "0", "Layer", {test::node("mm", "0_0", "aten::mm")}));
        return m;
    }());
    dump.addRow(0, "0", "layer", "Layer", false);
    dump.addRow(0, "0_0", "layer/mm", "aten::mm", false);
    // A row cut in the middle, as a reader may find it while the writer appends.
    const format::StatRow cut = [&] {
        format::StatRow r;
        r.devicePid = "0_777";
        r.opName = "layer/mm";
        r.opType = "aten::mm";
        r.opId = "0_0";
        r.isOutput = true;
        r.index = "0";
        r.dtype = "float";
        r.format = "nd";
        r.shape = "3";
        r.max = r.min = r.mean = r.norm = 1.0;
        return r;
    }();
    const std::string line = format::formatStatRow(cut);
    dump.appendRaw(0, line.substr(0, 20));

    auto reader = open(dir.path());
    ASSERT_TRUE(reader);
    DumpIndex index(reader->layout(), reader->root());
    auto change = index.apply(reader->poll(analysis::kDefaultPollBudget));
    EXPECT_EQ(index.opCount(), 2u);   // from the model file
    EXPECT_EQ(index.rowCount(), 2u);  // the cut line waits for its end
    EXPECT_EQ(change.newOps, 2u);
    EXPECT_FALSE(reader->finished());
    EXPECT_EQ(index.status()->state, format::DumpState::Running);

    // The line is finished, a new round starts, a new layer op appears with its layer file.
    dump.appendRaw(0, line.substr(20));
    dump.addRow(1, "0", "layer", "Layer", false);
    dump.addRow(1, "1", "head", "Linear", true, {std::nanf("")});
    dump.writeLayer(
        test::node("head", "1", "Linear", {test::node("linear", "1_0", "aten::linear")}),
        "head_1.json");
    change = index.apply(reader->poll(analysis::kDefaultPollBudget));
    EXPECT_EQ(index.rowCount(), 5u);
    EXPECT_EQ(change.newRows, 3u);
    EXPECT_TRUE(change.newRounds);
    EXPECT_EQ(index.rounds(0), (std::vector<int32_t>{0, 1}));
    const uint32_t head = index.findOp(0, "1");
    ASSERT_NE(head, kNone);
    EXPECT_EQ(index.op(head).type, "Linear");
    EXPECT_NE(index.findOp(0, "1_0"), kNone);  // its child, from the layer file
    EXPECT_EQ(index.op(head).anomalies, analysis::kHasNan);
    // The layer op got a row in round 1: reported as touched, with its rounds seen.
    const uint32_t layer = index.findOp(0, "0");
    EXPECT_TRUE(std::binary_search(change.touchedOps.begin(), change.touchedOps.end(), layer));
    EXPECT_EQ(index.op(layer).rounds, (std::vector<int32_t>{0, 1}));

    dump.setStatus("complete");
    change = index.apply(reader->poll(analysis::kDefaultPollBudget));
    EXPECT_TRUE(change.statusChanged);
    EXPECT_EQ(index.status()->state, format::DumpState::Complete);
    EXPECT_TRUE(reader->finished());
    EXPECT_TRUE(index.problems().empty()) << problems(index);
    // Nothing new: an empty delta.
    EXPECT_TRUE(reader->poll(analysis::kDefaultPollBudget).empty());
}

TEST(AtbReader, StructureFileNamesOpsWithoutRows) {
    test::TempDir dir("ui-analysis");
    test::DumpBuilder dump(dir.path());
    // A row of a deep op whose ancestors have no rows: they are created, named from the path.
    dump.addRow(0, "2_1_0", "Prefill_layer/Attention/MatMul", "MatMul", true);
    dump.setStatus("complete");
    auto reader = open(dump.root());
    DumpIndex index = readAll(*reader);
    const uint32_t attention = index.findOp(0, "2_1");
    ASSERT_NE(attention, kNone);
    EXPECT_EQ(index.op(attention).name, "Attention");
    EXPECT_EQ(index.op(index.findOp(0, "2")).name, "Prefill_layer");
    EXPECT_EQ(index.op(index.findOp(0, "2_1_0")).namePath, "Prefill_layer/Attention/MatMul");
    EXPECT_EQ(index.op(attention).rowCount, 0u);
}

// A row with an empty Op Name is the first op with its id (another op's key: the reader keeps
// the row's own key to know the rows after it), and the rows of one op run together again and
// again, round after round.
TEST(AtbReader, RowsWithoutANameAreTheFirstOpWithTheirId) {
    test::TempDir dir("ui-analysis");
    test::DumpBuilder dump(dir.path());
    for (int round = 0; round < 2; ++round) {
        const std::string r = std::to_string(round);
        dump.appendRaw(round, "0_777," + r + ",layer,Layer,0,input,0,float,nd,3,1,1,1,1,N/A\n" +
                                  "0_777," + r + ",,,0,output,0,float,nd,3,2,2,2,2,N/A\n" +
                                  "0_777," + r + ",,,0,input,1,float,nd,3,3,3,3,3,N/A\n" +
                                  "0_777," + r +
                                  ",layer,Layer,0,output,1,float,nd,3,4,4,4,4,N/A\n" + "0_777," +
                                  r + ",,Other,1,input,0,float,nd,3,5,5,5,5,N/A\n" + "0_777," + r +
                                  ",,,1,output,0,float,nd,3,6,6,6,6,N/A\n" + "0_777," + r +
                                  ",,,0,output,1,float,nd,3,7,7,7,7,N/A\n");
    }
    dump.setStatus("complete");
    auto reader = open(dump.root());
    DumpIndex index = readAll(*reader);
    ASSERT_EQ(index.opCount(), 2u) << problems(index);
    const uint32_t layer = index.findOp(0, "0"), other = index.findOp(0, "1");
    ASSERT_NE(layer, kNone);
    ASSERT_NE(other, kNone);
    EXPECT_EQ(index.op(layer).namePath, "layer");
    EXPECT_EQ(index.op(other).name, "1");  // no name of its own: its id
    EXPECT_EQ(index.op(other).type, "Other");
    EXPECT_EQ(index.op(layer).rowCount, 10u);
    EXPECT_EQ(index.op(other).rowCount, 4u);
    EXPECT_EQ(index.op(layer).tensorSlots.size(), 4u);
    // Every row where its line put it: the value written is its place in the round.
    for (uint32_t row = 0; row < index.rowCount(); ++row) {
        const auto& record = index.row(row);
        const int place = static_cast<int>(record.value[0]);
        const auto& slot = index.slot(record.slot);
        EXPECT_EQ(slot.op, place == 5 || place == 6 ? other : layer) << row;
        EXPECT_EQ(slot.isOutput, place % 2 == 0 || place == 7) << row;
        EXPECT_EQ(slot.index, place == 3 || place == 4 || place == 7 ? "1" : "0") << row;
        EXPECT_EQ(record.round, static_cast<int32_t>(row / 7)) << row;
    }
}

TEST(AtbReader, TruncatedLastLineOfAFinishedDumpIsReported) {
    test::TempDir dir("ui-analysis");
    test::DumpBuilder dump(dir.path());
    dump.addRow(0, "0", "layer", "Layer", false);
    const std::string line = format::formatStatRow(dump.addRow(0, "0", "layer", "Layer", true));
    // Cut the file in the middle of its last line: a crash or a full disk.
    const std::string csv = dump.csvPath(0);
    std::string text = test::readFile(csv);
    text.resize(text.size() - line.size() / 2);
    test::writeFile(csv, text);
    dump.setStatus("complete");
    auto reader = open(dump.root());
    DumpIndex index = readAll(*reader);
    EXPECT_EQ(index.rowCount(), 1u);
    EXPECT_TRUE(
        anyProblemContains(index, "statistic.csv:3: row skipped: the last line is cut short"))
        << problems(index);
}

// An op nested deeper than a structure file may nest (each "_" of its id a level) is skipped as
// malformed: its ops were made one call a level, and an id of 150,000 levels in a 600 KB line
// overflowed the stack. 256 levels are read.
TEST(AtbReader, AnOpNestedTooDeeplyIsSkippedNotFollowedDown) {
    test::TempDir dir("ui-analysis");
    test::DumpBuilder dump(dir.path());
    dump.addRow(0, "0", "layer", "Layer", false);
    const auto row = [](size_t levels) {
        std::string id = "0", name = "layer";
        for (size_t i = 0; i < levels; ++i) {
            id += "_0";
            name += "/k";
        }
        return "0_777,0," + name + ",T," + id + ",input,0,float,nd,3,1,1,1,1,N/A\n";
    };
    dump.appendRaw(0, row(150000));
    dump.appendRaw(0, row(256));
    dump.setStatus("complete");
    auto reader = open(dump.root());
    DumpIndex index = readAll(*reader);
    EXPECT_EQ(index.rowCount(), 2u);
    EXPECT_EQ(index.opCount(), 257u);  // the layer and the 256 levels below it
    EXPECT_TRUE(anyProblemContains(
        index, "statistic.csv:3: row skipped: Op Id nested deeper than 256 levels"))
        << problems(index);
}

TEST(AtbReader, MalformedRowsAreSkippedWithTheirLine) {
    test::TempDir dir("ui-analysis");
    test::DumpBuilder dump(dir.path());
    dump.addRow(0, "0", "layer", "Layer", false);
    dump.appendRaw(0, "this is not a row\n");
    dump.appendRaw(0,
                   "0_777,x,layer,Layer,0,input,0,float,nd,3,1,1,1,1,N/A\n");  // round not a number
    dump.appendRaw(0,
                   "0_777,0,layer,Layer,0,sideways,0,float,nd,3,1,1,1,1,N/A\n");    // bad direction
    dump.appendRaw(0, "0_777,0,layer,Layer,0,input,0,float,nd,3,one,1,1,1,N/A\n");  // bad number
    dump.appendRaw(0, "0_777,0,layer,Layer,0,input,0,float,nd,3,1,1,1,1,\"unterminated\n");
    dump.appendRaw(0, "0_777,0,layer,Layer,,input,0,float,nd,3,1,1,1,1,N/A\n");  // no op id
    dump.appendRaw(0, "\n");                                                     // blank: ignored
    dump.addRow(0, "0", "layer", "Layer", true);
    dump.setStatus("complete");
    auto reader = open(dump.root());
    DumpIndex index = readAll(*reader);
    EXPECT_EQ(index.rowCount(), 2u);
    EXPECT_TRUE(
        anyProblemContains(index, "statistic.csv:3: row skipped: expected 15 columns, found 1"))
        << problems(index);
    EXPECT_TRUE(anyProblemContains(index, ":4: row skipped: Execution Count is not a number"))
        << problems(index);
    EXPECT_TRUE(anyProblemContains(index, ":5: row skipped: Input/Output must be input or output"))
        << problems(index);
    EXPECT_TRUE(anyProblemContains(index, ":6: row skipped: not a number: one")) << problems(index);
    // Past five per file, malformed rows are counted, not listed.
    EXPECT_TRUE(anyProblemContains(index, "more malformed rows skipped")) << problems(index);
}

TEST(AtbReader, BrokenStructureAndStatusFilesGiveMessages) {
    test::TempDir dir("ui-analysis");
    test::DumpBuilder dump(dir.path());
    dump.addRow(0, "0", "layer", "Layer", false);
    format::makeDirectories(dump.root() + "/info/model/0_777");
    format::makeDirectories(dump.root() + "/info/layer/0_777");
    test::writeFile(dump.root() + "/info/model/0_777/Model.json",
                    "{\"modelName\": \"M\", \"nodes\": [{\"opName\": ");
    test::writeFile(dump.root() + "/info/layer/0_777/layer_0.json",
                    "{\"opName\": \"layer_0\", \"nodes\": 7}");
    // Fields of the wrong type are read leniently by the format library; a cut file is not.
    test::writeFile(dump.root() + "/probe_status.json",
                    "{\"processes\": [{\"pid\": 12, \"state\": ");
    auto reader = open(dump.root());
    DumpIndex index = readAll(*reader);
    EXPECT_EQ(index.rowCount(), 1u);
    EXPECT_TRUE(anyProblemContains(index, "Model.json")) << problems(index);
    EXPECT_TRUE(anyProblemContains(
        index, "layer_0.json: not a layer structure file: nodes is not an array"))
        << problems(index);
    EXPECT_TRUE(anyProblemContains(index, "probe_status.json")) << problems(index);
}

TEST(AtbReader, ManyRowsParsedSideBySideReadAsOneByOne) {
    // Reads of thousands of lines are parsed on several threads, then indexed in order; lines
    // with quoted fields are parsed in order. The result must be what small reads (parsed one
    // by one) give: the same rows, and the malformed ones reported at the same lines.
    test::TempDir dir("ui-analysis");
    test::DumpBuilder dump(dir.path());
    std::string text;
    for (int i = 0; i < 12000; ++i) {
        const std::string id = std::to_string(i / 4) + (i % 4 < 2 ? "" : "_0");
        const std::string name =
            i % 4 < 2 ? "layer" + std::to_string(i / 4) : "layer" + std::to_string(i / 4) + "/mm";
        if (i == 5000) text += "not a row\n";
        if (i == 7001)
            text += "0_777,0," + name + ",T," + id + ",input,0,float,nd,3,one,1,1,1,N/A\n";
        const std::string quotedName =
            i % 97 == 0 ? "\"" + name + ",with comma\"" : name;  // ops of their own
        text += "0_777,0," + quotedName + ",T," + id + (i % 2 ? ",output," : ",input,") +
                "0,float,nd,3," + std::to_string(i) + ".5,-1,0.25," + (i % 11 ? "2" : "nan") +
                ",N/A\n";
    }
    dump.appendRaw(0, text);
    dump.setStatus("complete");
    auto whole = open(dump.root());
    auto small = open(dump.root());
    ASSERT_TRUE(whole && small);
    DumpIndex a = readAll(*whole);         // 4 MiB reads: parsed side by side
    DumpIndex b = readAll(*small, 16384);  // 64 KiB reads: a few hundred lines each, one by one
    ASSERT_EQ(a.rowCount(), 12000u);
    ASSERT_EQ(b.rowCount(), a.rowCount());
    ASSERT_EQ(b.opCount(), a.opCount());
    EXPECT_EQ(a.problems(), b.problems());
    EXPECT_TRUE(
        anyProblemContains(a, "statistic.csv:5002: row skipped: expected 15 columns, found 1"))
        << problems(a);
    EXPECT_TRUE(anyProblemContains(a, "statistic.csv:7004: row skipped: not a number: one"))
        << problems(a);
    for (uint32_t r = 0; r < a.rowCount(); ++r) {
        const auto &x = a.row(r), &y = b.row(r);
        ASSERT_EQ(x.round, y.round) << r;
        ASSERT_EQ(x.present, y.present) << r;
        ASSERT_EQ(std::memcmp(x.value, y.value, sizeof x.value), 0) << r;
        ASSERT_EQ(x.lineOffset, y.lineOffset) << r;
        ASSERT_EQ(a.op(a.slot(x.slot).op).namePath, b.op(b.slot(y.slot).op).namePath) << r;
        ASSERT_EQ(x.value[0], static_cast<double>(r) + 0.5) << r;  // the rows in file order
    }
    EXPECT_EQ(a.op(a.slot(a.row(0).slot).op).namePath, "layer0,with comma");
}

TEST(AtbReader, RowsAddedWhileTheirNeighboursAreStillParsedKeepTheFileOrder) {
    // A read's lines are parsed in pieces of 1,024 by two threads while the reading thread adds
    // each piece's rows as soon as it is parsed: whichever thread parsed which piece, the rows
    // come in file order, quoted lines (parsed in order) among them, and the malformed lines,
    // around piece boundaries too, are reported at their own line. Two 4 MiB reads of about
    // 70 pieces each.
    test::TempDir dir("ui-analysis");
    test::DumpBuilder dump(dir.path());
    struct Expected {
        double max;
        uint64_t lineOffset;
        std::string namePath;
    };
    std::vector<Expected> expected;
    std::vector<uint64_t> malformedLines;  // 1-based, the header being line 1
    std::string text;
    const uint64_t headerBytes = std::string(format::kStatisticCsvHeader).size() + 1;
    uint64_t line = 1;
    for (int i = 0; i < 130000; ++i) {
        ++line;
        const uint64_t offset = headerBytes + text.size();
        // Lines 1,025 and 1,026 end and begin the first read's first two pieces (its lines
        // 1,024 and 1,025); the last one ends the file.
        if (line == 1025 || line == 1026 || line == 70001 || i == 129999) {
            text += "0_777,0,broken" + std::to_string(line) + "\n";
            malformedLines.push_back(line);
            continue;
        }
        const std::string name = "layer" + std::to_string(i % 500);
        const bool quoted = i % 97 == 0 || line == 2049 || line == 2050;
        text += "0_777,0," + (quoted ? "\"" + name + "\"" : name) + ",T," +
                std::to_string(i % 500) + ",output,0,float,nd,3," + std::to_string(i) +
                ".5,-1,0.25,2,N/A\n";
        expected.push_back({i + 0.5, offset, name});
    }
    dump.appendRaw(0, text);
    dump.setStatus("complete");
    auto whole = open(dump.root());
    auto small = open(dump.root());
    ASSERT_TRUE(whole && small);
    DumpIndex a = readAll(*whole);         // 4 MiB reads: parsed in pieces on two threads
    DumpIndex b = readAll(*small, 16384);  // 64 KiB reads: parsed one by one
    ASSERT_EQ(a.rowCount(), expected.size());
    ASSERT_EQ(b.rowCount(), expected.size());
    EXPECT_EQ(a.problems(), b.problems());
    for (const uint64_t at : malformedLines)
        EXPECT_TRUE(anyProblemContains(a, "statistic.csv:" + std::to_string(at) +
                                              ": row skipped: expected 15 columns, found 3"))
            << at << "\n"
            << problems(a);
    for (uint32_t r = 0; r < a.rowCount(); ++r) {
        const auto& x = a.row(r);
        ASSERT_EQ(x.value[0], expected[r].max) << r;
        ASSERT_EQ(x.lineOffset, expected[r].lineOffset) << r;
        ASSERT_EQ(a.op(a.slot(x.slot).op).namePath, expected[r].namePath) << r;
        ASSERT_EQ(x.lineOffset, b.row(r).lineOffset) << r;
    }
}

TEST(AtbReader, BinaryJunkAndMissingHeaderNeverCrash) {
    test::TempDir dir("ui-analysis");
    test::DumpBuilder dump(dir.path());
    std::mt19937 random(7);
    std::string junk(20000, '\0');
    for (char& c : junk) c = static_cast<char>(random() & 0xff);
    dump.appendRaw(0, junk, false);
    dump.appendRaw(1, "0_777,1,layer,Layer,0,input,0,float,nd,3,1,1,1,1,N/A\n",
                   false);  // no header line
    format::makeDirectories(dump.roundDir(2));
    test::writeFile(dump.roundDir(2) + "/statistic.csv", "");  // empty
    dump.setStatus("complete");
    auto reader = open(dump.root());
    DumpIndex index = readAll(*reader);
    EXPECT_EQ(index.rowCount(), 1u);  // the round-1 row
    EXPECT_TRUE(anyProblemContains(index, "no header line")) << problems(index);
    EXPECT_FALSE(index.problems().empty());
}

// A statistic.csv saved by a spreadsheet begins with a byte order mark: its header is read as
// the header (it was "no header line", then the header taken for a malformed row).
TEST(AtbReader, AByteOrderMarkBeforeTheHeaderIsSkipped) {
    test::TempDir dir("ui-analysis");
    test::DumpBuilder dump(dir.path());
    dump.appendRaw(0,
                   "\xEF\xBB\xBF" + std::string(format::kStatisticCsvHeader) +
                       "\n0_777,0,layer,Layer,0,input,0,float,nd,3,1,1,1,1,N/A\n",
                   false);
    dump.setStatus("complete");
    auto reader = open(dump.root());
    DumpIndex index = readAll(*reader);
    EXPECT_EQ(index.rowCount(), 1u);
    EXPECT_TRUE(index.problems().empty()) << problems(index);
}

// Line ends as spreadsheets save them: LF, CRLF, and CR alone (the old Mac OS's), whose file
// was one line "cut short", as was one holding its header alone. Read in pieces too, so that a line
// end falls between reads, and a row's tensor path is read back from its line.
TEST(AtbReader, LinesEndingInCrLfOrCrAloneAreRead) {
    const std::vector<std::string> rows = {
        "0_777,0,layer,Layer,0,input,0,float,nd,3,1,-1,0.5,2,N/A",
        "0_777,0,layer,Layer,0,output,0,float,nd,3,4,-4,0.25,7,"
        "/elsewhere/atb_dump_data/data/0_777/0/layer/after/outtensor0.bin",
        "0_777,0,layer/mm,aten::mm,0_0,output,0,float,nd,3,9,1,3,10,N/A"};
    for (const std::string lineEnd : {"\n", "\r\n", "\r"}) {
        for (const uint64_t budget : {analysis::kDefaultPollBudget, uint64_t{40}}) {
            SCOPED_TRACE(testing::Message() << "line end "
                                            << (lineEnd == "\r"   ? "CR"
                                                : lineEnd == "\n" ? "LF"
                                                                  : "CRLF")
                                            << ", budget " << budget);
            test::TempDir dir("ui-analysis");
            test::DumpBuilder dump(dir.path());
            std::string text = std::string(format::kStatisticCsvHeader) + lineEnd;
            for (const auto& row : rows) text += row + lineEnd;
            dump.appendRaw(0, text, false);
            dump.setStatus("complete");
            auto reader = open(dump.root());
            DumpIndex index = readAll(*reader, budget);
            ASSERT_EQ(index.rowCount(), 3u) << problems(index);
            EXPECT_TRUE(index.problems().empty()) << problems(index);
            EXPECT_EQ(index.row(1).get(analysis::Stat::Max), 4.0);
            EXPECT_EQ(index.row(2).get(analysis::Stat::Norm), 10.0);
            EXPECT_TRUE(index.tensorPath(0).empty());
            const std::string path = index.tensorPath(1);
            EXPECT_EQ(path, dump.roundDir(0) + "/layer/after/outtensor0.bin");
        }
        // The header alone: a round with no rows, not a line cut short (with CR alone, its one
        // line end is the file's last byte, which a CRLF could still follow while it is
        // written), read while its process runs and once it has ended.
        SCOPED_TRACE("the header alone");
        test::TempDir dir("ui-analysis");
        test::DumpBuilder dump(dir.path());
        dump.appendRaw(0, std::string(format::kStatisticCsvHeader) + lineEnd, false);
        dump.setStatus("running");
        auto reader = open(dump.root());
        DumpIndex index = readAll(*reader);
        EXPECT_TRUE(index.problems().empty()) << problems(index);
        dump.setStatus("complete");
        index.apply(reader->poll(analysis::kDefaultPollBudget));
        index.apply(reader->poll(analysis::kDefaultPollBudget));
        EXPECT_EQ(index.rowCount(), 0u);
        EXPECT_TRUE(index.problems().empty()) << problems(index);
    }
}

TEST(DumpReader, AFolderDeletedWhileFollowedIsReportedOnce) {
    test::TempDir dir("ui-analysis");
    test::DumpBuilder dump(dir.path());
    dump.addRow(0, "0", "layer", "Layer", false);
    auto reader = open(dump.root());
    DumpIndex index = readAll(*reader);
    EXPECT_EQ(index.rowCount(), 1u);
    std::system(("rm -rf '" + dump.root() + "'").c_str());
    index.apply(reader->poll(analysis::kDefaultPollBudget));
    index.apply(reader->poll(analysis::kDefaultPollBudget));
    EXPECT_EQ(index.problems().size(), 1u) << problems(index);
    EXPECT_TRUE(anyProblemContains(index, "no longer exists"));
    EXPECT_EQ(index.rowCount(), 1u);  // what was read stays
}

TEST(DumpReader, ExplainsWhatIsNotADump) {
    test::TempDir dir("ui-analysis");
    std::string error;
    EXPECT_FALSE(analysis::openDumpReader(dir.path(), &error));
    EXPECT_NE(error.find("holds no dump"), std::string::npos) << error;
    EXPECT_FALSE(analysis::openDumpReader(dir / "missing", &error));
    EXPECT_NE(error.find("does not exist"), std::string::npos) << error;
    test::writeFile(dir / "file.txt", "x");
    EXPECT_FALSE(analysis::openDumpReader(dir / "file.txt", &error));
    EXPECT_NE(error.find("file.txt is a regular file; open the dump's folder"), std::string::npos)
        << error;
    // Not "does not exist" for a link that cannot be followed, nor "a file" for a device.
    ASSERT_EQ(::symlink("loop", (dir / "loop").c_str()), 0);
    EXPECT_FALSE(analysis::openDumpReader(dir / "loop", &error));
    EXPECT_NE(error.find("loop is a symbolic link that cannot be followed (Too many levels"),
              std::string::npos)
        << error;
    EXPECT_FALSE(analysis::openDumpReader("/dev/zero", &error));
    EXPECT_EQ(error, "/dev/zero is a character device; open the dump's folder");
    // A folder whose atb_dump_data is no folder says what it is (a link to itself read as no
    // dump at all).
    format::makeDirectories(dir / "linked");
    ASSERT_EQ(::symlink("atb_dump_data", (dir / "linked/atb_dump_data").c_str()), 0);
    EXPECT_FALSE(analysis::openDumpReader(dir / "linked", &error));
    EXPECT_NE(error.find("holds no dump"), std::string::npos) << error;
    EXPECT_NE(error.find("linked/atb_dump_data is a symbolic link that cannot be followed"),
              std::string::npos)
        << error;
    EXPECT_FALSE(analysis::openDumpReader(dir.path(), &error));  // nothing by that name
    EXPECT_EQ(error.find("atb_dump_data is"), std::string::npos) << error;
}

TEST(DumpIndex, ProfileListsOpsOfARoundInExecutionOrder) {
    test::TempDir dir("ui-analysis");
    test::writeSmallSyntheticDump(dir.path(), 60, 600, 3, /*tensors=*/false);
    auto reader = open(dir.path());
    DumpIndex index = readAll(*reader);
    DumpIndex::ProfileOptions layers;
    layers.maxDepth = 0;
    const auto points = index.roundProfile(0, 1, layers);
    ASSERT_EQ(points.size(), 3u);
    EXPECT_EQ(index.op(points[0].op).id, "0");
    EXPECT_EQ(index.op(points[2].op).id, "2");
    for (const auto& p : points) EXPECT_TRUE(index.slot(index.row(p.row).slot).isOutput);
    DumpIndex::ProfileOptions all;
    EXPECT_EQ(index.roundProfile(0, 1, all).size(), 60u);
    EXPECT_TRUE(index.roundProfile(0, 99, all).empty());
}

// --- msprobe layout ---------------------------------------------------------------------------

TEST(MsprobeReader, ReadsEntriesTensorsAndTheModuleTree) {
    test::TempDir dir("ui-analysis");
    const std::string dumpPath = dir / "dump_path";
    test::writeMsprobeStep(dumpPath, 0, test::kMsprobeDumpJson);
    test::writeMsprobeStep(dumpPath, 3, test::kMsprobeDumpJson);
    for (const std::string& start :
         {dir.path(), dumpPath, dumpPath + "/step3", dumpPath + "/step0/rank0"}) {
        auto root = analysis::findMsprobeDumpRoot(start);
        ASSERT_TRUE(root) << start;
        EXPECT_EQ(*root, dumpPath) << start;
    }
    auto reader = open(dumpPath + "/step0");
    ASSERT_TRUE(reader);
    EXPECT_EQ(reader->layout(), analysis::DumpLayout::Msprobe);
    DumpIndex index = readAll(*reader);
    EXPECT_TRUE(index.problems().empty()) << problems(index);
    ASSERT_EQ(index.processCount(), 1u);
    EXPECT_EQ(index.process(0).key, "rank0");
    EXPECT_EQ(index.rounds(0), (std::vector<int32_t>{0, 3}));
    ASSERT_EQ(index.opCount(), 3u);
    // construct.json: the API call sits under its module.
    const uint32_t module = index.findOp(0, "Module.fc.Linear.forward.0");
    const uint32_t linear = index.findOp(0, "Functional.linear.0.forward");
    ASSERT_NE(module, kNone);
    ASSERT_NE(linear, kNone);
    EXPECT_EQ(index.op(linear).parent, module);
    EXPECT_EQ(index.op(linear).type, "Functional.linear");
    EXPECT_EQ(index.op(module).type, "Linear");
    EXPECT_EQ(index.op(index.findOp(0, "Module.fc.Linear.parameters_grad.0")).type,
              "Linear.parameters_grad");
    // Tensors: args by position, kwargs by name; non-tensors and nulls skipped.
    std::vector<std::string> slots;
    for (uint32_t s : index.op(linear).tensorSlots) slots.push_back(index.describeSlot(s));
    EXPECT_EQ(slots, (std::vector<std::string>{"input 0", "input bias", "output 0"}));
    EXPECT_EQ(index.op(linear).rowCount, 6u);  // three tensors, two steps
    const uint32_t bias = index.slotRow(index.op(linear).tensorSlots[1], 3);
    ASSERT_NE(bias, kNone);
    EXPECT_TRUE(std::isnan(index.row(bias).get(analysis::Stat::Max)));
    EXPECT_EQ(index.row(bias).get(analysis::Stat::Min), -HUGE_VAL);
    EXPECT_EQ(index.row(bias).get(analysis::Stat::Norm), HUGE_VAL);
    EXPECT_EQ(index.op(linear).anomalies, analysis::kHasNan | analysis::kHasInf);
    EXPECT_TRUE(index.op(module).subtreeAnomalies & analysis::kHasNan);
    const uint32_t flag = index.slotRow(index.op(linear).tensorSlots[2], 0);
    EXPECT_EQ(index.row(flag).get(analysis::Stat::Max), 1.0);  // bool: any
    EXPECT_FALSE(index.row(flag).has(analysis::Stat::Mean));
    EXPECT_EQ(index.text(index.row(flag).dtype), "torch.bool");
    EXPECT_EQ(index.text(index.row(flag).shape), "");
    // The tensor file is looked up beside dump.json, not at the recorded (moved) dump_data_dir.
    const uint32_t input = index.slotRow(index.op(linear).tensorSlots[0], 0);
    EXPECT_EQ(index.tensorPath(input),
              dumpPath + "/step0/rank0/dump_tensor_data/Functional.linear.0.forward.input.0.pt");
    // Nested outputs and parameters get dotted indices.
    slots.clear();
    for (uint32_t s : index.op(module).tensorSlots) slots.push_back(index.describeSlot(s));
    EXPECT_EQ(slots, (std::vector<std::string>{"output 0.0", "input parameters.weight"}));
    slots.clear();
    for (uint32_t s : index.op(index.findOp(0, "Module.fc.Linear.parameters_grad.0")).tensorSlots)
        slots.push_back(index.describeSlot(s));
    EXPECT_EQ(slots, (std::vector<std::string>{"output weight"}));
}

TEST(MsprobeReader, ARewrittenDumpJsonAddsOnlyNewEntries) {
    test::TempDir dir("ui-analysis");
    const std::string dumpPath = dir / "dump_path";
    std::string partial = test::kMsprobeDumpJson;
    // The first rewrite during a long step holds only the first entry.
    const size_t second = partial.find("\"Module.fc.Linear.forward.0\": {");
    const std::string firstOnly = partial.substr(0, partial.rfind(',', second)) + "\n }}";
    test::writeMsprobeStep(dumpPath, 0, firstOnly);
    auto reader = open(dumpPath);
    DumpIndex index(reader->layout(), reader->root());
    index.apply(reader->poll(analysis::kDefaultPollBudget));
    EXPECT_TRUE(index.problems().empty()) << problems(index);
    EXPECT_EQ(index.rowCount(), 3u);
    test::replaceFile(dumpPath + "/step0/rank0/dump.json", test::kMsprobeDumpJson);
    const auto change = index.apply(reader->poll(analysis::kDefaultPollBudget));
    EXPECT_EQ(index.rowCount(), 6u);
    EXPECT_EQ(change.newRows, 3u);
    EXPECT_EQ(index.opCount(), 3u);
}

TEST(MsprobeReader, BrokenFilesGiveMessages) {
    test::TempDir dir("ui-analysis");
    const std::string dumpPath = dir / "dump_path";
    test::writeMsprobeStep(dumpPath, 0,
                           std::string(test::kMsprobeDumpJson).substr(0, 300));  // truncated
    test::writeMsprobeStep(dumpPath, 1, "{\"task\": \"statistics\"}");           // no data
    test::writeMsprobeStep(dumpPath, 2, test::kMsprobeDumpJson);
    test::writeFile(dumpPath + "/step2/rank0/construct.json", "[1, 2");
    test::writeFile(dumpPath + "/step2/rank0/dump_error_info.log",
                    "RuntimeError: hook failed\nmore");
    auto reader = open(dumpPath);
    DumpIndex index = readAll(*reader);
    EXPECT_TRUE(anyProblemContains(index, "step0/rank0/dump.json")) << problems(index);
    EXPECT_TRUE(anyProblemContains(index, "step1/rank0/dump.json: has no \"data\" object"))
        << problems(index);
    EXPECT_TRUE(anyProblemContains(index, "construct.json:1:6: not valid JSON")) << problems(index);
    EXPECT_TRUE(
        anyProblemContains(index, "the debugger recorded errors: RuntimeError: hook failed"))
        << problems(index);
    EXPECT_EQ(index.rowCount(), 6u);  // step 2 still read
}

// A construct.json whose parents go round (a damaged file): each entry is one op, the one that
// closes the cycle at the top level, and the cycle is said (it made an op at each turn: 259 ops
// of 16 entries).
TEST(MsprobeReader, ACycleOfParentsIsSaidAndMakesNoExtraOps) {
    test::TempDir dir("ui-analysis");
    const std::string dumpPath = dir / "dump_path";
    test::writeMsprobeStep(dumpPath, 0,
                           test::msprobeCalls({{"Functional.relu.0.forward", 1.0},
                                               {"Functional.relu.1.forward", 2.0}}));
    test::writeFile(dumpPath + "/step0/rank0/construct.json",
                    R"({"Functional.relu.0.forward": "Functional.relu.1.forward",)"
                    R"( "Functional.relu.1.forward": "Functional.relu.0.forward"})");
    auto reader = open(dumpPath);
    DumpIndex index = readAll(*reader);
    EXPECT_EQ(index.opCount(), 2u);
    EXPECT_EQ(index.rowCount(), 2u);
    EXPECT_TRUE(anyProblemContains(index,
                                   "step0/rank0/construct.json: the parents of "
                                   "\"Functional.relu.1.forward\" go round in a cycle"))
        << problems(index);
}

// A construct.json whose modules nest deeper than 256 levels (each the parent of the next, read
// one at a time): each level's name path holds its ancestors' names, and a chain of 100,000 took
// 23 GB. Past 256 levels an entry goes to the top level, said once.
TEST(MsprobeReader, ModulesNestedTooDeeplyGoToTheTopLevel) {
    test::TempDir dir("ui-analysis");
    const std::string dumpPath = dir / "dump_path";
    constexpr int kModules = 600;
    std::vector<std::pair<std::string, double>> calls;
    std::string construct = "{";
    for (int i = 0; i < kModules; ++i) {
        calls.push_back({"Module.m" + std::to_string(i) + ".M.forward.0", 1.0});
        construct += (i ? ", \"" : "\"") + calls.back().first +
                     "\": " + (i ? "\"" + calls[i - 1].first + "\"" : std::string("null"));
    }
    test::writeMsprobeStep(dumpPath, 0, test::msprobeCalls(calls));
    test::writeFile(dumpPath + "/step0/rank0/construct.json", construct + "}");
    auto reader = open(dumpPath);
    DumpIndex index = readAll(*reader);
    ASSERT_EQ(index.opCount(), static_cast<size_t>(kModules));
    int deepest = 0, topLevel = 0;
    for (uint32_t op = 0; op < index.opCount(); ++op) {
        deepest = std::max(deepest, index.op(op).depth);
        topLevel += index.op(op).parent == kNone ? 1 : 0;
    }
    EXPECT_EQ(deepest, 255);
    EXPECT_EQ(topLevel, 3);  // m0, m256, m512
    EXPECT_EQ(index.op(index.findOp(0, "Module.m300.M.forward.0")).depth, 44);
    EXPECT_TRUE(anyProblemContains(index,
                                   "step0/rank0/construct.json: modules nested deeper than 256 "
                                   "levels (\"Module.m256.M.forward.0\" and others)"))
        << problems(index);
}

// Items that are not what msprobe writes (an entry that is not an object, a bare number where
// an argument goes) are said, counted, not dropped without a word; None arguments (null) are
// msprobe's own and say nothing.
TEST(MsprobeReader, ItemsMsprobeDoesNotWriteAreSaid) {
    test::TempDir dir("ui-analysis");
    const std::string dumpPath = dir / "dump_path";
    std::string json = test::msprobeCalls({{"Functional.relu.0.forward", 1.0}});
    const std::string more =
        R"("Functional.relu.1.forward": null, )"
        R"("Functional.relu.2.forward": {"input_args": [null, 7], "output": "x"}, )";
    json.insert(json.find("\"Functional.relu.0.forward\""), more);
    test::writeMsprobeStep(dumpPath, 0, json);
    auto reader = open(dumpPath);
    DumpIndex index = readAll(*reader);
    EXPECT_EQ(index.rowCount(), 1u);
    EXPECT_TRUE(anyProblemContains(index,
                                   "step0/rank0/dump.json: 3 items are neither a tensor nor "
                                   "an argument as msprobe writes them, and not read (the "
                                   "first in \"Functional.relu.1.forward\")"))
        << problems(index) << json;
    // msprobe's own example, None arguments and all: nothing to say.
    test::TempDir clean("ui-analysis");
    test::writeMsprobeStep(clean / "dump_path", 0, test::kMsprobeDumpJson);
    auto cleanReader = open(clean / "dump_path");
    EXPECT_TRUE(readAll(*cleanReader).problems().empty());
}

// An entry given twice in dump.json: the last is read, and the first (here the one with NaN)
// is said to be hidden rather than dropped without a word.
TEST(MsprobeReader, AnEntryGivenTwiceIsSaid) {
    test::TempDir dir("ui-analysis");
    const std::string dumpPath = dir / "dump_path";
    test::writeMsprobeStep(dumpPath, 0,
                           test::msprobeCalls({{"Functional.relu.0.forward", NAN},
                                               {"Functional.relu.0.forward", 1.0}}));
    auto reader = open(dumpPath);
    DumpIndex index = readAll(*reader);
    EXPECT_TRUE(anyProblemContains(index,
                                   "step0/rank0/dump.json: keys given twice, only the last "
                                   "value of each is read: data.Functional.relu.0.forward"))
        << problems(index);
    EXPECT_EQ(index.rowCount(), 1u);  // the last
}

TEST(MsprobeNames, EntryNamesAndNonFiniteTokens) {
    auto api =
        analysis::parseMsprobeEntryName("Functional.scaled_dot_product_attention.12.backward");
    ASSERT_TRUE(api);
    EXPECT_EQ(api->kind, analysis::MsprobeEntryName::Kind::Api);
    EXPECT_EQ(api->name, "scaled_dot_product_attention");
    EXPECT_EQ(api->call, 12);
    EXPECT_EQ(api->direction, "backward");
    auto module = analysis::parseMsprobeEntryName("Module.layers.0.mlp.MLP.forward.3");
    ASSERT_TRUE(module);
    EXPECT_EQ(module->name, "layers.0.mlp");
    EXPECT_EQ(module->moduleClass, "MLP");
    EXPECT_EQ(analysis::msprobeEntryType(*module), "MLP");
    EXPECT_FALSE(analysis::parseMsprobeEntryName("not an entry"));
    EXPECT_EQ(analysis::quoteNonFiniteJsonTokens(
                  R"({"a": NaN, "b": [-Infinity, Infinity], "NaN": "x NaN Infinity"})"),
              R"({"a": "NaN", "b": ["-Infinity", "Infinity"], "NaN": "x NaN Infinity"})");
}

// --- tensors ----------------------------------------------------------------------------------

std::string writeHalfTensor(const std::string& path) {
    // float16 [2, 3, 4]: 0..23 scaled, one NaN, one +inf, negatives.
    std::vector<uint16_t> halves(24);
    auto toHalf = [](float f) -> uint16_t {  // exact for these small values
        if (std::isnan(f)) return 0x7e00;
        if (std::isinf(f)) return f > 0 ? 0x7c00 : 0xfc00;
        if (f == 0) return 0;
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        const uint16_t sign = (bits >> 16) & 0x8000;
        const int exponent = int((bits >> 23) & 0xff) - 127 + 15;
        return static_cast<uint16_t>(sign | (exponent << 10) | ((bits >> 13) & 0x3ff));
    };
    for (int i = 0; i < 24; ++i) halves[i] = toHalf(static_cast<float>(i) - 6.0f);
    halves[5] = toHalf(std::nanf(""));
    halves[17] = toHalf(INFINITY);
    format::BinHeader header;
    header.dtypeCode = 1;
    header.dims = {2, 3, 4};
    header.dataLength = 48;
    format::writeFileAtomically(path, format::makeBinHeader(header), halves.data(), 48);
    return path;
}

TEST(TensorView, DecodesSlicesAndCounts) {
    test::TempDir dir("ui-analysis");
    std::string error;
    auto tensor = analysis::loadTensorFile(writeHalfTensor(dir / "t.bin"), &error);
    ASSERT_TRUE(tensor) << error;
    EXPECT_EQ(analysis::dtypeLabel(*tensor), "float16");
    EXPECT_EQ(tensor->count, 24u);
    EXPECT_EQ(tensor->at(0), -6.0);
    EXPECT_EQ(tensor->at(23), 17.0);
    EXPECT_TRUE(std::isnan(tensor->at(5)));
    EXPECT_TRUE(tensor->stats.valid);
    EXPECT_EQ(tensor->stats.nanCount, 1u);
    EXPECT_TRUE(tensor->stats.hasPosInf);
    const auto g = analysis::sliceGeometry(tensor->header.dims);
    EXPECT_EQ(g.rows, 3);
    EXPECT_EQ(g.cols, 4);
    EXPECT_EQ(g.sliceCount(), 2u);
    EXPECT_EQ(analysis::sliceStart(g, {1}), 12u);
    EXPECT_EQ(analysis::sliceStart(g, {9}), 12u);  // clamped
    const auto second = analysis::summarizeValues(*tensor, 12, 12);
    EXPECT_EQ(second.posInf, 1u);
    EXPECT_EQ(second.nan, 0u);
    EXPECT_EQ(second.min, 6.0);
    const auto histogram = analysis::computeHistogram(*tensor, 8);
    uint64_t counted = 0;
    for (auto b : histogram.bins) counted += b;
    EXPECT_EQ(counted, 22u);  // finite values
    EXPECT_EQ(histogram.nan, 1u);
    EXPECT_EQ(histogram.posInf, 1u);
    EXPECT_EQ(histogram.lo, -6.0);
    EXPECT_EQ(histogram.hi, 17.0);
}

TEST(TensorView, BrokenAndHeaderOnlyFiles) {
    test::TempDir dir("ui-analysis");
    const std::string path = writeHalfTensor(dir / "t.bin");
    std::string text = test::readFile(path);
    test::writeFile(dir / "short.bin", text.substr(0, text.size() - 10));
    std::string error;
    EXPECT_FALSE(analysis::loadTensorFile(dir / "short.bin", &error));
    EXPECT_NE(error.find("short.bin"), std::string::npos) << error;
    test::writeFile(dir / "junk.bin", "\x01\x02 not a header");
    EXPECT_FALSE(analysis::loadTensorFile(dir / "junk.bin", &error));
    // A text file opened as a tensor is said to be none (a new user's readme.txt).
    test::writeFile(dir / "readme.txt", "hi\nthere\n");
    EXPECT_FALSE(analysis::loadTensorFile(dir / "readme.txt", &error));
    EXPECT_NE(error.find("readme.txt: not a tensor file"), std::string::npos) << error;
    EXPECT_FALSE(analysis::loadTensorFile(dir / "missing.bin", &error));

    format::BinHeader alias;
    alias.dtypeCode = 1;
    alias.dims = {2, 3, 4};
    alias.alias = "t.bin";
    format::writeFileAtomically(dir / "alias.bin", format::makeBinHeader(alias));
    auto headerOnly = analysis::loadTensorFile(dir / "alias.bin", &error);
    ASSERT_TRUE(headerOnly) << error;
    EXPECT_FALSE(headerOnly->hasValues());
    EXPECT_EQ(headerOnly->header.alias, "t.bin");
    ASSERT_TRUE(analysis::loadAliasedData(*headerOnly, path, &error)) << error;
    EXPECT_EQ(headerOnly->stats.nanCount, 1u);
    alias.dims = {24};
    format::writeFileAtomically(dir / "other.bin", format::makeBinHeader(alias));
    auto mismatched = analysis::loadTensorFile(dir / "other.bin", &error);
    ASSERT_TRUE(mismatched);
    EXPECT_FALSE(analysis::loadAliasedData(*mismatched, path, &error));
    EXPECT_NE(error.find("different dtype or shape"), std::string::npos) << error;
}

TEST(TensorView, AliasesResolveToTheFirstCopyInTheIndex) {
    test::TempDir dir("ui-analysis");
    test::DumpBuilder dump(dir.path());
    const auto first = dump.addRow(0, "2_1", "layer/mm", "aten::mm", true);
    // The next op's input is the same data: a header-only file naming the first copy.
    format::StatRow second = first;
    second.opId = "2_2";
    second.opName = "layer/add";
    second.isOutput = false;
    second.tensorPath =
        dump.writeAliasBin(0, "2_2_add/before/intensor0.bin", "2_1_outtensor0.bin", {3});
    dump.appendRaw(0, format::formatStatRow(second));
    dump.setStatus("complete");
    auto reader = open(dump.root());
    DumpIndex index = readAll(*reader);
    const uint32_t row = index.slotRow(index.op(index.findOp(0, "2_2")).tensorSlots[0], 0);
    EXPECT_EQ(index.resolveTensorAlias(row, "2_1_outtensor0.bin"), first.tensorPath);
    EXPECT_EQ(index.resolveTensorAlias(row, "9_outtensor0.bin"), "");
    EXPECT_EQ(index.resolveTensorAlias(row, "garbage"), "");
}

// A dump of task tensor prints N/A statistics: asked, the reader computes them from the tensor
// files once the rows are read, a few per poll within its budget, following header-only files
// to their first copy; a file that cannot be read is said, and its row stays without.
TEST(AtbReader, StatisticsADumpLeftOutComeFromItsTensorFilesWhenAsked) {
    test::TempDir dir("ui-analysis");
    test::DumpBuilder dump(dir.path());
    dump.setStatisticsPrinted(false);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const auto mm = dump.addRow(0, "2_1", "layer/mm", "aten::mm", true, {1.0f, -2.0f, 3.0f});
    dump.addRow(0, "2_3", "layer/div", "aten::div", true, {nan, 4.0f}, {1, 2});
    const auto gone = dump.addRow(0, "2_4", "layer/sum", "aten::sum", true, {5.0f});
    // An input of op `id` (layer/`name`) whose header-only file names `data` as its data.
    auto headerOnlyInput = [&](const std::string& id, const std::string& name,
                               const std::string& data) {
        format::StatRow row = mm;
        row.opId = id;
        row.opName = "layer/" + name;
        row.isOutput = false;
        row.tensorPath =
            dump.writeAliasBin(0, id + "_" + name + "/before/intensor0.bin", data, {3});
        dump.appendRaw(0, format::formatStatRow(row));
        return row;
    };
    headerOnlyInput("2_2", "add", "2_1_outtensor0.bin");  // the first copy: mm's output
    // Header-only files whose data is not there: one naming an op that wrote nothing (said),
    // one naming itself, as filter_level 2 keeps no data (not a problem).
    const auto dangling = headerOnlyInput("2_5", "view", "9_outtensor0.bin");
    const auto noData = headerOnlyInput("2_6", "neg", "intensor0.bin");
    // And one naming itself as its own first copy, by its op's id: a damaged dump (said).
    const auto selfCopy = headerOnlyInput("2_8", "mul", "2_8_intensor0.bin");
    // A row whose file holds another tensor than its shape says (3 elements, not 4).
    format::StatRow replaced = mm;
    replaced.opId = "2_7";
    replaced.opName = "layer/pad";
    replaced.shape = "4";
    dump.appendRaw(0, format::formatStatRow(replaced));
    dump.addRow(1, "2_1", "layer/mm", "aten::mm", true, {0.5f, 0.25f});
    ASSERT_EQ(::unlink(gone.tensorPath.c_str()), 0);
    dump.setStatus("complete");

    // Not asked (probe summary, probe compare): the rows are as the dump has them.
    {
        auto reader = open(dump.root());
        const DumpIndex index = readAll(*reader);
        ASSERT_EQ(index.rowCount(), 9u);
        for (uint32_t r = 0; r < index.rowCount(); ++r) EXPECT_EQ(index.row(r).present, 0u);
        EXPECT_EQ(index.rowsWithStatisticsFromData(), 0u);
    }

    auto reader = open(dump.root());
    reader->setStatisticsFromTensorFiles(true);
    DumpIndex index(reader->layout(), reader->root());
    // A budget of one byte: one file per poll, the rows all read by the first, which computes
    // none (the rows are shown first).
    std::vector<uint64_t> pendingAfterEachPoll;
    for (int poll = 0; poll < 20; ++poll) {
        auto delta = reader->poll(1);
        ASSERT_TRUE(delta.statisticsPending.has_value());
        pendingAfterEachPoll.push_back(*delta.statisticsPending);
        index.apply(std::move(delta));
        if (pendingAfterEachPoll.back() == 0) break;
    }
    ASSERT_EQ(index.rowCount(), 9u);
    EXPECT_EQ(pendingAfterEachPoll, (std::vector<uint64_t>{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}));
    EXPECT_EQ(index.rowsAwaitingStatistics(), 0u);
    EXPECT_EQ(index.rowsWithStatisticsFromData(), 4u);

    auto rowOf = [&](const std::string& id, int32_t round) {
        const uint32_t op = index.findOp(0, id);
        EXPECT_NE(op, analysis::kNone) << id;
        return op == analysis::kNone ? analysis::kNone
                                     : index.slotRow(index.op(op).tensorSlots.at(0), round);
    };
    auto expectStats = [&](uint32_t row, double max, double min, double mean, double norm) {
        ASSERT_NE(row, analysis::kNone);
        const auto& record = index.row(row);
        EXPECT_TRUE(record.statsFromData);
        EXPECT_EQ(record.present, 0xfu);
        EXPECT_DOUBLE_EQ(record.get(analysis::Stat::Max), max);
        EXPECT_DOUBLE_EQ(record.get(analysis::Stat::Min), min);
        EXPECT_DOUBLE_EQ(record.get(analysis::Stat::Mean), mean);
        EXPECT_NEAR(record.get(analysis::Stat::Norm), norm, 1e-12);
    };
    expectStats(rowOf("2_1", 0), 3, -2, 2.0 / 3, std::sqrt(14.0));
    expectStats(rowOf("2_2", 0), 3, -2, 2.0 / 3, std::sqrt(14.0));  // its first copy's data
    expectStats(rowOf("2_1", 1), 0.5, 0.25, 0.375, std::sqrt(0.3125));
    // A NaN makes all four NaN (as PyTorch says): the row, its op and the op's parent say so,
    // and the first NaN is found where it is.
    const uint32_t div = rowOf("2_3", 0);
    ASSERT_NE(div, analysis::kNone);
    EXPECT_TRUE(std::isnan(index.row(div).get(analysis::Stat::Max)));
    EXPECT_EQ(index.row(div).anomalies, analysis::kHasNan);
    EXPECT_EQ(index.op(index.findOp(0, "2_3")).anomalies, analysis::kHasNan);
    EXPECT_EQ(index.firstAnomalousRow(0, analysis::kHasNan), div);
    // The file that is gone: said, the row left without statistics.
    const uint32_t sum = rowOf("2_4", 0);
    ASSERT_NE(sum, analysis::kNone);
    EXPECT_EQ(index.row(sum).present, 0u);
    EXPECT_FALSE(index.row(sum).statsFromData);
    bool said = false;
    for (const auto& problem : index.problems())
        said = said || (problem.find("no statistics from the tensor file") != std::string::npos &&
                        problem.find(gone.tensorPath) != std::string::npos);
    EXPECT_TRUE(said);
    // The dangling alias: said (it was N/A without a word); the one naming itself: not.
    EXPECT_EQ(index.row(rowOf("2_5", 0)).present, 0u);
    EXPECT_EQ(index.row(rowOf("2_6", 0)).present, 0u);
    EXPECT_TRUE(anyProblemContains(index, dangling.tensorPath +
                                              ": its data is to be in 9_outtensor0.bin, which is "
                                              "not among the tensors of its round"))
        << problems(index);
    EXPECT_FALSE(anyProblemContains(index, noData.tensorPath)) << problems(index);
    EXPECT_EQ(index.row(rowOf("2_8", 0)).present, 0u);
    EXPECT_TRUE(anyProblemContains(index, selfCopy.tensorPath +
                                              " names itself (2_8_intensor0.bin) as the first "
                                              "copy of its data, but holds a header only"))
        << problems(index);
    // The file of another shape: said, no statistics of another tensor given to the row.
    EXPECT_EQ(index.row(rowOf("2_7", 0)).present, 0u);
    EXPECT_TRUE(
        anyProblemContains(index, mm.tensorPath + ": holds 3 elements, where its row says shape 4"))
        << problems(index);
    EXPECT_EQ(index.problems().size(), 4u) << problems(index);
}

// An overflow in a task tensor dump: `probe overflow` finds it in the files; the app, which
// computes the statistics as it reads the dump, does not read them again for each search (each
// search held a whole 3 GiB tensor, and went on minutes after the dump was closed).
TEST(Overflow, RowsWithoutStatisticsAreReadFromTheirFilesOnlyWhenAsked) {
    test::TempDir dir("ui-analysis");
    test::DumpBuilder dump(dir.path());
    dump.setStatisticsPrinted(false);
    dump.addRow(0, "0", "layer", "Layer", false, {1, 2});
    dump.addRow(0, "0", "layer", "Layer", true, {1, INFINITY});
    dump.setStatus("complete");
    const DumpIndex asRead = analysis::indexOf(dump.root());
    const auto cli = analysis::findOverflowBirths(asRead, {});
    ASSERT_EQ(cli.births.size(), 1u);
    EXPECT_EQ(asRead.op(cli.births[0].op).id, "0");
    analysis::OverflowOptions app;
    app.readTensorFiles = false;
    EXPECT_TRUE(analysis::findOverflowBirths(asRead, app).births.empty());
    // Once the statistics are there, the app's search finds it.
    const DumpIndex inApp = analysis::indexAsTheAppReadsIt(dump.root());
    ASSERT_EQ(inApp.rowsWithStatisticsFromData(), 2u);
    const auto found = analysis::findOverflowBirths(inApp, app);
    ASSERT_EQ(found.births.size(), 1u);
    EXPECT_EQ(inApp.op(found.births[0].op).id, "0");
}

// statistic.csv records absolute paths into the folder the dump was written to; a copy or a
// moved dump is read from its own files (a copied file that is broken is not hidden by the
// original), aliases included.
TEST(AtbReader, TensorPathsResolveInsideACopiedOrMovedDump) {
    test::TempDir dir("ui-analysis");
    test::DumpBuilder dump(dir / "run");
    const auto first = dump.addRow(0, "2_1", "layer/mm", "aten::mm", true, {1, 2, 3, 4});
    format::StatRow second = first;
    second.opId = "2_2";
    second.opName = "layer/add";
    second.isOutput = false;
    second.tensorPath =
        dump.writeAliasBin(0, "2_2_add/before/intensor0.bin", "2_1_outtensor0.bin", {4});
    dump.appendRaw(0, format::formatStatRow(second));
    dump.setStatus("complete");
    const std::string firstInRound = "/data/0_777/0/2_1_mm/after/outtensor0.bin";
    ASSERT_EQ(first.tensorPath, dump.root() + firstInRound);

    std::filesystem::copy(dir / "run", dir / "copy", std::filesystem::copy_options::recursive);
    const std::string copyRoot = dir / "copy/atb_dump_data";
    std::filesystem::resize_file(copyRoot + firstInRound,
                                 std::filesystem::file_size(copyRoot + firstInRound) - 4);
    DumpIndex copy = readAll(*open(dir / "copy"));
    const uint32_t firstRow = copy.slotRow(copy.op(copy.findOp(0, "2_1")).tensorSlots[0], 0);
    const uint32_t secondRow = copy.slotRow(copy.op(copy.findOp(0, "2_2")).tensorSlots[0], 0);
    EXPECT_EQ(copy.tensorPath(firstRow), copyRoot + firstInRound);
    EXPECT_EQ(copy.tensorPath(secondRow), copyRoot + "/data/0_777/0/2_2_add/before/intensor0.bin");
    EXPECT_EQ(copy.resolveTensorAlias(secondRow, "2_1_outtensor0.bin"), copyRoot + firstInRound);
    std::string error;
    EXPECT_FALSE(analysis::loadTensorFile(copy.tensorPath(firstRow), &error));
    EXPECT_NE(error.find("truncated"), std::string::npos) << error;

    std::filesystem::rename(dir / "run", dir / "moved");
    const std::string movedRoot = dir / "moved/atb_dump_data";
    DumpIndex moved = readAll(*open(dir / "moved"));
    EXPECT_EQ(moved.tensorPath(firstRow), movedRoot + firstInRound);
    EXPECT_EQ(moved.resolveTensorAlias(secondRow, "2_1_outtensor0.bin"), movedRoot + firstInRound);
    auto tensor = analysis::loadTensorFile(moved.tensorPath(firstRow), &error);
    ASSERT_TRUE(tensor) << error;
    EXPECT_EQ(tensor->stats.max, 4.0);

    // A path that does not go through a round directory is taken as recorded.
    EXPECT_EQ(
        analysis::tensorPathInDump(copyRoot + "/data/0_777/0/statistic.csv", "/elsewhere/x.bin"),
        "/elsewhere/x.bin");
}

TEST(TensorExport, NpyAndCsv) {
    test::TempDir dir("ui-analysis");
    std::string error;
    auto tensor = analysis::loadTensorFile(writeHalfTensor(dir / "t.bin"), &error);
    ASSERT_TRUE(tensor);
    ASSERT_TRUE(analysis::writeNpy(*tensor, dir / "t.npy", &error)) << error;
    const std::string npy = test::readFile(dir / "t.npy");
    ASSERT_GT(npy.size(), 10u);
    EXPECT_EQ(npy.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
    const size_t headerLength =
        static_cast<unsigned char>(npy[8]) | (static_cast<unsigned char>(npy[9]) << 8);
    EXPECT_EQ((10 + headerLength) % 64, 0u);
    const std::string dict = npy.substr(10, headerLength);
    EXPECT_NE(dict.find("'descr': '<f2'"), std::string::npos) << dict;
    EXPECT_NE(dict.find("'shape': (2, 3, 4)"), std::string::npos) << dict;
    EXPECT_EQ(dict.back(), '\n');
    EXPECT_EQ(npy.substr(10 + headerLength),
              std::string(reinterpret_cast<const char*>(tensor->bytes.data()), 48));

    ASSERT_TRUE(analysis::writeCsv(*tensor, dir / "t.csv", &error)) << error;
    const auto lines = test::splitLines(test::readFile(dir / "t.csv"));
    ASSERT_EQ(lines.size(), 6u);
    EXPECT_EQ(lines[0], "-6,-5,-4,-3");
    EXPECT_EQ(lines[1], "-2,nan,0,1");
    EXPECT_EQ(lines[4], "10,inf,12,13");

    analysis::TensorData empty;
    EXPECT_FALSE(analysis::writeNpy(empty, dir / "e.npy", &error));
    EXPECT_FALSE(analysis::writeCsv(*tensor, dir / "no/such/dir/t.csv", &error));
    EXPECT_NE(error.find("cannot write"), std::string::npos) << error;
}

// --- hostile dump files (issue 9): refused with what they are, never read forever or whole -------

long maxResidentKb() {
    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss;
}

// Under AddressSanitizer freed blocks wait in its quarantine (up to 256 MB) before reuse, so the
// peak resident size counts every buffer a reader ever freed, not what it keeps.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kResidentSizeMeasuresTheReader = false;
#else
constexpr bool kResidentSizeMeasuresTheReader = true;
#endif

TEST(HostileDump, SpecialFilesInPlaceOfDumpFilesAreRefusedWithoutBlocking) {
    test::TempDir dir("ui-analysis");
    test::DumpBuilder dump(dir.path());
    dump.addRow(0, "0", "layer", "Layer", false);
    // A FIFO where a structure file and a round's statistic.csv should be, a link to /dev/zero
    // for another round: opening the FIFO waited for a writer, /dev/zero never ends.
    format::makeDirectories(dump.root() + "/info/layer/0_777");
    ASSERT_EQ(::mkfifo((dump.root() + "/info/layer/0_777/layer_0.json").c_str(), 0600), 0);
    format::makeDirectories(dump.roundDir(1));
    ASSERT_EQ(::mkfifo(dump.csvPath(1).c_str(), 0600), 0);
    format::makeDirectories(dump.roundDir(2));
    ASSERT_EQ(::symlink("/dev/zero", dump.csvPath(2).c_str()), 0);
    ASSERT_EQ(::mkfifo((dump.root() + "/probe_status.json").c_str(), 0600), 0);
    auto reader = open(dump.root());
    DumpIndex index = readAll(*reader);
    EXPECT_EQ(index.rowCount(), 1u);
    EXPECT_TRUE(
        anyProblemContains(index, "layer_0.json: is a named pipe (FIFO), not a regular file"))
        << problems(index);
    EXPECT_TRUE(
        anyProblemContains(index, "1/statistic.csv: is a named pipe (FIFO), not a regular file"))
        << problems(index);
    EXPECT_TRUE(
        anyProblemContains(index, "2/statistic.csv: is a character device, not a regular file"))
        << problems(index);
    EXPECT_TRUE(anyProblemContains(index, "probe_status.json: is a named pipe")) << problems(index);
    // Said once, not at every poll.
    const size_t said = index.problems().size();
    index.apply(reader->poll(analysis::kDefaultPollBudget));
    EXPECT_EQ(index.problems().size(), said) << problems(index);
}

TEST(HostileDump, ARowWithoutEndIsSkippedNotBuffered) {
    // 64 MiB without a line end (a sparse file): the reader doubled its buffer up to the whole.
    test::TempDir dir("ui-analysis");
    test::DumpBuilder dump(dir.path());
    dump.addRow(0, "0", "layer", "Layer", false);
    dump.appendRaw(1, "0_777,1,layer,Layer,0,input,0,float,nd,3,1,1,1,1,N/A\n");
    const std::string csv = dump.csvPath(1);
    const auto size = std::filesystem::file_size(csv);
    ASSERT_EQ(::truncate(csv.c_str(), static_cast<off_t>(size + (64u << 20))), 0);
    dump.appendRaw(2, "0_777,2,layer,Layer,0,input,0,float,nd,3,1,1,1,1,N/A\n");
    dump.setStatus("complete");
    const long before = maxResidentKb();
    auto reader = open(dump.root());
    DumpIndex index = readAll(*reader);
    if (kResidentSizeMeasuresTheReader) {
        EXPECT_LT(maxResidentKb() - before, 24 * 1024);
    }
    EXPECT_EQ(index.rowCount(), 3u);
    EXPECT_TRUE(
        anyProblemContains(index, "1/statistic.csv:3: row skipped: longer than 1048576 bytes"))
        << problems(index);
    EXPECT_EQ(index.problems().size(), 1u) << problems(index);
}

// A whole row over the limit (a 1.1 MB and a 3 MB op name, their line ends in the same read)
// is skipped as one without its end is: the limit held only for a read that found no line end,
// and the 3 MB name reached the op tree.
// Two ranks, the reference's rank 0 with 101 rounds the candidate lacks (5,151 executions, past
// the 5,000 listed): rank 1's op of one run only, just before its first divergence, is still
// named. Rank 0's extra rounds were listed before rank 1's paired rounds and cut them off, and
// no op was named for any divergence.
TEST(CompareRanks, OpsJustBeforeADivergenceAreNamedWhenAnotherRankHasRoundsOfOneRunOnly) {
    test::TempDir dir("ui-analysis");
    const auto write = [&](const std::string& name, bool candidate) {
        test::DumpBuilder rank0(dir.path() + "/" + name, "0_777");
        for (int round = 0; round < (candidate ? 1 : 102); ++round) {
            for (int i = 0; i < (round == 0 ? 1 : 50); ++i)
                rank0.addRow(round, "0_" + std::to_string(i), "L/x" + std::to_string(i), "aten::x",
                             true, {static_cast<float>(i)});
            rank0.addRow(round, "0", "L", "Layer", true, {9.0f});
        }
        test::DumpBuilder rank1(dir.path() + "/" + name, "1_778");
        rank1.addRow(0, "0_0", "L/fc", "aten::fc", true, {1.0f});
        if (candidate) rank1.addRow(0, "0_1", "L/p", "aten::p", true, {2.0f});
        const std::string add = candidate ? "0_2" : "0_1";
        rank1.addRow(0, add, "L/add", "aten::add", false, {candidate ? 9.0f : -1.0f});
        rank1.addRow(0, add, "L/add", "aten::add", true, {7.0f});
        rank1.addRow(0, "0", "L", "Layer", true, {9.0f});
        rank0.setStatus("complete");
        return rank0.root();
    };
    const std::string referencePath = write("reference", false),
                      candidatePath = write("candidate", true);
    auto reader = open(referencePath);
    const DumpIndex reference = readAll(*reader);
    reader = open(candidatePath);
    const DumpIndex candidate = readAll(*reader);
    ASSERT_EQ(reference.processCount(), 2u);
    const auto result = analysis::compareDumps(reference, candidate, {});
    const std::string report = analysis::formatCompareReport(result);
    ASSERT_GT(result.unpairedOps, result.unpaired.size()) << "the list is cut, as the test needs";
    ASSERT_TRUE(result.firstBornHere) << report;
    EXPECT_EQ(reference.op(result.ops[*result.firstBornHere].referenceOp).namePath, "L/add");
    EXPECT_FALSE(result.unpairedCutInPairedRound);
    EXPECT_NE(report.find("  ops that ran in one run only, just before it:\n"
                          "    candidate round 0  1_778  L/p (aten::p)"),
              std::string::npos)
        << report;
}

TEST(HostileDump, EveryRowOverTheLimitIsSkipped) {
    test::TempDir dir("ui-analysis");
    test::DumpBuilder dump(dir.path());
    dump.addRow(0, "0", "layer", "Layer", false);
    for (const size_t bytes : {size_t(1100000), size_t(3000000)})
        dump.appendRaw(0, "0_777,0," + std::string(bytes, 'n') +
                              ",Layer,0_9,input,0,float,nd,3,1,1,1,1,N/A\n");
    dump.appendRaw(0, "0_777,0,after,Layer,1,input,0,float,nd,3,1,1,1,1,N/A\n");
    dump.setStatus("complete");
    auto reader = open(dump.root());
    DumpIndex index = readAll(*reader);
    EXPECT_EQ(index.rowCount(), 2u) << problems(index);  // the first and the last
    EXPECT_TRUE(
        anyProblemContains(index, "0/statistic.csv:3: row skipped: longer than 1048576 bytes"))
        << problems(index);
    EXPECT_TRUE(
        anyProblemContains(index, "0/statistic.csv:4: row skipped: longer than 1048576 bytes"))
        << problems(index);
    for (uint32_t op = 0; op < index.opCount(); ++op) EXPECT_LT(index.op(op).name.size(), 1000u);
}

TEST(HostileDump, HugeAndDeepJsonFilesAreRefusedWithTheirPlace) {
    test::TempDir dir("ui-analysis");
    test::DumpBuilder dump(dir.path());
    dump.addRow(0, "0", "layer", "Layer", false);
    format::makeDirectories(dump.root() + "/info/model/0_777");
    const std::string model = dump.root() + "/info/model/0_777/Model.json";
    test::writeFile(model, "");
    ASSERT_EQ(::truncate(model.c_str(), 6ll << 30), 0);  // 6 GiB, sparse
    format::makeDirectories(dump.root() + "/info/layer/0_777");
    test::writeFile(dump.root() + "/info/layer/0_777/layer_0.json",
                    "{\"opName\": \"layer_0\",\n \"param\": " + std::string(100000, '[') + "}");
    const long before = maxResidentKb();
    auto reader = open(dump.root());
    DumpIndex index = readAll(*reader);
    if (kResidentSizeMeasuresTheReader) {
        EXPECT_LT(maxResidentKb() - before, 24 * 1024);
    }
    EXPECT_TRUE(anyProblemContains(
        index, "Model.json: is 6442450944 bytes, more than the limit of 268435456"))
        << problems(index);
    EXPECT_TRUE(anyProblemContains(index, "layer_0.json:2:266: nested deeper than 256 levels"))
        << problems(index);

    const std::string dumpPath = dir / "dump_path";
    test::writeMsprobeStep(
        dumpPath, 0,
        "{\"task\": \"statistics\", \"data\": {\"x\": " + std::string(300000, '[') + "}}");
    test::writeMsprobeStep(
        dumpPath, 1,
        std::string(
            "{\"data\": {\"Functional.relu.0.forward\": {\"output\": [{\"type\": \"torch.Tensor\", "
            "\"dtype\": \"torch.float32\", \"shape\": [2], \"Max\": 1e999}]}}}"));
    test::writeMsprobeStep(dumpPath, 2, test::kMsprobeDumpJson);
    ASSERT_EQ(::unlink((dumpPath + "/step2/rank0/construct.json").c_str()), 0);
    ASSERT_EQ(::mkfifo((dumpPath + "/step2/rank0/construct.json").c_str(), 0600), 0);
    auto msprobe = open(dumpPath);
    DumpIndex msprobeIndex = readAll(*msprobe);
    EXPECT_TRUE(anyProblemContains(msprobeIndex, "step0/rank0/dump.json:1:"))
        << problems(msprobeIndex);
    EXPECT_TRUE(anyProblemContains(msprobeIndex, "nested deeper than 256 levels"))
        << problems(msprobeIndex);
    EXPECT_TRUE(anyProblemContains(msprobeIndex, "step1/rank0/dump.json:1:"))
        << problems(msprobeIndex);
    EXPECT_TRUE(anyProblemContains(msprobeIndex, "the number 1e999 is out of range"))
        << problems(msprobeIndex);
    EXPECT_TRUE(anyProblemContains(msprobeIndex, "construct.json: is a named pipe"))
        << problems(msprobeIndex);
    EXPECT_EQ(msprobeIndex.rowCount(), 6u);  // step 2 still read
}

// Round 0's one row, op "0" ("layer"), output 0 of `elements` float32 whose tensor file is sparse
// (zeros, taking no disk) and whose statistics are N/A, as task tensor writes them.
format::StatRow addHugeTensorRow(test::DumpBuilder& dump, uint64_t elements) {
    format::StatRow row;
    row.devicePid = "0_777";
    row.opName = row.opType = "layer";
    row.opId = "0";
    row.isOutput = true;
    row.index = "0";
    row.dtype = "float";
    row.format = "nd";
    row.shape = std::to_string(elements);
    format::makeDirectories(dump.roundDir(0) + "/0_layer/after");
    row.tensorPath = dump.roundDir(0) + "/0_layer/after/outtensor0.bin";
    format::BinHeader header;
    header.dims = {static_cast<int64_t>(elements)};
    header.dataLength = elements * sizeof(float);
    const std::string text = format::makeBinHeader(header);
    test::writeFile(row.tensorPath, text);
    EXPECT_EQ(
        ::truncate(row.tensorPath.c_str(), static_cast<off_t>(text.size() + header.dataLength)), 0);
    dump.appendRaw(0, format::formatStatRow(row));
    return row;
}

// A task tensor dump's statistics come from its files a piece at a time: a file of 256 MiB
// (sparse: zeros) costs a few MiB, where reading it whole cost all of it (and a crafted one
// of 4 GiB, four).
TEST(HostileDump, StatisticsOfAHugeTensorFileAreReadInPieces) {
    test::TempDir dir("ui-analysis");
    test::DumpBuilder dump(dir.path());
    const uint64_t elements = 1ull << 26;  // float32: 256 MiB
    const format::StatRow row = addHugeTensorRow(dump, elements);
    dump.setStatus("complete");
    // Given up between pieces once its owner is done with it (the app's exit waited 15 s for
    // the poll of a 3 GiB file to end).
    int asked = 0;
    std::string error;
    EXPECT_FALSE(analysis::statisticsOfTensorFile(row.tensorPath, true, &error, [&] {
        ++asked;
        return false;
    }));
    EXPECT_EQ(asked, 1);
    EXPECT_EQ(error, row.tensorPath + ": stopped");
    // A row whose shape says another number of elements: refused before a piece is read.
    asked = 0;
    const std::string rowShape = "1x1x64";
    EXPECT_FALSE(analysis::statisticsOfTensorFile(
        row.tensorPath, true, &error,
        [&] {
            ++asked;
            return true;
        },
        &rowShape));
    EXPECT_EQ(asked, 0);
    EXPECT_EQ(error, row.tensorPath + ": holds " + std::to_string(elements) +
                         " elements, where its row says shape 1x1x64");
    {
        std::atomic<bool> stop{false};
        auto stopped = open(dump.root());
        stopped->setStatisticsFromTensorFiles(true);
        stopped->setStopFlag(&stop);
        EXPECT_EQ(stopped->poll(analysis::kDefaultPollBudget).rows.size(), 1u);
        stop = true;
        const auto delta = stopped->poll(analysis::kDefaultPollBudget);
        EXPECT_TRUE(delta.rowStatistics.empty());
        EXPECT_EQ(delta.statisticsPending, 1u);
        EXPECT_TRUE(delta.problems.empty());
    }
    const long before = maxResidentKb();
    auto reader = open(dump.root());
    reader->setStatisticsFromTensorFiles(true);
    DumpIndex index(reader->layout(), reader->root());
    for (int poll = 0; poll < 1000 && index.rowsWithStatisticsFromData() == 0; ++poll)
        index.apply(reader->poll(analysis::kDefaultPollBudget));
    if (kResidentSizeMeasuresTheReader) {
        EXPECT_LT(maxResidentKb() - before, 24 * 1024);
    }
    ASSERT_EQ(index.rowCount(), 1u);
    ASSERT_EQ(index.rowsWithStatisticsFromData(), 1u) << problems(index);
    for (int i = 0; i < analysis::kStatCount; ++i)
        EXPECT_EQ(index.row(0).value[i], 0.0) << analysis::statName(static_cast<analysis::Stat>(i));
}

// A tensor file bigger than a poll's budget has its statistics computed over several polls, a
// budget's worth at a time, and rows written meanwhile come at the next poll (a 3 GiB file held
// the poll that read it, and the rows of a live run behind it, for seconds).
TEST(HostileDump, AHugeTensorsStatisticsGoOnAcrossPollsNewRowsFirst) {
    test::TempDir dir("ui-analysis");
    test::DumpBuilder dump(dir.path());
    const uint64_t elements = 1ull << 24;  // float32: 64 MiB, eight budgets
    const uint64_t bytes = elements * sizeof(float);
    addHugeTensorRow(dump, elements);
    dump.setStatus("running");
    auto reader = open(dump.root());
    reader->setStatisticsFromTensorFiles(true);
    const uint64_t budget = analysis::kDefaultPollBudget;
    ASSERT_LT(budget, bytes / 4);
    DumpIndex index(reader->layout(), reader->root());
    index.apply(reader->poll(budget));
    ASSERT_EQ(index.rowCount(), 1u);
    auto delta = reader->poll(budget);
    EXPECT_TRUE(delta.rowStatistics.empty());
    EXPECT_EQ(delta.statisticsPending, 1u);
    index.apply(std::move(delta));
    // A row written while the tensor's statistics are computed: read at the next poll.
    dump.addRow(0, "1", "head", "Linear", true);
    delta = reader->poll(budget);
    EXPECT_EQ(delta.rows.size(), 1u);
    EXPECT_TRUE(delta.rowStatistics.empty());
    index.apply(std::move(delta));
    ASSERT_EQ(index.rowCount(), 2u);
    int polls = 0;
    while (polls < 100 && index.rowsWithStatisticsFromData() == 0) {
        index.apply(reader->poll(budget));
        ++polls;
    }
    ASSERT_EQ(index.rowsWithStatisticsFromData(), 1u) << problems(index);
    // A budget's worth a poll: 64 MiB in 8 MiB pieces, one read before the row came.
    EXPECT_GE(polls, static_cast<int>(bytes / budget) - 2) << polls;
    EXPECT_LE(polls, static_cast<int>(bytes / budget)) << polls;
    for (int i = 0; i < analysis::kStatCount; ++i)
        EXPECT_EQ(index.row(0).value[i], 0.0) << analysis::statName(static_cast<analysis::Stat>(i));
}

TEST(HostileDump, CraftedTensorHeadersAreErrorsNamingTheFileAndLine) {
    // Length and data offset near 2^64, dtype 777, dims whose product overflows: an exception
    // (QUnhandledException in the app, "internal error" in probe compare) or a huge allocation.
    test::TempDir dir("ui-analysis");
    const std::string max = "18446744073709551615";
    auto bin = [](const std::string& length, const std::string& dtype, const std::string& dims,
                  const std::string& data) {
        return "$Version=1.0\n$Object.Count=1\n$Object.Length=" + length +
               "\nformat=2\ndtype=" + dtype + "\ndims=" + dims + "\n$Object.data=" + data +
               "\n$End=1\n0123456789abcdef";
    };
    const std::vector<std::pair<std::string, std::string>> crafted = {
        {bin(max, "0", "4", "0," + max),
         "header line 3: data length 18446744073709551615 does not match dims 4"},
        {bin("16", "0", "4", max + ",16"), "header line 7:"},
        {bin("16", "777", "4", "0,16"),
         "header line 5: dtype=777 is not a dtype code this version knows"},
        // The attacker's file: an unknown dtype skipped the length check, and length + header
        // wrapped around 2^64: "vector::_M_default_append" from probe compare.
        {bin("18446744073709551500", "777", "4", "0,18446744073709551500"),
         "header line 5: dtype=777 is not"},
        {bin("16", "0", "65536,65536,65536,65536", "0,16"),
         "header line 6: dims 65536x65536x65536x65536 hold more"},
        {bin("0", "0", "4611686018427387904", "0,0"),
         "header line 6: dims 4611686018427387904 hold more"},  // 0 bytes mod 2^64
    };
    for (size_t i = 0; i < crafted.size(); ++i) {
        const std::string path = dir / ("t" + std::to_string(i) + ".bin");
        test::writeFile(path, crafted[i].first);
        std::string error;
        std::optional<analysis::TensorData> tensor;
        EXPECT_NO_THROW(tensor = analysis::loadTensorFile(path, &error));
        EXPECT_FALSE(tensor);
        EXPECT_EQ(error.rfind(path + ": " + crafted[i].second, 0), 0u) << error;
    }
    const std::string fifo = dir / "fifo.bin";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    std::string error;
    EXPECT_FALSE(analysis::loadTensorFile(fifo, &error));
    EXPECT_EQ(error, fifo + ": is a named pipe (FIFO), not a regular file");
}

}  // namespace
}  // namespace probe
