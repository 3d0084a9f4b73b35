// The application context (as RenderDoc's ICaptureContext): everything the application holds,
// in one object the window, the screenshot driver and the tests all drive: the session (a dump
// opened, a model launched, a probe attached to), the open dumps (the one shown and, when
// comparing, a reference one, with their comparison), the cursor, the op selection, the config
// document and the recent sessions. No widgets: the window is a view over it.
//
// Sessions are replaced, never stacked: every way to start one goes through replaceSession(),
// which ends the old one (a launched model is stopped in the background, an attached probe let
// go), clears the cursor while the old data is still there, then closes the dumps so that the
// item models reset before the data goes.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <optional>

#include <QObject>
#include <QPointer>
#include <QString>
#include <QStringList>

#include "analysis/compare.h"
#include "analysis/dump_index.h"
#include "session/launch_session.h"
#include "session/live_probes.h"
#include "session/live_session.h"
#include "session/recent_sessions.h"

namespace probe::data {
class ConfigDocument;
class DumpCursor;
class RunComparison;
class DumpStore;
class OpSelection;
}  // namespace probe::data

namespace probe::context {

class AppContext : public QObject {
    Q_OBJECT
public:
    // What the application shows: nothing, a dump folder, a model it launched, a probe it
    // attached to.
    enum class SessionKind { None, Dump, Launch, Attach };

    explicit AppContext(QObject* parent = nullptr);
    ~AppContext() override;

    // --- what it holds ------------------------------------------------------------------------
    // The dump shown (the candidate when comparing: the run under suspicion, or the live one).
    data::DumpStore* store() const { return store_; }
    // The dump store() is compared against: closed unless compare() or openReference() opened one.
    data::DumpStore* reference() const { return reference_; }
    // The comparison of store() against reference(), run off the GUI thread while both are open.
    data::RunComparison* comparison() const { return comparison_; }
    data::DumpCursor* cursor() const { return cursor_; }
    data::OpSelection* selection() const { return selection_; }
    data::ConfigDocument* configDocument() const { return config_; }
    session::RecentSessions* recentSessions() const { return recent_; }
    // The launched model or the attached probe; nullptr for a dump or no session.
    session::LiveSession* liveSession() const { return live_; }
    SessionKind sessionKind() const { return kind_; }
    // A launched model that has not ended: replacing the session stops it (ask first).
    bool modelRunning() const;
    // What was launched last: this session's launch, else the most recent one (an empty spec
    // when there was none).
    session::LaunchSpec lastLaunch() const;

    // --- sessions: each replaces the one before ---------------------------------------------
    // Opens a dump folder of either layout and follows it while it grows. A path that holds no
    // dump is refused before anything is replaced (the dump shown stays): false, with why in
    // `error` (canOpenDump() says the same beforehand).
    bool openDump(const QString& path, QString* error = nullptr);
    // Whether `path` holds a dump to open; false with why ("… holds no dump: …", "… does not
    // exist") in `error`. Reads no rows.
    static bool canOpenDump(const QString& path, QString* error = nullptr);
    // Launches a model as `probe run` does; its dump opens as it appears and is followed. False
    // when the spec is refused before anything runs (the reason: liveSession()->stateDetail()).
    bool launch(const session::LaunchSpec& spec);
    // The bundled demo (from the data directory); false with the reason in `error`.
    bool launchDemo(QString* error = nullptr);
    // Attaches to a running probe; its dump opens once it said hello.
    void attach(const session::LiveProbeInfo& probe);
    // Ends the session: nothing is shown.
    void closeSession() { replaceSession(SessionKind::None, nullptr); }
    // The one way a session ends: the live session is ended (without waiting for it), the
    // cursor cleared, both dumps closed (item models reset before the data goes), what was
    // gathered about the dump (problems, first NaN) forgotten. Then `kind` with `live` (owned
    // from now on; nullptr unless launching or attaching) is the session, and sessionReplaced()
    // says so.
    void replaceSession(SessionKind kind, session::LiveSession* live);

    // --- comparing: a reference dump beside the one shown ------------------------------------
    // Compares `candidatePath` (shown; "" or the open dump's folder: the dump already shown, a
    // live run included) against `referencePath`. A folder may name one rank of a dump
    // (<dump>/step0/rank1, <atb_dump_data>/data/0_4242): that rank is compared. False with the
    // reason in `error` when a path holds no dump.
    bool compare(const QString& referencePath, const QString& candidatePath = {},
                 QString* error = nullptr);
    // Whether a comparison's candidate `path` is the dump shown ("", its folder as it was asked
    // for, or its atb_dump_data): compare() keeps it rather than opening another.
    bool isShownDump(const QString& path) const;
    // The dump `path` holds, located for a comparison as its reference or its candidate; none
    // when it holds none, and why in `error` as compare() and the Compare dialog say it ("The
    // reference: … does not exist").
    enum class ComparedRun { Reference, Candidate };
    static std::optional<analysis::DumpLocation> locateCompared(ComparedRun run,
                                                                const QString& path,
                                                                QString* error);
    // The reference folder last given to compare() successfully, here or in an earlier run of
    // the app (kept in its settings): what File › Compare offers again once the comparison is
    // closed with its session. "" when none.
    QString lastReference() const;
    // The reference File › Compare offers: the one open now; else, in this run of the app, the
    // reference of the session before this one or, without one, that session's dump (open A,
    // then B: B is compared with A); else lastReference(). Never the dump shown; "" when none.
    QString suggestedReference() const;
    // Opens the reference and starts comparing (the whole dumps); it is closed with the session.
    void openReference(const QString& path);
    // Stops comparing and closes the reference.
    void closeReference();
    // Moves the cursor to the first divergence (the cause tensor of the first born-here op, else
    // of the first inherited one, in its round); false when there is none.
    bool goToFirstDivergence();

