// Two runs compared in the application: the dump shown (the candidate, DumpStore) against a
// reference dump (a second DumpStore), with analysis::compareDumps (the engine `probe compare`
// uses) run off the GUI thread on snapshots of both indexes (DumpStore::snapshot). The result's
// op and row numbers are those of the stores' indexes (indexes only grow; a reset drops the
// result first), so views look ops up by the store's numbers. While either dump grows (a live
// run) the comparison is run again for the rounds that arrived; replacing either dump cancels a
// running comparison and drops the result in the store's aboutToReset phase, before anything
// refers to new data.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <vector>

#include <QColor>
#include <QObject>
#include <QTimer>

#include "analysis/compare.h"

namespace probe::data {

class DumpStore;
struct ErrorProfile;

class RunComparison : public QObject {
    Q_OBJECT
public:
    // What an op of the shown dump is, over the rounds compared: the worst of its executions
    // (born here, then inherited, then matches), or only in one run when none paired up.
    // BornBelow is no execution's verdict: the views show it for an op with an op born here
    // inside it, that matches, was not compared or is born here only as the op that divergence
    // surfaces in (shownVerdictOf, drawnVerdictFor).
    enum class Verdict { NotCompared, Matches, Inherited, BornHere, OnlyInOneRun, BornBelow };
    static QString verdictText(Verdict verdict);
    // The colour the op tree and the plots give a verdict (invalid for NotCompared).
    static QColor verdictColor(Verdict verdict);
    // A compared op execution's verdict as the views show it.
    static Verdict verdictFor(analysis::OpVerdict verdict);
    // An execution's: NotCompared when nothing of it could be judged (OpComparison::judged).
    static Verdict verdictFor(const analysis::OpComparison& op);
    // An execution's verdict as the compared ops and the error plot show it: born below for one
    // born here whose divergence is born in an op inside it (said "born here (inside)", in born
    // here's red, and without a point, it read as a second birth).
    static Verdict drawnVerdictFor(const analysis::OpComparison& op);

    // How far a compared tensor is from its reference, as the tables and plots show it.
    enum class Measure { MaxRelativeError, MaxAbsoluteError, Cosine, MaxUlpError };
    static constexpr int kMeasureCount = 4;
    static QString measureName(Measure measure);
    // The measure of a compared tensor: from both runs' data where both kept it, else (relative
    // and absolute error) from its statistics as msprobe's statistics compare does (the largest
    // of Max/Min/Mean/Norm); nullopt when it cannot be had (cosine, ULPs without data).
    static std::optional<double> tensorMeasure(const analysis::CompareResult& result,
                                               uint32_t tensor, Measure measure);
    // The worst over a compared op's tensors (the lowest cosine, the largest error).
    static std::optional<double> opMeasure(const analysis::CompareResult& result, uint32_t op,
                                           Measure measure);

    RunComparison(DumpStore* reference, DumpStore* candidate, QObject* parent = nullptr);
    ~RunComparison() override;

    DumpStore* reference() const { return reference_; }
    DumpStore* candidate() const { return candidate_; }

    // Compares whenever both dumps are open and read (and again as they grow), until disabled.
    void setEnabled(bool on);
    bool enabled() const { return enabled_; }
    // Options for the next run (progress and cancel are the comparison's own).
    void setOptions(const analysis::CompareOptions& options);
    const analysis::CompareOptions& options() const { return options_; }
    // How long growth is gathered before the comparison runs again (milliseconds).
    void setRerunDelay(int ms) { rerunDelay_.setInterval(ms); }

    // Starts a comparison of what both dumps hold now (a running one is cancelled first).
    // False when one of them is not open and read.
    bool start();
    // Stops a running comparison; its result never arrives.
    void cancel();
    bool running() const { return running_; }
    // The last finished comparison; nullptr when there is none (or it was dropped).
    const analysis::CompareResult* result() const;
    // The same, kept alive for work off the GUI thread (a table's sort) while it lasts.
    std::shared_ptr<const analysis::CompareResult> sharedResult() const;
    // The compared ops that diverge (born here, inherited), in execution order: indexes into
    // result()->ops, listed by the worker with the result; nullptr when there is none.
    std::shared_ptr<const std::vector<uint32_t>> divergingOps() const;
    // Comparisons finished since construction (each replaces the result).
    int finishedCount() const { return finishedCount_; }

