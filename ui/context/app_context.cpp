// SPDX-License-Identifier: GPL-3.0-or-later
#include "context/app_context.h"

#include <memory>

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSettings>

#include "analysis/compare.h"
#include "compare_runs.h"
#include "config_document.h"
#include "dump_cursor.h"
#include "dump_store.h"
#include "op_selection.h"
#include "probe/format/api_config.h"
#include "probe/format/file_util.h"
#include "probe/format/json_input.h"
#include "probe/format/op_config.h"

namespace probe::context {

namespace {
const char* const kLastReferenceKey = "compare/lastReference";
}  // namespace

using analysis::kNone;

AppContext::AppContext(QObject* parent) : QObject(parent) {
    store_ = new data::DumpStore(this);
    reference_ = new data::DumpStore(this);
    comparison_ = new data::RunComparison(reference_, store_, this);
    selection_ = new data::OpSelection(this);
    config_ = new data::ConfigDocument(this);
    config_->followSelection(selection_);  // ticking ops and the config editor edit one config
    cursor_ = new data::DumpCursor(store_, this);
    recent_ = new session::RecentSessions(this);
    // Relocatable: what is shipped is found from the executable, <prefix>/bin/probe-studio.
    dataDirectory_ =
        QDir(QCoreApplication::applicationDirPath() + QStringLiteral("/../share/probe-studio"))
            .absolutePath();

    // A run cancelled to start again (the dump grew) leaves the pair pending; a new session,
    // comparison or reference drops it.
    connect(comparison_, &data::RunComparison::finished, this, [this](bool ok) {
        if (!ok || !comparingRecent_) return;
        recent_->add(*comparingRecent_);
        comparingRecent_.reset();
    });
    connect(store_, &data::DumpStore::opened, this, &AppContext::onOpened);
    connect(store_, &data::DumpStore::openFailed, this, &AppContext::onOpenFailed);
    connect(store_, &data::DumpStore::changed, this, &AppContext::onChanged);
    connect(store_, &data::DumpStore::dumpStateChanged, this,
            &AppContext::goToFirstNanUnlessMovedAway);
    connect(store_, &data::DumpStore::problemsAdded, this, &AppContext::addProblems);
    connect(store_, &data::DumpStore::initialLoadFinished, this,
            &AppContext::onInitialLoadFinished);
    connect(store_, &data::DumpStore::wasReset, this, [this] {
        setFirstNan(kNone);
        autoSelectedOp_ = kNone;
        if (!problems_.isEmpty()) {
            problems_.clear();
            emit problemsCleared();
        }
    });
}

AppContext::~AppContext() {
    // A launched model is stopped (LiveSession's destructor ends it) before the dumps go.
    delete live_;
}

bool AppContext::modelRunning() const {
    return live_ && live_->origin() == session::LiveSession::Origin::Launched && !live_->hasEnded();
}

void AppContext::setDataDirectory(const QString& dir) {
    if (dir == dataDirectory_) return;
    dataDirectory_ = dir;
    emit dataDirectoryChanged(dir);
}

session::LaunchSpec AppContext::lastLaunch() const {
    if (live_ && live_->origin() == session::LiveSession::Origin::Launched) {
        session::LaunchSpec spec = live_->launchSpec();
        spec.probeExecutable.clear();
        return spec;
    }
    for (const auto& recent : recent_->list())
        if (recent.kind == session::RecentSession::Kind::Launch) return recent.launch;
    return {};
}

QString AppContext::demoScript() const {
    return QDir(dataDirectory_).absoluteFilePath(QStringLiteral("demo/llama_demo.py"));
}

QString AppContext::configsDirectory() const {
    return QDir(dataDirectory_).absoluteFilePath(QStringLiteral("configs"));
}

void AppContext::replaceSession(SessionKind kind, session::LiveSession* live) {
    QString letGo;  // the attached probe let go, said once the new session is in place
    // A new run takes the session panel: a run let go before, kept for the panel until its
    // program ends, goes now (a program that never ends, or whose pid was given to another,
    // kept one more each time).
    if (live && watchedUntilItEnds_) watchedUntilItEnds_->deleteLater();
    if (session::LiveSession* old = live_) {
        live_ = nullptr;
        disconnect(old, nullptr, this, nullptr);
        disconnect(old, nullptr, store_, nullptr);
        // A launched model is asked to stop (SIGTERM, SIGKILL after a grace period), an attached
        // probe let go; the session goes once that is done, without anyone waiting for it. When
        // a dump is shown next, the session panel still shows this run: a program let go stays
        // watched until it ends, for the panel to say so (it said "the program goes on running"
        // ever after).
        const bool panelShowsIt = live == nullptr;
        const auto done = [old, panelShowsIt] {
            return old->hasEnded() && !(panelShowsIt && old->watchingForProgramEnd());
        };
        if (done()) {
            old->deleteLater();
        } else {
            if (old->origin() == session::LiveSession::Origin::Attached && !old->hasEnded())
                letGo = tr("pid %1 (%2)").arg(old->probePid()).arg(old->command());
            connect(old, &session::LiveSession::stateChanged, old, [old, done] {
                if (done()) old->deleteLater();
            });
            old->stop();
            if (panelShowsIt) watchedUntilItEnds_ = old;
        }
    }
    openingRecent_.clear();
    openingProcess_.clear();
    comparingRecent_.reset();
    // What the next comparison is offered as its reference: the run this session compared
    // with, else the run it showed.
    const QString before = !reference_->requestedPath().isEmpty() ? reference_->requestedPath()
                                                                  : store_->requestedPath();
    if (!before.isEmpty()) previousRun_ = before;
    // The dumps go: the store clears the cursor while the old data is still there, then resets
    // the item models around the change (DumpStore's four phases).
    closeReference();
    store_->close();
    kind_ = kind;
    live_ = live;
    if (live) {
        live->setParent(this);
        connect(live, &session::LiveSession::dumpFolderReady, this, [this](const QString& root) {
            emit notice(tr("Opening %1…").arg(root));
            store_->open(root);
        });
        // The socket says when the probe wrote: read the folder then, not at the next
        // (backed-off) poll, so rows show within a fraction of a second however long the model
        // was quiet.
        connect(live, &session::LiveSession::dumpGrew, store_, &data::DumpStore::pollNow);
        connect(live, &session::LiveSession::helloReceived, this, &AppContext::takeConfigFromHello);
    }
    emit sessionReplaced();
    if (!letGo.isEmpty()) emit probeLetGo(letGo);
}

bool AppContext::canOpenDump(const QString& path, QString* error) {
    std::string problem;
    if (analysis::locateDump(path.toStdString(), &problem)) return true;
    if (error) *error = QString::fromStdString(problem);
    return false;
}

bool AppContext::openDump(const QString& path, QString* error) {
    std::string problem;
    const auto location = analysis::locateDump(path.toStdString(), &problem);
    if (!location) {
        // Said, and nothing replaced: a mistaken choice lost the dump shown.
        if (error) *error = QString::fromStdString(problem);
        emit notice(tr("Could not open: %1").arg(QString::fromStdString(problem)));
        return false;
    }
    replaceSession(SessionKind::Dump, nullptr);
    takeConfigOfDump(location->root);
    // A rank's folder (<dump>/step0/rank1, <atb_dump_data>/data/0_4242): the dump is read whole
    // and opens at that rank.
    openingProcess_ = location->scope.process;
    emit notice(tr("Opening %1…").arg(path));
    store_->open(path);
    openingRecent_ = QFileInfo(path).absoluteFilePath();  // recent once it opened
    return true;
}

bool AppContext::launch(const session::LaunchSpec& given) {
    session::LaunchSpec spec = given;
    if (spec.probeExecutable.isEmpty()) spec.probeExecutable = probeExecutable_;
    // Where it runs is part of what was launched (relative paths in it are that folder's): kept
    // so that the recent session launches the same again from anywhere.
    if (spec.workingDirectory.isEmpty()) spec.workingDirectory = QDir::currentPath();
    auto* live = new session::LiveSession(this);
    replaceSession(SessionKind::Launch, live);
    if (!live->launch(spec)) {
        emit notice(tr("Could not launch: %1").arg(live->stateDetail()));
        return false;
    }
    // The config tab holds the launch's config from the start, not only once the probe says
    // hello: a program that ended before its probe started left it showing a new config.
    // A regular file within the configs' limit only (a FIFO would block here).
    // Edits not applied yet are kept instead (the config editor says so).
    // Without a config, probe run dumps by its default, the op-level starting point: shown as
    // such (the copy of the dump opened before stayed, and read as the run's config once a
    // short run had ended).
    if (spec.configPath.isEmpty() && !config_->isModified()) {
        config_->startOver(data::ConfigDocument::Kind::Op);
        configOfDump_.clear();
    } else if (!config_->isModified()) {
        if (const auto text = format::readRegularFile(spec.configPath.toStdString(),
                                                      format::kConfigJsonLimits.maxBytes, nullptr))
            config_->setFileContent(data::ConfigDocument::Kind::Op, spec.configPath,
                                    QString::fromStdString(*text));
    }
    // A recent session once the model runs under the probe (it said hello, or its dump
    // appeared): a command that cannot start is not one to take up again.
    session::RecentSession recent;
    recent.kind = session::RecentSession::Kind::Launch;
    recent.launch = spec;
    recent.launch.probeExecutable.clear();
    addRecentOnceRunning(live, recent);
    return true;
}

void AppContext::addRecentOnceRunning(session::LiveSession* live,
                                      const session::RecentSession& recent) {
    auto added = std::make_shared<bool>(false);
    auto add = [this, live, recent, added] {
        if (live_ != live || *added) return;
        *added = true;
        session::RecentSession entry = recent;
        entry.path = live->dumpRoot();
        if (entry.kind == session::RecentSession::Kind::Attach) {
            entry.pid = live->probePid();
            entry.command = live->command();
        }
        recent_->add(entry);
    };
    connect(live, &session::LiveSession::helloReceived, this, add);
    if (recent.kind == session::RecentSession::Kind::Launch)
        connect(live, &session::LiveSession::dumpFolderReady, this, add);
}

bool AppContext::launchDemo(QString* error) {
    session::LaunchSpec spec;
    QString problem;
    if (!session::prepareDemoLaunch(dataDirectory_, &spec, &problem)) {
        if (error) *error = problem;
        emit notice(problem);
        return false;
    }
    if (!launch(spec)) {
        if (error) *error = live_->stateDetail();
        return false;
    }
    return true;
}

void AppContext::attach(const session::LiveProbeInfo& probe) {
    auto* live = new session::LiveSession(this);
    replaceSession(SessionKind::Attach, live);
    session::RecentSession recent;
    recent.kind = session::RecentSession::Kind::Attach;
    addRecentOnceRunning(live, recent);
    live->attach(probe);
}

std::optional<analysis::DumpLocation> AppContext::locateCompared(ComparedRun run,
                                                                 const QString& path,
                                                                 QString* error) {
    std::string problem;
    auto location = analysis::locateDump(path.toStdString(), &problem);
    if (!location && error)
        *error = (run == ComparedRun::Reference ? tr("The reference: %1") : tr("The candidate: %1"))
                     .arg(QString::fromStdString(problem));
    return location;
}

bool AppContext::compare(const QString& referencePath, const QString& candidatePath,
                         QString* error) {
    const auto reference = locateCompared(ComparedRun::Reference, referencePath, error);
    if (!reference) return false;
    analysis::CompareOptions options;
    options.referenceScope = reference->scope;
    const QString shown = store_->requestedPath();
    const bool keepShown = isShownDump(candidatePath);
    if (!keepShown) {
        const auto candidate = locateCompared(ComparedRun::Candidate, candidatePath, error);
        if (!candidate) return false;
        options.candidateScope = candidate->scope;
        openDump(candidatePath);
    } else if (kind_ == SessionKind::None) {
        if (error) *error = tr("No dump is open to compare: choose the candidate folder too");
        return false;
    }
    comparison_->setOptions(options);
    emit notice(tr("Opening the reference %1…").arg(referencePath));
    reference_->open(referencePath);
    comparison_->setEnabled(true);
    QSettings().setValue(kLastReferenceKey, QFileInfo(referencePath).absoluteFilePath());
    session::RecentSession recent;  // to be compared again from the start page
    recent.kind = session::RecentSession::Kind::Compare;
    recent.path = keepShown ? shown : candidatePath;
    recent.reference = referencePath;
    comparingRecent_.reset();
    if (!recent.path.isEmpty()) comparingRecent_ = recent;
    return true;
}

bool AppContext::isShownDump(const QString& path) const {
    if (path.isEmpty()) return true;
    const QString absolute = QFileInfo(path).absoluteFilePath();
    return absolute == QFileInfo(store_->requestedPath()).absoluteFilePath() ||
           (store_->isOpen() && absolute == QFileInfo(store_->root()).absoluteFilePath());
}

QString AppContext::lastReference() const {
    return QSettings().value(kLastReferenceKey).toString();
}

QString AppContext::suggestedReference() const {
    if (!reference_->requestedPath().isEmpty()) return reference_->requestedPath();
    const QString shown = store_->requestedPath();
    for (const QString& path : {previousRun_, lastReference()}) {
        const QFileInfo run(path);
        if (!path.isEmpty() && run.isDir() &&
            (shown.isEmpty() || run.absoluteFilePath() != QFileInfo(shown).absoluteFilePath()))
            return path;
    }
    return {};
}

void AppContext::openReference(const QString& path) {
    comparingRecent_.reset();  // another comparison than compare() asked for
    comparison_->setOptions({});
    reference_->open(path);
    comparison_->setEnabled(true);
}

void AppContext::closeReference() {
    comparingRecent_.reset();
    comparison_->setEnabled(false);
    if (reference_->isOpen() || !reference_->requestedPath().isEmpty()) reference_->close();
}

bool AppContext::goToFirstDivergence() {
    const uint32_t row = comparison_->firstDivergenceRow();
    if (row == kNone || row >= store_->index().rowCount()) return false;
    cursor_->setRow(row);
    return true;
}

void AppContext::takeConfigFromHello(const format::control::Hello& hello) {
    // The config document holds the config the probe has in force, as its file holds it.
    const QString path = QString::fromStdString(hello.configPath);
    const auto parsed = format::parseOpConfig(format::dumpJson(hello.config), "probe");
    QString text;
    if (!path.isEmpty()) {
        QFile file(path);
        if (file.open(QIODevice::ReadOnly)) {
            const QByteArray content = file.readAll();
            const auto fromFile = format::parseOpConfig(content.toStdString(), path.toStdString());
            if (!parsed.config || (fromFile.config && *fromFile.config == *parsed.config))
                text = QString::fromUtf8(content);
        }
    }
    if (text.isEmpty() && parsed.config) text = QString::fromStdString(parsed.config->toFileText());
    // Edits not applied yet stay (the config editor says so; Apply gives them to the probe).
    if (!text.isEmpty() && !config_->isModified())
        config_->setFileContent(data::ConfigDocument::Kind::Op, path, text);
}

void AppContext::takeConfigOfDump(const std::string& dumpRoot) {
    if (!config_->filePath().isEmpty() || config_->isModified()) return;
    // The copy of the dump shown before is that dump's: its ticks are on another model's ids.
    const bool showsLastDumps = !configOfDump_.isEmpty() && config_->origin() == configOfDump_;
    configOfDump_.clear();
    const QString root = QString::fromStdString(dumpRoot);
    const QString path = data::runConfigBeside(root);
    const auto opConfigText = [&]() -> std::optional<std::string> {
        if (QFileInfo(root).fileName() != QLatin1String("atb_dump_data")) return std::nullopt;
        // A regular file within the configs' limit only (a FIFO would block here).
        auto text = format::readRegularFile(path.toStdString(), format::kConfigJsonLimits.maxBytes,
                                            nullptr);
        if (!text) return std::nullopt;
        const auto parsed = format::parseJson(*text, path.toStdString(), format::kConfigJsonLimits);
        if (!parsed.ok() || format::guessConfigKind(*parsed.value) == "api") return std::nullopt;
        return text;
    }();
    if (!opConfigText) {
        if (showsLastDumps) config_->startOver(data::ConfigDocument::Kind::Op);
        return;
    }
    config_->startFrom(data::ConfigDocument::Kind::Op, path, QString::fromStdString(*opConfigText),
                       false);
    configOfDump_ = path;
}

void AppContext::onOpened() {
    if (openingRecent_.isEmpty()) return;
    session::RecentSession recent;
    recent.kind = session::RecentSession::Kind::Open;
    recent.path = openingRecent_;
    recent_->add(recent);
    openingRecent_.clear();
}

void AppContext::onOpenFailed(const QString& message) {
    openingRecent_.clear();
    addProblems({message});
    emit notice(tr("Could not open: %1").arg(message));
    emit sessionLoaded(false);
}

void AppContext::addProblems(const QStringList& problems) {
    problems_ += problems;
    emit problemsAdded(problems);
}

uint32_t AppContext::liveProcess() const {
    // The live run's own process among earlier runs' (a launch added to a folder that holds
    // them), once its probe has said its pid.
    return live_ && live_->probePid() > 0 ? store_->index().findProcessOfPid(live_->probePid())
                                          : kNone;
}

void AppContext::onChanged(const analysis::IndexChange& change) {
    const auto& idx = store_->index();
    // The store follows the session's dump: its status says how an attached program ended.
    if (change.statusChanged && live_ && idx.status()) live_->takeDumpStatus(*idx.status());
    // A dump opened before it held any op (a model just launched): show its first op as soon
    // as there is one, so the tables and plots fill while it runs. The live run's own process,
    // once it has ops, also when the app chose an earlier run's op meanwhile (a launch added to
    // a folder that holds earlier runs opened at theirs).
    if (store_->initialLoadDone() && idx.processCount() > 0) {
        const uint32_t live = liveProcess();
        const uint32_t process = live != kNone ? live : 0;
        const bool appChose = (cursor_->op() == kNone && change.newOps > 0) ||
                              (cursor_->op() == autoSelectedOp_ && live != kNone &&
                               idx.op(autoSelectedOp_).process != live);
        if (appChose && !idx.process(process).topOps.empty()) {
            autoSelectedOp_ = idx.process(process).topOps.front();
            cursor_->setOp(autoSelectedOp_);
        }
    }
    // Only the new rows are looked at until a NaN turns up, and rows whose statistics arrived
    // later (computed from tensor files) always; then where it first appears in execution order
    // (an earlier round may have been read later).
    auto nanAt = [&](uint32_t r) { return (idx.row(r).anomalies & analysis::kHasNan) != 0; };
    uint32_t found = kNone;
    for (uint32_t r : change.statisticsRows)
        if (nanAt(r)) {
            found = r;
            break;
        }
    if (found == kNone && firstNanRow_ == kNone)
        for (uint32_t r = change.firstNewRow; r < change.firstNewRow + change.newRows; ++r)
            if (nanAt(r)) {
                found = r;
                break;
            }
    if (found == kNone) return;
    const uint32_t process = idx.op(idx.slot(idx.row(found).slot).op).process;
    const uint32_t first = idx.firstAnomalousRow(process, analysis::kHasNan);
    if (first == firstNanRow_) return;
    setFirstNan(first == kNone ? found : first);
    // The status may have said "complete" before the last rows were read.
    goToFirstNanUnlessMovedAway();
}

void AppContext::onInitialLoadFinished() {
    // Start where the numbers first go wrong: the first NaN in execution order (its op and
    // round), else the first op.
    const auto& idx = store_->index();
    uint32_t process = openingProcess_.empty() ? kNone : idx.findProcess(openingProcess_);
    openingProcess_.clear();
    if (process == kNone) process = liveProcess();
    if (process == kNone) process = 0;
    if (cursor_->op() == kNone && idx.processCount() > 0) {
        const uint32_t firstNan = idx.firstAnomalousRow(process, analysis::kHasNan);
        if (firstNan != kNone) {
            setFirstNan(firstNan);  // everything read: this is the first in execution order
            cursor_->setRow(firstNan);
        } else if (!idx.process(process).topOps.empty()) {
            // Chosen by the app, not the user: a NaN read later (a live run) may still move it.
            autoSelectedOp_ = idx.process(process).topOps.front();
            cursor_->setOp(autoSelectedOp_);
        }
    }
    emit sessionLoaded(true);
}

void AppContext::setFirstNan(uint32_t row) {
    if (row == firstNanRow_) return;
    firstNanRow_ = row;
    emit firstNanChanged(row);
}

void AppContext::pickRow(uint32_t row) {
    keepTheUsersChoice();
    cursor_->setRow(row);
}

bool AppContext::goToFirstNan() {
    if (firstNanRow_ == kNone) return false;
    cursor_->setRow(firstNanRow_);
    return true;
}

void AppContext::goToFirstNanUnlessMovedAway() {
    if (firstNanRow_ == kNone || autoSelectedOp_ == kNone || cursor_->op() != autoSelectedOp_)
        return;
    if (!store_->initialLoadDone() || store_->dumpState() == QLatin1String("running") ||
        store_->dumpState().isEmpty())
        return;
    cursor_->setRow(firstNanRow_);
}

}  // namespace probe::context
