// probe_bench_gui_load: how long a big dump takes to open, and whether the window stays
// responsive meanwhile and afterwards. Writes a synthetic dump (100,000 ops, 1,000,000 rows by
// default) unless given one, then measures
//   1. the Qt-free readers alone (parse + index), and
//   2. the application: probe-studio's main window (offscreen) opening the dump, with the
//      longest stall of its event loop while loading, then browsing (expand, search, filter,
//      select a deep op, plot every op of a round), and
//   3. comparing: the dump opened again as the reference and compared with itself, the longest
//      stall meanwhile, and what starting a comparison costs the GUI thread.
//   probe_bench_gui_load [--dump DIR] [--ops N] [--rows N] [--keep] [--sort-inline]
//   (--sort-inline: the compared ops table sorts on the GUI thread whatever its size, as it did
//   before sorting moved to a worker thread: for a before/after of that)
//   With STALL_TRACE set in the environment, the longest stalls while comparing and sorting are
//   printed as CLOCK_MONOTONIC seconds ("STALL what start end"): what the GUI thread did then is
//   `perf record -k CLOCK_MONOTONIC ...` then `perf report --tid PID --time start,end`.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <malloc.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <QApplication>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTableView>
#include <QTest>
#include <QTimer>
#include <QTreeView>

#include "analysis/dump_reader.h"
#include "analysis/dump_summary.h"
#include "compare_ops_model.h"
#include "compare_panel.h"
#include "compare_runs.h"
#include "context/app_context.h"
#include "dump_cursor.h"
#include "dump_store.h"
#include "main_window.h"
#include "op_filter_proxy.h"
#include "op_selection.h"
#include "op_tree_panel.h"
#include "statistics_plot.h"
#include "synthetic_dump.h"

namespace {

// A field of /proc/self/status in MiB: VmRSS (resident now) or VmHWM (the peak so far).
long statusMiB(const char* field) {
    FILE* f = std::fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long kb = -1;
    const size_t length = std::strlen(field);
    while (std::fgets(line, sizeof line, f))
        if (std::strncmp(line, field, length) == 0) kb = std::strtol(line + length, nullptr, 10);
    std::fclose(f);
    return kb / 1024;
}
long residentMiB() {
    return statusMiB("VmRSS:");
}
long peakMiB() {
    return statusMiB("VmHWM:");
}
// Bytes malloc has handed out and not had back, in MiB (what is alive, whatever is resident).
double heapMiB() {
    const struct mallinfo2 m = mallinfo2();
    return static_cast<double>(m.uordblks + m.hblkhd) / (1 << 20);  // arenas + mmapped blocks
}

// CPU time this thread has used, in milliseconds.
double threadCpuMs() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

double monotonicMs() {
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

// Measures the longest gap between ticks of a 5 ms timer: how long the GUI thread was busy, and
// how much of that gap it ran (on a loaded machine a gap may be the scheduler's, not our work).
class StallMeter : public QObject {
public:
    StallMeter() {
        connect(&timer_, &QTimer::timeout, this, [this] {
            const qint64 gap = clock_.restart();
            const double cpu = threadCpuMs();
            if (gap > longest_) {
                longest_ = gap;
                longestCpu_ = cpu - lastCpu_;
                longestEnd_ = monotonicMs();
            }
            lastCpu_ = cpu;
            if (gap > 100) ++over100_;
        });
        timer_.start(5);
        clock_.start();
        lastCpu_ = threadCpuMs();
    }
    void reset() {
        longest_ = 0;
        longestCpu_ = 0;
        over100_ = 0;
        clock_.restart();
        lastCpu_ = threadCpuMs();
    }
    qint64 longest() const { return longest_; }
    double longestCpu() const { return longestCpu_; }  // GUI thread CPU during the longest gap
    double longestEnd() const { return longestEnd_; }  // CLOCK_MONOTONIC ms at its end
    int over100() const { return over100_; }

private:
    QTimer timer_;
    QElapsedTimer clock_;
    qint64 longest_ = 0;
    double longestCpu_ = 0, lastCpu_ = 0, longestEnd_ = 0;
    int over100_ = 0;
};

double ms(const QElapsedTimer& t) {
    return static_cast<double>(t.nsecsElapsed()) / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
    std::string dump;
    probe::synthetic::SyntheticDumpOptions options;
    options.ops = 100000;
    options.rows = 1000000;
    options.layers = 100;
    options.nanLayer = 60;
    options.nanRound = 3;
    bool keep = false, sortInline = false;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--dump" && i + 1 < argc)
            dump = argv[++i];
        else if (arg == "--ops" && i + 1 < argc)
            options.ops = std::strtoull(argv[++i], nullptr, 10);
        else if (arg == "--rows" && i + 1 < argc)
            options.rows = std::strtoull(argv[++i], nullptr, 10);
        else if (arg == "--sort-inline")
            sortInline = true;
        else if (arg == "--keep")
            keep = true;
        else {
            std::fprintf(stderr,
                         "usage: probe_bench_gui_load [--dump DIR] [--ops N] [--rows N] [--keep] "
                         "[--sort-inline]\n");
            return 64;
        }
    }
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);