    // --- looked up by the shown (candidate) dump's numbers ------------------------------------
    Verdict verdictOf(uint32_t candidateOp) const;  // over every round compared
    // In one round (-1: over every round); NotCompared when the op has no compared execution
    // there (OnlyInOneRun when none of its executions paired).
    Verdict verdictOf(uint32_t candidateOp, int32_t round) const;
    // Whether an op born here is inside the op, in `round` (-1: in any round).
    bool bornBelow(uint32_t candidateOp, int32_t round) const;
    // verdictOf, or BornBelow for an op with an op born here inside it that matches, was not
    // compared or is born here only as the op that divergence surfaces in: what the tree shows.
    Verdict shownVerdictOf(uint32_t candidateOp, int32_t round) const;
    // The compared execution of the op in `round` (-1: its first diverging one, else its first):
    // an index into result()->ops, or kNone.
    uint32_t comparedOp(uint32_t candidateOp, int32_t round = -1) const;
    // Whether the op was compared in `round`: at once for its latest round or one after it.
    bool comparedIn(uint32_t candidateOp, int32_t round) const;
    int32_t lastComparedRound(uint32_t candidateOp) const;  // -1: none
    // The candidate's rounds in which the op was compared, in execution order.
    std::vector<int32_t> comparedRoundsOf(uint32_t candidateOp) const;
    // The compared tensor of a candidate row: an index into result()->tensors, or kNone.
    uint32_t comparedTensor(uint32_t candidateRow) const;
    // Where the first divergence is: the cause tensor's candidate row of the first born-here op
    // (else of the first inherited one); kNone when the runs agree.
    uint32_t firstDivergenceRow() const;
    // Ops of the reference that the shown dump lacks (all their executions unpaired).
    uint64_t referenceOnlyOps() const;
    // `measure` of every compared op in execution order (compare_series.h errorProfile with
    // every round; point i is result()->ops[i]), made with the result; empty when there is none.
    const ErrorProfile& errorProfile(Measure measure) const;
    // "born here: round 0 Decoder_layer_1/Attention/MatMulKernel, input 1 …" or what was compared.
    QString summary() const;
    // What summary() says without its counts: the same for each run again of a live comparison
    // that found nothing new (where the first divergence is, or that there is none, and whether
    // something could not be read), so that the window says it once, not at every run.
    QString verdictGist() const;

signals:
    void started();
    void progress(qint64 done, qint64 total);
    // The result is about to be replaced or dropped: drop what refers to it.
    void aboutToChange();
    // result() is the new one (or nullptr).
    void changed();
    // A run ended: with a result, or cancelled/failed (the reason).
    void finished(bool ok, const QString& message);

private:
    struct Run;
    void drop();
    void scheduleRerun();
    void onStoreGrew(const analysis::IndexChange& change);
    void onRunDone(const std::shared_ptr<Run>& run);
    // Lets go of the shown run; the last owner frees it on a worker thread.
    void releaseShown();

    DumpStore* reference_;
    DumpStore* candidate_;
    analysis::CompareOptions options_;
    bool enabled_ = false;
    bool running_ = false;
    bool rerunPending_ = false;  // the dumps grew while a comparison ran
    // How each run stood (its state and end, describeState) when the last comparison began: a
    // run that ends without new rows (killed) is compared again, its notes said "still being
    // written" after it had died.
    std::string statesCompared_;
    int finishedCount_ = 0;
    std::shared_ptr<Run> current_;  // the run in progress (its cancel flag is ours to set)
    std::shared_ptr<Run> shown_;    // the run whose result is shown
    QTimer rerunDelay_;
};

}  // namespace probe::data
