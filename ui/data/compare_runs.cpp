// SPDX-License-Identifier: GPL-3.0-or-later
#include "compare_runs.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include <QColor>
#include <QFutureWatcher>
#include <QLocale>
#include <QPromise>
#include <QThreadPool>

#include "analysis/dump_summary.h"
#include "background_pool.h"
#include "probe/format/file_util.h"
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <QtConcurrent/QtConcurrentRun>

#include "compare_series.h"
#include "dump_store.h"

namespace probe::data {

using analysis::kNone;

namespace {
// Progress is reported per mille (QFuture's progress is an int).
constexpr int kProgressScale = 1000;

// Gives the memory freed by a comparison (its scratch, a replaced result: hundreds of MiB on a
// big dump, left in the worker threads' malloc arenas) back to the system, so that the next
// comparison does not come on top of it. Off the GUI thread: it walks every arena.
void returnFreedMemory() {
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}
}  // namespace

// One comparison: snapshots of both indexes as they were when it started (the worker reads them
// while the stores grow), the result, what is looked up in it by the shown dump's numbers and
// the error profiles (both made by the worker), and the flag that stops it.
struct RunComparison::Run {
    std::shared_ptr<const analysis::DumpIndex> reference, candidate;
    analysis::CompareResult result;
    // By candidate op: its verdict; its first compared execution (linked by nextOfOp).
    std::vector<Verdict> verdicts;
    std::vector<uint32_t> firstOfOp, nextOfOp;
    std::vector<int32_t> lastComparedRound;  // by candidate op: its latest compared round, or -1
    std::vector<uint32_t> tensorOfRow;       // candidate row -> compared tensor
    std::vector<uint32_t> divergingOps;      // compared ops that diverge, in execution order
    // The candidate's executions that paired with none: (op << 32) | round.
    std::unordered_set<uint64_t> unpairedExecutions;
    // Executions of ops with an op born here inside them (their ancestors), and by op, in any
    // round: a decoder layer whose weight changed read "matches" in the rounds where its output
    // stayed within the tolerance, above its red linear, closed.
    std::unordered_set<uint64_t> bornBelow;
    std::vector<char> bornBelowInSomeRound;
    // By op: born here in some round where its divergence is not born inside it.
    std::vector<char> bornHereItselfInSomeRound;
    static uint64_t execution(uint32_t op, int32_t round) {
        return (static_cast<uint64_t>(op) << 32) | static_cast<uint32_t>(round);
    }
    uint64_t referenceOnlyOps = 0;
    std::array<ErrorProfile, kMeasureCount> profiles;
    std::atomic<bool> cancel{false};