    std::string generated;
    if (dump.empty()) {
        char pattern[] = "/tmp/probe-bench-dump-XXXXXX";
        if (!::mkdtemp(pattern)) return 73;
        generated = dump = pattern;
        options.output = dump;
        QElapsedTimer t;
        t.start();
        const auto result = probe::synthetic::writeSyntheticDump(options);
        std::printf("synthetic dump: %llu ops, %llu rows, %llu rounds, %s, written in %.0f ms\n",
                    static_cast<unsigned long long>(result.ops),
                    static_cast<unsigned long long>(result.rows),
                    static_cast<unsigned long long>(result.rounds),
                    probe::analysis::humanBytes(result.bytes).c_str(), ms(t));
    }

    {  // 1. the readers alone
        const double heapBefore = heapMiB();
        QElapsedTimer t;
        t.start();
        std::string error;
        auto reader = probe::analysis::openDumpReader(dump, &error);
        if (!reader) {
            std::fprintf(stderr, "%s\n", error.c_str());
            return 66;
        }
        probe::analysis::DumpIndex index(reader->layout(), reader->root());
        int polls = 0;
        for (bool more = true; more; ++polls) {
            auto delta = reader->poll(probe::analysis::kDefaultPollBudget);
            more = delta.more;
            index.apply(std::move(delta));
        }
        std::printf(
            "readers alone: %zu ops, %zu rows read and indexed in %.0f ms (%d polls), resident %ld "
            "MiB (peak %ld)\n",
            index.opCount(), index.rowCount(), ms(t), polls, residentMiB(), peakMiB());
        // What the GUI thread paid for each copy of the index it made before snapshots (two to
        // start a comparison, one for the overflow search at the end of a load).
        QElapsedTimer c;
        c.start();
        const probe::analysis::DumpIndex copy = index;
        std::printf("a copy of that index: %.0f ms (%zu rows)\n", ms(c), copy.rowCount());
        const double withCopy = heapMiB();
        std::printf("heap in use: index, its copy and the reader %.0f MiB", withCopy);
        reader.reset();
        const double withoutReader = heapMiB();
        std::printf("; without the reader %.0f MiB (the reader %.0f MiB, an index %.0f MiB)\n",
                    withoutReader, withCopy - withoutReader, (withoutReader - heapBefore) / 2);
    }
    // What this section freed stays resident in malloc's arena otherwise, and would count in
    // the application's peak below.
    malloc_trim(0);

    // 2. the application
    probe::context::AppContext context;
    probe::widgets::MainWindow window(&context);
    window.resize(1500, 900);
    window.show();
    QTest::qWait(100);
    StallMeter stalls;
    QSignalSpy loaded(&context, &probe::context::AppContext::sessionLoaded);
    QElapsedTimer t;
    t.start();
    stalls.reset();
    context.openDump(QString::fromStdString(dump));
    if (!QTest::qWaitFor([&] { return loaded.count() > 0; }, 600000)) {
        std::fprintf(stderr, "the dump did not load in 10 minutes\n");
        return 1;
    }
    const double loadMs = ms(t);
    const qint64 loadStall = stalls.longest();
    const double loadStallCpu = stalls.longestCpu();
    const long loadPeak = peakMiB();  // the peak so far: section 1's was trimmed
    QTest::qWait(300);                // pending tree updates
    const auto& idx = context.store()->index();
    std::printf(
        "probe-studio: opened %zu ops, %zu rows in %.0f ms; longest GUI stall while loading %lld "
        "ms, the GUI thread ran %.0f ms of it (%d over 100 ms); "
        "resident %ld MiB (peak %ld), heap in use %.0f MiB\n",
        idx.opCount(), idx.rowCount(), loadMs, static_cast<long long>(loadStall), loadStallCpu,
        stalls.over100(), residentMiB(), peakMiB(), heapMiB());

