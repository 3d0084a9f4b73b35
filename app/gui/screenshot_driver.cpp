// SPDX-License-Identifier: GPL-3.0-or-later
#include "screenshot_driver.h"

#include <algorithm>
#include <cstdio>
#include <memory>

#include <QApplication>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QPixmap>
#include <QTimer>

#include "compare_panel.h"
#include "compare_runs.h"
#include "compare_tensor_pair.h"
#include "compare_tensor_view.h"
#include "context/app_context.h"
#include "dump_cursor.h"
#include "dump_store.h"
#include "op_filter_proxy.h"
#include "op_tree_model.h"
#include "op_tree_panel.h"
#include "session/live_session.h"
#include "statistics_plot.h"
#include "tensor_document.h"
#include "tensor_preview.h"

namespace probe::studio {
namespace {

using widgets::MainWindow;

// How long --screenshot waits for a dump to load before giving up.
constexpr int kScreenshotTimeoutMs = 180000;
// How long a live session that ended is given for its last files to be read.
constexpr int kEndedSettleMs = 3000;

}  // namespace

// The tensor view with --tensor FILE, or else the selected op's tensor of the selected round.
bool showTensor(MainWindow& window, const ScreenshotRequest& r, QString* problem) {
    window.showPage(MainWindow::Page::Workspace);
    window.showView(MainWindow::View::Tensor);
    window.tensorPreview()->setOverlay(r.overlay);
    if (!r.tensorFile.isEmpty()) {
        window.previewTensorFile(r.tensorFile);
    } else if (!window.previewCurrentTensor()) {
        *problem = QStringLiteral(
            "the selected op has no tensor file in this round (pick one with --op/--round, or "
            "--tensor FILE)");
        return false;
    }
    window.tensorPreview()->showPage(r.tensorPage);
    return true;
}

// Puts the window in the state the screenshot asks for; returns false (with a message) when
// something asked for does not exist in the dump.
bool arrange(MainWindow& window, const ScreenshotRequest& r, QString* problem) {
    if (!r.process.isEmpty() && !window.selectProcess(r.process)) {
        *problem = QStringLiteral("no process %1 in the dump").arg(r.process);
        return false;
    }
    if (!r.search.isEmpty()) window.treePanel()->setSearchText(r.search);
    if (r.show) window.treePanel()->setShow(*r.show);
    if (r.roundGiven) {
        const uint32_t shownProcess = window.treePanel()->model()->process();
        const auto rounds = window.context()->store()->index().rounds(
            shownProcess == analysis::kNone ? 0 : shownProcess);
        if (!std::binary_search(rounds.begin(), rounds.end(), r.round)) {
            *problem = rounds.empty()
                           ? QStringLiteral("--round %1: the dump has no rounds").arg(r.round)
                           : QStringLiteral("--round %1: the dump's rounds are %2 to %3")
                                 .arg(r.round)
                                 .arg(rounds.front())
                                 .arg(rounds.back());
            return false;
        }
        window.setRound(r.round);
    }
    if (!r.op.isEmpty() && !window.selectOp(r.op)) {
        *problem = QStringLiteral("no op with id %1 in the dump").arg(r.op);
        return false;
    }
    auto* plot = window.statisticsPlot();
    plot->setMode(r.plotMode == QLatin1String("ops") ? widgets::StatisticsPlot::Mode::RoundProfile
                                                     : widgets::StatisticsPlot::Mode::Rounds);
    if (!r.stat.isEmpty()) {
        const auto stat = parseStat(r.stat);
        if (!stat) {
            *problem = QStringLiteral("--stat must be max, min, mean or norm");
            return false;
        }
        if (plot->mode() == widgets::StatisticsPlot::Mode::RoundProfile) {
            plot->setProfileStat(*stat);
        } else {
            for (int s = 0; s < analysis::kStatCount; ++s)
                plot->setStatEnabled(static_cast<analysis::Stat>(s),
                                     static_cast<analysis::Stat>(s) == *stat);
        }
    }
    plot->setProfileAllDepths(r.allOps);
    plot->setLogScale(r.log);
    for (const QString& pin : r.pin) {
        // Pin the named op's tensor (rounds mode) or the named round (ops mode), then come back.
        const uint32_t op = window.context()->cursor()->op();
        const int32_t round = window.context()->cursor()->round();
        if (pin.startsWith(QLatin1String("round:"))) {
            window.setRound(pin.mid(6).toInt());
        } else if (!window.selectOp(pin)) {
            *problem = QStringLiteral("--pin: no op with id %1").arg(pin);
            return false;
        }
        plot->pinCurrent();
        window.context()->cursor()->setOp(op);
        window.setRound(round);
    }
    window.tensorPreview()->setOverlay(r.overlay);  // for the tensor view, now or later
    if (r.jump && !window.context()->goToFirstDivergence())
        std::fprintf(stderr, "probe-studio: --jump: the runs do not diverge\n");
    window.showView(r.view);
    // The comparison at its first divergence: that tensor in both runs.
    if (r.jump && r.view == MainWindow::View::Compare) window.comparePanel()->showTensorPair();
    if (r.shown == Shown::Start) window.showPage(MainWindow::Page::Start);
    if (r.view == MainWindow::View::Tensor) return showTensor(window, r, problem);
    return true;
}

void whenReady(context::AppContext& context, const SessionRequest& session,
               const std::function<void(bool)>& whenLoaded) {
    // Comparing: ready once the first comparison is done too.
    auto ready = whenLoaded;
    if (!session.reference.isEmpty()) {
        ready = [&context, whenLoaded](bool ok) {
            auto* comparison = context.comparison();
            if (!ok || comparison->result()) return whenLoaded(ok);
            auto done = std::make_shared<QMetaObject::Connection>();
            *done = QObject::connect(comparison, &data::RunComparison::finished, &context,
                                     [done, whenLoaded](bool compared, const QString& message) {
                                         QObject::disconnect(*done);
                                         if (!compared) fail(message, kExitFailed);
                                         whenLoaded(compared);
                                     });
        };
    }
    auto fired = std::make_shared<bool>(false);
    auto fire = [fired, ready](bool ok) {
        if (*fired) return;
        *fired = true;
        ready(ok);
    };
    if (!session.dir.isEmpty()) {
        QObject::connect(&context, &context::AppContext::sessionLoaded, &context, fire);
        return;
    }
    if (!session.live()) {
        QTimer::singleShot(0, &context, [fire] { fire(true); });
        return;
    }
    auto* poll = new QTimer(&context);
    auto endedAt = std::make_shared<QElapsedTimer>();
    QObject::connect(poll, &QTimer::timeout, &context, [&context, session, poll, endedAt, fire] {
        auto finish = [&](bool ok) {
            poll->stop();
            poll->deleteLater();
            fire(ok);
        };
        const auto* live = context.liveSession();
        if (!live) return finish(false);
        const auto* store = context.store();
        const bool loaded = store->isOpen() && store->initialLoadDone();
        const auto& idx = store->index();
        const size_t rounds = idx.processCount() > 0 ? idx.rounds(0).size() : 0;
        if (loaded && rounds >= static_cast<size_t>(session.waitRounds) &&
            context.cursor()->op() != analysis::kNone)
            return finish(true);
        if (live->state() == session::SessionState::FailedToStart) return finish(false);
        if (!live->hasEnded()) return;
        if (!endedAt->isValid()) endedAt->start();
        // Over: show what its dump holds once it is read (the status says so, or after a moment
        // for a model killed before it could write it).
        const bool settled = loaded && (store->dumpState() != QLatin1String("running") ||
                                        endedAt->elapsed() > kEndedSettleMs);
        if (settled || (!store->isOpen() && endedAt->elapsed() > kEndedSettleMs)) finish(loaded);
    });
    poll->start(200);
}

ScreenshotDriver::ScreenshotDriver(MainWindow& window, ScreenshotRequest request,
                                   SessionRequest session)
    : QObject(&window),
      window_(window),
      context_(*window.context()),
      request_(std::move(request)),
      session_(std::move(session)) {}

void ScreenshotDriver::start() {
    QTimer::singleShot(kScreenshotTimeoutMs, this, [this] {
        exitCode_ =
            fail(QStringLiteral("the dump did not finish loading in %1 s; saving what is shown")
                     .arg(kScreenshotTimeoutMs / 1000),
                 kExitFailed);
        capture();
    });
    whenReady(context_, session_, [this](bool ok) { onReady(ok); });
}

void ScreenshotDriver::onReady(bool ok) {
    QString problem;
    const bool hasDump = session_.hasDump();
    if (!ok) {
        exitCode_ = kExitFailed;
        const QString why = session_.live() && context_.liveSession()
                                ? context_.liveSession()->stateDetail()
                                : QString();
        fail(context_.problems().value(
                 0, why.isEmpty() ? QStringLiteral("the dump could not be opened") : why),
             kExitFailed);
    } else if (hasDump && !arrange(window_, request_, &problem)) {
        exitCode_ = fail(problem, kExitFailed);
    } else if (!hasDump && request_.shown == Shown::Start) {
        window_.showPage(MainWindow::Page::Start);
    } else if (!hasDump && !request_.tensorFile.isEmpty()) {
        showTensor(window_, request_, &problem);
    }
    auto* pair = window_.comparePanel()->pairView()->document();
    if (request_.view == MainWindow::View::Compare && exitCode_ == kExitOk && pair->isLoading()) {
        connect(pair, &data::TensorPairDocument::loaded, this, &ScreenshotDriver::capture);
        connect(pair, &data::TensorPairDocument::failed, this, &ScreenshotDriver::capture);
        return;
    }
    auto* document = window_.tensorPreview()->document();
    if (request_.view == MainWindow::View::Tensor && exitCode_ == kExitOk &&
        document->isLoading()) {
        // Wait for the tensor and its heatmap.
        connect(document, &data::TensorDocument::imageReady, this, &ScreenshotDriver::capture);
        connect(document, &data::TensorDocument::failed, this, &ScreenshotDriver::capture);
        connect(document, &data::TensorDocument::loaded, this, [this, document] {
            if (!document->isLoading() && !(document->tensor() && document->tensor()->hasValues()))
                capture();
        });
    } else {
        capture();
    }
}

void ScreenshotDriver::captureFailure() {
    exitCode_ = kExitFailed;
    capture();
}

void ScreenshotDriver::capture() {
    if (capturing_) return;
    capturing_ = true;
    // Give layouts and queued replots a moment.
    QTimer::singleShot(400, this, [this] {
        window_.statisticsPlot()->refresh();  // a live dump grew meanwhile: the plot as the tree
        const QPixmap shot = window_.grab();
        if (!shot.save(request_.file, "PNG")) {
            exitCode_ =
                fail(QStringLiteral("cannot write %1").arg(request_.file), kExitCannotWrite);
        } else {
            std::printf("probe-studio: saved %s (%dx%d)\n",
                        qPrintable(QFileInfo(request_.file).absoluteFilePath()), shot.width(),
                        shot.height());
        }
        QCoreApplication::exit(exitCode_);
    });
}

}  // namespace probe::studio