    // --- where things are ---------------------------------------------------------------------
    // The installed data (<prefix>/share/probe-studio): the demo and the shipped configs.
    // By default found from the executable, as installed (the build tree has the same layout).
    void setDataDirectory(const QString& dir);
    QString dataDirectory() const { return dataDirectory_; }
    QString demoScript() const;
    QString configsDirectory() const;
    // The `probe` command line tool launches run (by default the one beside this executable).
    void setProbeExecutable(const QString& path) { probeExecutable_ = path; }

    // --- what was gathered while the dump was read ----------------------------------------------
    QStringList problems() const { return problems_; }
    // The row where a NaN first appears in execution order, kNone until one is read.
    uint32_t firstNanRow() const { return firstNanRow_; }
    // Moves the cursor there; false when there is none.
    bool goToFirstNan();
    // The user chose an op, a tensor or a round (even of the op the context had chosen: a click
    // in the tree, on a plot's point, on a table's row, the Round box): where the cursor is
    // stays, a NaN read later does not move it.
    void keepTheUsersChoice() { autoSelectedOp_ = analysis::kNone; }
    // The user picked this row (a point on a plot, a row of the comparison): the cursor goes
    // there, and stays (keepTheUsersChoice).
    void pickRow(uint32_t row);

signals:
    // A session replaced the one before (its dump is not opened yet): sessionKind(),
    // liveSession() and the closed dumps are the new session's.
    void sessionReplaced();
    // Everything the folder held when it was opened is read and the cursor placed (ok), or
    // opening it failed.
    void sessionLoaded(bool ok);
    // Problems met reading the dump (new ones), or none any more (a new session).
    void problemsAdded(const QStringList& problems);
    void problemsCleared();
    // The first NaN in execution order is now firstNanRow() (kNone: none, a new session).
    void firstNanChanged(uint32_t row);
    // Something to tell the user about the session in passing (the status bar).
    void notice(const QString& text);
    // The attached probe of the session replaced was let go: its program runs on, unfollowed.
    void probeLetGo(const QString& what);
    void dataDirectoryChanged(const QString& dir);

private:
    void onOpened();
    void onOpenFailed(const QString& message);
    void onChanged(const analysis::IndexChange& change);
    // The process of the live session's probe in the dump shown, kNone when none (yet).
    uint32_t liveProcess() const;
    void onInitialLoadFinished();
    void addProblems(const QStringList& problems);
    void takeConfigFromHello(const format::control::Hello& hello);
    // An opened op-level dump's config (the probe_config.json beside its atb_dump_data, which
    // `probe run` and the launch form write), copied into a new config document, unless the
    // document holds the user's own (a file, or edits).
    void takeConfigOfDump(const std::string& dumpRoot);
    void addRecentOnceRunning(session::LiveSession* live, const session::RecentSession& recent);
    void setFirstNan(uint32_t row);
    // Selects the first NaN when the context chose what is shown (not the user) and the dump is
    // read whole: opened complete, or followed until it completed.
    void goToFirstNanUnlessMovedAway();

    data::DumpStore* store_;
    data::DumpStore* reference_;
    data::RunComparison* comparison_;
    data::OpSelection* selection_;
    data::ConfigDocument* config_;
    data::DumpCursor* cursor_;
    session::RecentSessions* recent_;
    QPointer<session::LiveSession> live_;
    // The run a dump was opened over, kept until its program ends (replaceSession).
    QPointer<session::LiveSession> watchedUntilItEnds_;
    SessionKind kind_ = SessionKind::None;
    QString dataDirectory_;
    QString probeExecutable_;
    QStringList problems_;
    uint32_t firstNanRow_ = analysis::kNone;
    // The op the context chose by itself when a growing dump got its first ops: still shown
    // when the dump completes, the cursor moves on to the first NaN, as for a dump opened whole.
    uint32_t autoSelectedOp_ = analysis::kNone;
    // The folder openDump() was asked for: a recent session once it opened.
    QString openingRecent_;
    // The pair compare() was asked for: a recent session once compared (not if another session,
    // comparison or reference replaced it first: a comparison cancelled by the user's next step).
    std::optional<session::RecentSession> comparingRecent_;
    QString configOfDump_;  // the dump's config takeConfigOfDump copied into config_, if any
    QString previousRun_;   // the reference, else the dump, of the session before this one
    // The rank (process key) openDump() was asked for by its folder: shown once read.
    std::string openingProcess_;
};

}  // namespace probe::context