    auto step = [&](const char* what, const std::function<void()>& action) {
        QElapsedTimer s;
        s.start();
        action();
        QCoreApplication::processEvents();
        const double took = ms(s);
        std::printf("  %-58s %7.1f ms\n", what, took);
        return took;
    };
    QTreeView* tree = window.treePanel()->view();
    step("expand every layer-level op", [&] { tree->expandToDepth(0); });
    // The longest change of the tree's filters: the search typed and cleared, the show filter.
    double filterMs = 0;
    const auto filterStep = [&](const char* what, const std::function<void()>& action) {
        filterMs = std::max(filterMs, step(what, action));
    };
    filterStep("search \"mlp\" (filter the whole tree)",
               [&] { window.treePanel()->setSearchText(QStringLiteral("mlp")); });
    filterStep("clear the search", [&] { window.treePanel()->setSearchText(QString()); });
    // Deep ops in every layer match (shown expanded): clearing it brings back most of the rows,
    // under thousands of parents (it took 17 s).
    filterStep("search \"mul\" (deep ops of every layer)",
               [&] { window.treePanel()->setSearchText(QStringLiteral("mul")); });
    filterStep("clear that search", [&] { window.treePanel()->setSearchText(QString()); });
    filterStep("show only NaN ops",
               [&] { window.treePanel()->setShow(probe::data::OpFilterProxy::Show::NanOnly); });
    filterStep("show all ops",
               [&] { window.treePanel()->setShow(probe::data::OpFilterProxy::Show::All); });
    const double switchOp = step("select a deep op (reveal, tensors table, plot)",
                                 [&] { window.selectOp(QStringLiteral("77_20_3")); });
    const double switchRound = step("switch to another round", [&] { window.setRound(2); });
    step("plot every op of a round (one statistic)", [&] {
        window.statisticsPlot()->setProfileAllDepths(true);
        window.statisticsPlot()->setMode(probe::widgets::StatisticsPlot::Mode::RoundProfile);
    });
    step("scroll the tree to the end", [&] { tree->scrollToBottom(); });
    step("tick an op (every check mark and \"dumped\" re-evaluated)",
         [&] { context.selection()->setTicked("42", true); });
    step("include children (save_child)", [&] { context.selection()->setIncludesChildren(true); });
    // With no op ticked and children included, the config dumps every op: all 100,000 shown,
    // each branch opened.
    step("untick it", [&] { context.selection()->setTicked("42", false); });
    filterStep("show the ops the config dumps (every op)",
               [&] { window.treePanel()->setShow(probe::data::OpFilterProxy::Show::Dumped); });
    filterStep("show all ops again",
               [&] { window.treePanel()->setShow(probe::data::OpFilterProxy::Show::All); });