    void buildLookups();
};

QString RunComparison::verdictText(Verdict verdict) {
    switch (verdict) {
        case Verdict::Matches:
            return tr("matches");
        case Verdict::Inherited:
            return tr("inherited");
        case Verdict::BornHere:
            return tr("born here");
        case Verdict::OnlyInOneRun:
            return tr("only in one run");
        case Verdict::BornBelow:
            return tr("born below");
        case Verdict::NotCompared:
            break;
    }
    return {};
}

RunComparison::Verdict RunComparison::verdictFor(analysis::OpVerdict verdict) {
    return verdict == analysis::OpVerdict::BornHere    ? Verdict::BornHere
           : verdict == analysis::OpVerdict::Inherited ? Verdict::Inherited
                                                       : Verdict::Matches;
}

RunComparison::Verdict RunComparison::verdictFor(const analysis::OpComparison& op) {
    return op.judged ? verdictFor(op.verdict) : Verdict::NotCompared;
}

RunComparison::Verdict RunComparison::drawnVerdictFor(const analysis::OpComparison& op) {
    const Verdict verdict = verdictFor(op);
    return verdict == Verdict::BornHere && op.bornInChild ? Verdict::BornBelow : verdict;
}

QColor RunComparison::verdictColor(Verdict verdict) {
    switch (verdict) {
        case Verdict::Matches:
            return QColor(0xd8, 0xf0, 0xd8);  // pale green
        case Verdict::Inherited:
            return QColor(0xff, 0xe0, 0xb0);  // amber
        case Verdict::BornHere:
            return QColor(0xf4, 0x9a, 0x9a);  // red
        case Verdict::OnlyInOneRun:
            return QColor(0xd0, 0xd8, 0xf0);  // pale blue
        case Verdict::BornBelow:
            return QColor(0xfa, 0xd0, 0xd0);  // pale red
        case Verdict::NotCompared:
            break;
    }
    return {};
}

QString RunComparison::measureName(Measure measure) {
    switch (measure) {
        case Measure::MaxRelativeError:
            return tr("Max rel. error (%)");
        case Measure::MaxAbsoluteError:
            return tr("Max absolute error");
        case Measure::Cosine:
            return tr("Cosine");
        case Measure::MaxUlpError:
            return tr("Max error (ULPs)");
    }
    return {};
}

std::optional<double> RunComparison::tensorMeasure(const analysis::CompareResult& result,
                                                   uint32_t tensor, Measure measure) {
    const auto& t = result.tensors[tensor];
    if (t.hasData) {
        const auto& m = result.data(tensor);
        switch (measure) {
            case Measure::MaxRelativeError:  // in percent, as the reports say it
                return m.maxRelativeError * 100;
            case Measure::MaxAbsoluteError:
                return m.maxAbsError;
            case Measure::Cosine:
                return m.cosine;
            case Measure::MaxUlpError:
                return m.maxUlpError;
        }
    }
    if (measure == Measure::Cosine || measure == Measure::MaxUlpError) return std::nullopt;
    const analysis::StatisticDiffs diffs = result.statisticDiffs(tensor);
    std::optional<double> worst;
    for (int i = 0; i < analysis::kStatCount; ++i) {
        const auto& value =
            measure == Measure::MaxRelativeError ? diffs.relativePercent[i] : diffs.diff[i];
        if (!value) continue;
        const double v = std::fabs(*value);
        if (!worst || v > *worst || std::isnan(v)) worst = v;
    }
    return worst;
}

std::optional<double> RunComparison::opMeasure(const analysis::CompareResult& result, uint32_t op,
                                               Measure measure) {
    const auto& o = result.ops[op];
    std::optional<double> worst;
    for (uint32_t t = o.firstTensor; t < o.firstTensor + o.tensorCount; ++t) {
        const auto v = tensorMeasure(result, t, measure);
        if (!v) continue;
        const bool worse =
            measure == Measure::Cosine ? *v < worst.value_or(2) : *v > worst.value_or(-1);
        if (!worst || worse || std::isnan(*v)) worst = v;
    }
    return worst;
}

namespace {

// How two runs stand (their states and ends, as the comparison's notes say them).
std::string statesOf(const analysis::DumpIndex& reference, const analysis::DumpIndex& candidate) {
    return analysis::describeState(analysis::summarizeStatus(reference)) + '\n' +
           analysis::describeState(analysis::summarizeStatus(candidate));
}

}  // namespace

RunComparison::RunComparison(DumpStore* reference, DumpStore* candidate, QObject* parent)
    : QObject(parent), reference_(reference), candidate_(candidate) {
    rerunDelay_.setSingleShot(true);
    rerunDelay_.setInterval(500);
    connect(&rerunDelay_, &QTimer::timeout, this, [this] {
        if (!enabled_) return;
        // A comparison of a growing dump runs to its end; the next one covers what came since.
        if (running_)
            rerunPending_ = true;
        else
            start();
    });
    for (DumpStore* store : {reference_, candidate_}) {
        // Phase one of a reset: the old data is still there; nothing may refer to it after.
        connect(store, &DumpStore::aboutToReset, this, &RunComparison::drop);
        connect(store, &DumpStore::initialLoadFinished, this, [this] {
            if (enabled_) start();
        });
        connect(store, &DumpStore::changed, this, &RunComparison::onStoreGrew);
    }
}

RunComparison::~RunComparison() {
    // The worker holds its run (and the flag) itself: it notices and ends on its own.
    if (current_) current_->cancel = true;
}

void RunComparison::setEnabled(bool on) {
    if (on == enabled_) return;
    enabled_ = on;
    if (on) {
        start();
    } else {
        rerunDelay_.stop();
        cancel();
        drop();
    }
}

void RunComparison::setOptions(const analysis::CompareOptions& options) {
    options_ = options;
    options_.progress = {};
    options_.cancel = nullptr;
}

bool RunComparison::start() {
    rerunDelay_.stop();
    rerunPending_ = false;
    if (!reference_->isOpen() || !candidate_->isOpen() || !reference_->initialLoadDone() ||
        !candidate_->initialLoadDone())
        return false;
    if (current_) current_->cancel = true;  // superseded: its result will be ignored
    auto run = std::make_shared<Run>();
    run->reference = reference_->snapshot();
    run->candidate = candidate_->snapshot();
    statesCompared_ = statesOf(*run->reference, *run->candidate);
    current_ = run;
    running_ = true;
    auto* watcher = new QFutureWatcher<void>(this);
    connect(watcher, &QFutureWatcher<void>::progressValueChanged, this, [this, run](int value) {
        if (run == current_) emit progress(value, kProgressScale);
    });
    connect(watcher, &QFutureWatcher<void>::finished, this, [this, run, watcher] {
        watcher->deleteLater();
        onRunDone(run);
    });
    analysis::CompareOptions options = options_;
    watcher->setFuture(
        QtConcurrent::run(backgroundPool(), [run, options](QPromise<void>& promise) mutable {
            promise.setProgressRange(0, kProgressScale);
            int reported = -1;
            options.cancel = &run->cancel;
            options.progress = [&](uint64_t done, uint64_t total) {
                const int value = total ? static_cast<int>(done * kProgressScale / total) : 0;
                if (value != reported) promise.setProgressValue(reported = value);
            };
            // The result points into the run's snapshots, which live as long as it does.
            run->result = analysis::compareDumps(*run->reference, *run->candidate, options);
            if (run->result.cancelled || run->cancel) return;
            run->buildLookups();
            run->profiles = errorProfiles(run->result);
            returnFreedMemory();
        }));
    emit started();
    return true;
}

void RunComparison::cancel() {
    if (!current_) return;
    current_->cancel = true;
    current_.reset();
    running_ = false;
    emit finished(false, tr("Comparison cancelled"));
}

const analysis::CompareResult* RunComparison::result() const {
    return shown_ ? &shown_->result : nullptr;
}

std::shared_ptr<const analysis::CompareResult> RunComparison::sharedResult() const {
    if (!shown_) return nullptr;
    return std::shared_ptr<const analysis::CompareResult>(shown_, &shown_->result);
}

std::shared_ptr<const std::vector<uint32_t>> RunComparison::divergingOps() const {
    if (!shown_) return nullptr;
    return std::shared_ptr<const std::vector<uint32_t>>(shown_, &shown_->divergingOps);
}

void RunComparison::releaseShown() {
    if (!shown_) return;
    // A million compared tensors take a while to free: not on the GUI thread.
    backgroundPool()->start([run = std::move(shown_)]() mutable {
        // The snapshots may go with it: they free themselves on the pool too (newSharedIndex).
        run.reset();
        returnFreedMemory();
    });
    shown_.reset();
}

void RunComparison::drop() {
    rerunDelay_.stop();
    rerunPending_ = false;
    cancel();
    if (!shown_) return;
    emit aboutToChange();
    releaseShown();
    emit changed();
}

void RunComparison::onStoreGrew(const analysis::IndexChange& change) {
    // A live run (or a dump still being written): compare again once rows stop arriving for a
    // moment, and at least every rerun delay while they keep arriving; and when a run's state
    // changes (it ended, or was killed).
    if (!enabled_ || !reference_->initialLoadDone() || !candidate_->initialLoadDone()) return;
    if (change.newRows == 0 &&
        !(change.statusChanged && !statesCompared_.empty() &&
          statesOf(reference_->index(), candidate_->index()) != statesCompared_))
        return;
    scheduleRerun();
}

void RunComparison::scheduleRerun() {
    if (!rerunDelay_.isActive()) rerunDelay_.start();
}

void RunComparison::onRunDone(const std::shared_ptr<Run>& run) {
    if (run != current_) return;  // cancelled or replaced: its result is stale
    current_.reset();
    running_ = false;
    if (rerunPending_) {
        rerunPending_ = false;
        scheduleRerun();
    }
    if (run->result.cancelled) {
        emit finished(false, tr("Comparison cancelled"));
        return;
    }
    emit aboutToChange();
    releaseShown();
    shown_ = run;
    ++finishedCount_;
    emit changed();
    emit finished(true, summary());
}

void RunComparison::Run::buildLookups() {
    const analysis::CompareResult& r = result;
    const size_t ops = candidate->opCount();
    verdicts.assign(ops, Verdict::NotCompared);
    firstOfOp.assign(ops, kNone);
    nextOfOp.assign(r.ops.size(), kNone);
    tensorOfRow.assign(candidate->rowCount(), kNone);
    std::vector<uint32_t> lastOfOp(ops, kNone);
    lastComparedRound.assign(ops, -1);
    for (uint32_t i = 0; i < r.ops.size(); ++i) {
        const auto& op = r.ops[i];
        if (op.verdict != analysis::OpVerdict::Matches) divergingOps.push_back(i);
        if (op.candidateOp >= ops) continue;
        const Verdict v = verdictFor(op);
        Verdict& shown = verdicts[op.candidateOp];
        if (static_cast<int>(v) > static_cast<int>(shown)) shown = v;
        if (lastOfOp[op.candidateOp] == kNone)
            firstOfOp[op.candidateOp] = i;
        else
            nextOfOp[lastOfOp[op.candidateOp]] = i;
        lastOfOp[op.candidateOp] = i;
        lastComparedRound[op.candidateOp] =
            std::max(lastComparedRound[op.candidateOp], op.candidateRound);
    }
    bornBelowInSomeRound.assign(ops, 0);
    bornHereItselfInSomeRound.assign(ops, 0);
    for (const auto& op : r.ops) {
        if (op.verdict != analysis::OpVerdict::BornHere || op.candidateOp >= ops) continue;
        if (drawnVerdictFor(op) == Verdict::BornHere) bornHereItselfInSomeRound[op.candidateOp] = 1;
        for (uint32_t a = candidate->op(op.candidateOp).parent; a != kNone;
             a = candidate->op(a).parent) {
            if (!bornBelow.insert(execution(a, op.candidateRound)).second) break;
            bornBelowInSomeRound[a] = 1;
        }
    }
    for (uint32_t t = 0; t < r.tensors.size(); ++t)
        if (r.tensors[t].candidateRow < tensorOfRow.size())
            tensorOfRow[r.tensors[t].candidateRow] = t;
    std::vector<char> referenceOnly(reference->opCount(), 0);
    std::vector<char> referencePaired(reference->opCount(), 0);
    for (const auto& op : r.ops)
        if (op.referenceOp < referencePaired.size()) referencePaired[op.referenceOp] = 1;
    referenceOnlyOps = 0;
    for (const auto& u : r.unpaired) {
        if (!u.inReference) {
            unpairedExecutions.insert(execution(u.op, u.round));
            if (u.op < ops && verdicts[u.op] == Verdict::NotCompared)
                verdicts[u.op] = Verdict::OnlyInOneRun;
        } else if (u.op < referenceOnly.size() && !referencePaired[u.op] && !referenceOnly[u.op]) {
            referenceOnly[u.op] = 1;
            ++referenceOnlyOps;
        }
    }
}

RunComparison::Verdict RunComparison::verdictOf(uint32_t candidateOp) const {
    return shown_ && candidateOp < shown_->verdicts.size() ? shown_->verdicts[candidateOp]
                                                           : Verdict::NotCompared;
}

RunComparison::Verdict RunComparison::verdictOf(uint32_t candidateOp, int32_t round) const {
    const Verdict overall = verdictOf(candidateOp);
    if (round < 0 || overall == Verdict::NotCompared) return overall;
    // Past the op's last compared round (a live run ahead of its reference) without a walk.
    const uint32_t i = overall == Verdict::OnlyInOneRun || round > lastComparedRound(candidateOp)
                           ? kNone
                           : comparedOp(candidateOp, round);
    if (i != kNone) return verdictFor(shown_->result.ops[i]);
    // An execution that paired with none (a candidate gone on past a shorter reference showed
    // nothing in its rounds alone); nothing in a round it did not run in, or one not compared
    // (a comparison of one round folder).
    return shown_->unpairedExecutions.count(Run::execution(candidateOp, round))
               ? Verdict::OnlyInOneRun
               : Verdict::NotCompared;
}

bool RunComparison::bornBelow(uint32_t candidateOp, int32_t round) const {
    if (!shown_ || candidateOp >= shown_->bornBelowInSomeRound.size()) return false;
    if (round < 0) return shown_->bornBelowInSomeRound[candidateOp] != 0;
    return shown_->bornBelow.count(Run::execution(candidateOp, round)) != 0;
}

RunComparison::Verdict RunComparison::shownVerdictOf(uint32_t candidateOp, int32_t round) const {
    const Verdict verdict = verdictOf(candidateOp, round);
    if ((verdict == Verdict::Matches || verdict == Verdict::NotCompared) &&
        bornBelow(candidateOp, round))
        return Verdict::BornBelow;
    // Born here only as the op its divergence surfaces in, born inside it: as the compared ops
    // and the error plot show it (the tree said born here, in the birth's red).
    if (verdict == Verdict::BornHere) {
        if (round < 0) {
            if (!shown_->bornHereItselfInSomeRound[candidateOp]) return Verdict::BornBelow;
        } else if (const uint32_t i = comparedOp(candidateOp, round); i != kNone) {
            return drawnVerdictFor(shown_->result.ops[i]);
        }
    }
    return verdict;
}

uint32_t RunComparison::comparedOp(uint32_t candidateOp, int32_t round) const {
    if (!shown_ || candidateOp >= shown_->firstOfOp.size()) return kNone;
    const auto& ops = shown_->result.ops;
    uint32_t first = kNone;
    for (uint32_t i = shown_->firstOfOp[candidateOp]; i != kNone; i = shown_->nextOfOp[i]) {
        if (round >= 0) {
            if (ops[i].candidateRound == round) return i;
            continue;
        }
        if (first == kNone) first = i;
        if (ops[i].verdict != analysis::OpVerdict::Matches) return i;
    }
    return first;
}

int32_t RunComparison::lastComparedRound(uint32_t candidateOp) const {
    return shown_ && candidateOp < shown_->lastComparedRound.size()
               ? shown_->lastComparedRound[candidateOp]
               : -1;
}

bool RunComparison::comparedIn(uint32_t candidateOp, int32_t round) const {
    const int32_t last = lastComparedRound(candidateOp);
    return round == last || (round < last && comparedOp(candidateOp, round) != kNone);
}

std::vector<int32_t> RunComparison::comparedRoundsOf(uint32_t candidateOp) const {
    std::vector<int32_t> rounds;
    if (!shown_ || candidateOp >= shown_->firstOfOp.size()) return rounds;
    for (uint32_t i = shown_->firstOfOp[candidateOp]; i != kNone; i = shown_->nextOfOp[i])
        rounds.push_back(shown_->result.ops[i].candidateRound);
    return rounds;
}

uint32_t RunComparison::comparedTensor(uint32_t candidateRow) const {
    return shown_ && candidateRow < shown_->tensorOfRow.size() ? shown_->tensorOfRow[candidateRow]
                                                               : kNone;
}

uint64_t RunComparison::referenceOnlyOps() const {
    return shown_ ? shown_->referenceOnlyOps : 0;
}

const ErrorProfile& RunComparison::errorProfile(Measure measure) const {
    static const ErrorProfile none;
    return shown_ ? shown_->profiles[static_cast<size_t>(measure)] : none;
}

uint32_t RunComparison::firstDivergenceRow() const {
    const analysis::CompareResult* r = result();
    if (!r) return kNone;
    const auto op = r->firstBornHere ? r->firstBornHere : r->firstInherited;
    if (!op) return kNone;
    const auto& compared = r->ops[*op];
    if (compared.cause != kNone) return r->tensors[compared.cause].candidateRow;
    return compared.tensorCount ? r->tensors[compared.firstTensor].candidateRow : kNone;
}

QString RunComparison::summary() const {
    const analysis::CompareResult* r = result();
    if (!r) return running_ ? tr("Comparing…") : QString();
    const QLocale locale;
    if (r->nothingCompared() && !r->tensors.empty())
        return tr("Nothing to compare: the %1 tensors that pair up have no statistic in both runs "
                  "and no data in both (a dump of task \"tensor\" has no statistics: compare it "
                  "with one that kept tensors too)")
            .arg(locale.toString(static_cast<qulonglong>(r->tensors.size())));
    if (r->nothingCompared()) {
        const std::string empty = r->emptyDumpSaid();
        if (!empty.empty()) return tr("Nothing to compare: %1").arg(QString::fromStdString(empty));
        return tr(
            "Nothing to compare: no tensor of the two dumps pairs up (different models, "
            "layouts or rounds)");
    }
    const auto first = r->firstBornHere ? r->firstBornHere : r->firstInherited;
    QString text;
    if (!first) {
        // Where one run went on without the other (a live run past its reference's last round),
        // the agreement is only where both ran: said first, not after "the runs agree".
        text = (r->unpairedOps > 0
                    ? tr("The runs agree where both ran: %1 tensors compared (%2 with data), none "
                         "diverges")
                    : tr("The runs agree: %1 tensors compared (%2 with data), none diverges"))
                   .arg(locale.toString(static_cast<qulonglong>(r->tensors.size())),
                        locale.toString(static_cast<qulonglong>(r->tensorsWithData)));
        if (r->tensorsUnmeasured)
            text += tr("; %1 of them with nothing to judge them by (no statistic in both runs, "
                       "no data in both)")
                        .arg(locale.toString(static_cast<qulonglong>(r->tensorsUnmeasured)));
        // A run compared with itself agrees, which says nothing: said, so that it is not taken
        // for two runs that agree.
        if (r->reference && r->candidate && !r->reference->root().empty() &&
            format::resolvedPath(r->reference->root()) ==
                format::resolvedPath(r->candidate->root()))
            text += tr(" (both are the same dump folder: compare with another run)");
    } else {
        const auto& op = r->ops[*first];
        text = tr("First divergence, %1: %2")
                   .arg(r->firstBornHere ? tr("born here") : tr("inherited"),
                        QString::fromStdString(r->describeOp(*first)));
        if (op.cause != kNone)
            text += QStringLiteral(" — ") + QString::fromStdString(r->describeTensor(op.cause)) +
                    QStringLiteral(": ") + QString::fromStdString(r->explain(op.cause));
        // Given a difference below the floor: where it starts upstream (probe compare's note).
        if (const auto given = r->firstBornHere ? r->differenceGiven(*first) : std::nullopt)
            text += QStringLiteral("; ") +
                    tr("its %1 already differs below the floor, from %2 %3 upstream (%4)")
                        .arg(QString::fromStdString(r->describeTensor(given->input)),
                             QString::fromStdString(r->describeOp(r->tensors[given->start].op)),
                             QString::fromStdString(r->describeTensor(given->start)),
                             QString::fromStdString(r->describeStart(*given)));
        // Ops of one run only just before it: the likelier cause (probe compare lists them).
        if (r->firstBornHere) {
            QStringList before;
            for (size_t i : r->unpairedBefore(*first, 3))
                before << QString::fromStdString(r->describeUnpaired(r->unpaired[i]));
            if (!before.isEmpty())
                text += QStringLiteral("; ") + tr("ran in one run only just before it: %1")
                                                   .arg(before.join(QStringLiteral(", ")));
        }
        // How far it goes, as the first lines of probe compare's report count it.
        const auto count = [&](size_t n) { return locale.toString(static_cast<qulonglong>(n)); };
        const auto ops = [&](size_t n) { return n == 1 ? tr("1 op") : tr("%1 ops").arg(count(n)); };
        text +=
            QStringLiteral("; ") + tr("%1 of %2 tensors diverge: born in %3, inherited by %4")
                                       .arg(count(r->divergingTensors), count(r->tensors.size()),
                                            ops(r->bornHereOps), ops(r->inheritedOps));
        // Not births by the rule, but where other data fed in later would show (probe compare
        // lists them).
        // "(2 of them at an input …; 3 at an output …)"
        QStringList notBirths;
        const auto addNotBirths = [&](uint64_t n, const QString& where) {
            if (n > 0)
                notBirths << (notBirths.isEmpty() ? tr("%1 of them %2") : tr("%1 %2"))
                                 .arg(count(n), where);
        };
        addNotBirths(r->fedBackOps,
                     tr("at an input from outside the model, taken as fed back by the program: "
                        "other data given at a later step would look the same"));
        addNotBirths(r->carriedInStateOps,
                     tr("at an output whose inputs match, after an earlier step's divergence went "
                        "through the op, taken as carried in its own state (its parameters, a "
                        "cache): a parameter changed for another reason would look the same"));
        if (!notBirths.isEmpty())
            text +=
                QStringLiteral(" (") + notBirths.join(QStringLiteral("; ")) + QStringLiteral(")");
    }
    // Executions in one run only (a live run ahead of its reference, a different model) are
    // no agreement: said, as probe compare's "not paired" line says it.
    if (r->unpairedOps > 0)
        text += QStringLiteral("; ") +
                (r->unpairedOps == 1
                     ? tr("1 op execution is in one run only")
                     : tr("%1 op executions are in one run only")
                           .arg(locale.toString(static_cast<qulonglong>(r->unpairedOps)))) +
                tr(" (%1 in the reference, %2 in this run)")
                    .arg(locale.toString(static_cast<qulonglong>(r->unpairedInReference)),
                         locale.toString(
                             static_cast<qulonglong>(r->unpairedOps - r->unpairedInReference)));
    // How the runs were paired, where it matters (a rank in one run only).
    for (const std::string& note : r->notes)
        text += QStringLiteral("; ") + QString::fromStdString(note);
    // What could not be read: the verdict covers the rest only.
    if (!r->problems.empty()) {
        // One line (the status bar shows it too); the count spelled out (no translations load).
        const size_t n = r->problems.size();
        text +=
            QStringLiteral(" — ") + tr("of what could be read only; %1, the first: %2")
                                        .arg(n == 1 ? tr("1 problem") : tr("%1 problems").arg(n),
                                             QString::fromStdString(r->problems.front()));
    }
    return text;
}

QString RunComparison::verdictGist() const {
    const analysis::CompareResult* r = result();
    if (!r) return summary();
    if (r->nothingCompared()) return QStringLiteral("nothing");
    const auto first = r->firstBornHere ? r->firstBornHere : r->firstInherited;
    QString gist = first ? QString::fromStdString(r->describeOp(*first)) : QStringLiteral("agree");
    if (!r->problems.empty()) gist += QStringLiteral(" / problems");
    return gist;
}

}  // namespace probe::data