    // 3. Comparing: the same dump opened as the reference (a second million rows read while
    // the window is shown), compared off the GUI thread; then the comparison started again
    // (what the GUI thread does to start one: snapshots of both indexes).
    auto* comparison = context.comparison();
    QSignalSpy compared(comparison, &probe::data::RunComparison::finished);
    // The table of compared ops (one row per compared op execution): a big result's rows are
    // added a slice at a time after it arrives; the stalls count until every row is in.
    QTableView* comparedOps = window.comparePanel()->table();
    auto* comparedModel = qobject_cast<probe::data::CompareOpsModel*>(comparedOps->model());
    if (!comparedModel) {
        std::fprintf(stderr, "the compared ops table has no CompareOpsModel\n");
        return 1;
    }
    auto tableFilled = [&] {
        return QTest::qWaitFor([&] { return !comparedModel->filling(); }, 600000);
    };
    QElapsedTimer c;
    c.start();
    stalls.reset();
    context.openReference(QString::fromStdString(dump));
    if (!QTest::qWaitFor([&] { return compared.count() > 0; }, 600000) || !tableFilled()) {
        std::fprintf(stderr, "the comparison did not finish in 10 minutes\n");
        return 1;
    }
    const double compareMs = ms(c);
    const qint64 compareStall = stalls.longest();
    const double compareStallCpu = stalls.longestCpu();
    if (std::getenv("STALL_TRACE"))
        std::printf("STALL compare %.3f %.3f\n", (stalls.longestEnd() - compareStall) / 1e3,
                    stalls.longestEnd() / 1e3);
    std::printf(
        "comparison against the same dump: ready in %.0f ms (%s); longest GUI stall %lld "
        "ms, the GUI thread ran %.0f ms of it; resident %ld MiB (peak %ld), heap in use %.0f MiB\n",
        compareMs, comparison->summary().toStdString().c_str(),
        static_cast<long long>(compareStall), compareStallCpu, residentMiB(), peakMiB(), heapMiB());
    // The call alone (snapshots of both indexes), then with the events it causes (redraws).
    QElapsedTimer call;
    call.start();
    comparison->start();
    const double startCallMs = ms(call);
    QCoreApplication::processEvents();
    const double restartMs = ms(call);
    std::printf("  %-58s %7.1f ms (the call alone %.2f ms)\n", "start the comparison again",
                restartMs, startCallMs);
    stalls.reset();
    if (!QTest::qWaitFor([&] { return compared.count() > 1; }, 600000) || !tableFilled()) return 1;
    const qint64 restartStall = stalls.longest();
    std::printf(
        "  longest GUI stall while comparing again: %lld ms, the GUI thread ran %.0f ms of "
        "it; resident %ld MiB (peak %ld)\n",
        static_cast<long long>(restartStall), stalls.longestCpu(), residentMiB(), peakMiB());
    // The table of compared ops sorted by a header click: a big table sorts off the GUI thread;
    // timed until the rows take the order (sortApplied), with the longest GUI stall meanwhile.
    if (sortInline) comparedModel->setInlineSortRows(SIZE_MAX);
    qint64 sortStall = 0;
    double sortMs = 0, sortStallCpu = 0;
    auto sortBy = [&](const char* what, int column, Qt::SortOrder order) {
        QSignalSpy applied(comparedModel, &probe::data::CompareOpsModel::sortApplied);
        stalls.reset();
        QElapsedTimer s;
        s.start();
        comparedOps->sortByColumn(column, order);
        if (applied.count() == 0 && !applied.wait(600000)) return false;
        QCoreApplication::processEvents();
        const double took = ms(s);
        if (stalls.longest() >= sortStall) {
            sortStall = stalls.longest();
            sortStallCpu = stalls.longestCpu();
        }
        sortMs = std::max(sortMs, took);
        std::printf(
            "  %-58s %7.1f ms (longest GUI stall %lld ms, the GUI thread ran %.0f ms of it)\n",
            what, took, static_cast<long long>(stalls.longest()), stalls.longestCpu());
        if (std::getenv("STALL_TRACE"))
            std::printf("STALL sort %.3f %.3f\n", (stalls.longestEnd() - stalls.longest()) / 1e3,
                        stalls.longestEnd() / 1e3);
        return true;
    };
    if (!sortBy("sort the compared ops by max relative error",
                probe::data::CompareOpsModel::MaxRelativeErrorColumn, Qt::DescendingOrder) ||
        !sortBy("sort the compared ops by op name", probe::data::CompareOpsModel::OpColumn,
                Qt::AscendingOrder) ||
        !sortBy("back to execution order", -1, Qt::AscendingOrder))
        return 1;

    // For bench/run_all.py.
    std::printf(
        "{\"load_ms\": %.1f, \"longest_stall_ms\": %lld, \"switch_op_ms\": %.1f, "
        "\"switch_round_ms\": %.1f, \"longest_stall_cpu_ms\": %.1f, \"compare_ms\": %.1f, "
        "\"compare_stall_ms\": %lld, \"compare_stall_cpu_ms\": %.1f, "
        "\"compare_start_ms\": %.1f, \"compare_start_call_ms\": %.2f, "
        "\"compare_again_stall_ms\": %lld, \"sort_ms\": %.1f, \"sort_stall_ms\": %lld, "
        "\"sort_stall_cpu_ms\": %.1f, \"load_peak_mib\": %ld, \"peak_mib\": %ld, "
        "\"filter_ms\": %.1f}\n",
        loadMs, static_cast<long long>(loadStall), switchOp, switchRound, loadStallCpu, compareMs,
        static_cast<long long>(compareStall), compareStallCpu, restartMs, startCallMs,
        static_cast<long long>(restartStall), sortMs, static_cast<long long>(sortStall),
        sortStallCpu, loadPeak, peakMiB(), filterMs);
    if (!generated.empty() && !keep)
        std::system(("rm -rf '" + generated + "'").c_str());
    else if (!generated.empty())
        std::printf("kept %s\n", generated.c_str());
    return 0;
}
