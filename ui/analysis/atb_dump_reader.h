// Incremental reader of the op-level layout (FORMATS.md section 1): statistic.csv files growing
// by whole lines, info/model and info/layer structure files replaced atomically, and
// probe_status.json saying whether the dump is still being written.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analysis/atb_dump.h"
#include "analysis/dump_reader.h"
#include "analysis/parallel_for.h"
#include "analysis/reader_index.h"
#include "analysis/row_order_reader.h"
#include "analysis/tensor_view.h"
#include "probe/format/dump_status.h"
#include "probe/format/file_util.h"
#include "probe/format/states.h"
#include "probe/format/statistic_csv.h"
#include "probe/format/structure_json.h"

namespace probe::analysis {

class AtbDumpReader : public DumpReader {
public:
    // `root` is the atb_dump_data directory (see findAtbDumpRoot).
    explicit AtbDumpReader(std::string root);

    DumpLayout layout() const override { return DumpLayout::Atb; }
    const std::string& root() const override { return root_; }
    DumpDelta poll(uint64_t byteBudget) override;
    bool finished() const override { return finished_; }
    void setStatisticsFromTensorFiles(bool on) override { statisticsFromFiles_ = on; }

private:
    using FileStamp = format::FileStamp;
    struct CsvFile {
        std::string path;
        std::string devicePid;  // of its folders: what its rows must say
        int64_t round = 0;
        uint32_t source = 0;
        uint64_t offset = 0;      // bytes consumed (whole lines)
        uint64_t lineNumber = 0;  // lines consumed
        uint64_t dataLines = 0;   // of them, rows and malformed ones (not the header, not empty)
        int64_t lastSize = -1;    // size at the previous poll: a stable size means no writer
        uint32_t malformed = 0;
        bool headerChecked = false;
        bool skippingLongRow = false;  // inside a line over the length limit
        bool refused = false;          // not a regular file (said once)
        bool readFailed = false;       // a read failed (said once, tried again at each poll)
        bool saidEmpty = false;        // empty once nobody writes it (said once)
        // What ends its lines: '\n' (LF or CRLF), or '\r' alone (a spreadsheet saving as the old
        // Mac OS did), told by its first line.
        char lineEnd = '\n';
    };
    struct OpState {  // beside the shared bookkeeping, by op index
        uint32_t process = 0;
        uint32_t parent = kNone;
        uint32_t seenIn = 0;  // the stamp of the last round its rows or a descendant's were read in
        uint32_t bornIn = 0;  // the stamp of the round it was first read in (0: a structure's)
        uint32_t movedIn = 0;        // the stamp of the last round it ran under another key in
        bool typed = false;          // type known (from a row or a structure file)
        bool hasParam = false;       // parameters known (from a structure file)
        bool fromStructure = false;  // described by a structure file
    };
    void pollStatus(DumpDelta& delta);
    void takeStatus(DumpDelta& delta, const format::DumpStatus& status);
    struct ProcessRows {
        std::map<int64_t, uint64_t> linesOfRound;  // of each round's statistic.csv, those read
        uint64_t lines = 0, rows = 0;              // their sum, and of them the rows
        bool someUnread = false;  // a file or folder that could not be read, a row skipped
    };
    // New runs of a known process's row order file (probe_row_order/<key>.csv).
    void pollRowOrder(DumpDelta& delta, const std::string& devicePid, const ProcessRows& read,
                      bool allRead);
    void sayProcessesWithoutRows(DumpDelta& delta,
                                 const std::map<std::string, ProcessRows>& rowsOf);
    void pollStructure(DumpDelta& delta);
    // Merges `node` and its children; `id` and `namePath` hold its parent's (both empty for a
    // top-level node) and are as they were on return.
    void mergeStructureNode(DumpDelta& delta, uint32_t process, uint32_t parent, std::string& id,
                            std::string& namePath, size_t position,
                            const format::StructureNode& node);
    uint64_t pollCsv(const RoundFile& listed, uint64_t budget, DumpDelta& delta);
    void addRow(DumpDelta& delta, CsvFile& file, uint32_t process, const format::StatRowView& row,
                uint64_t lineOffset);
    void malformedLine(DumpDelta& delta, const std::string& path, CsvFile& file,
                       const std::string& why);

    // The op with this id and name path, created (with its missing ancestors) when new: one id
    // may name different ops in different rounds (ids are positions). `namePath` is the row's
    // "/"-joined name, also used to name ancestors that have no rows of their own. A key not
    // seen before may name an op known under another id (opRunElsewhere): that op is returned.
    uint32_t ensureOp(DumpDelta& delta, uint32_t process, std::string_view id,
                      std::string_view namePath, std::string_view type);
    // Where a layer's control flow changed, an op runs at another position (id) than usual:
    // ops run before it in this round only shift it ("layers.1/add" is 2_5, and 2_9 in the round
    // that ran four ops more before it). The known op a new key (id, namePath) under `parent`
    // stands for in the current round, or kNone: one with the same name path under the same
    // parent, not met in this round yet, whose own position is taken in this round by another
    // op, shifted there or not (takenInRound), or is this one's (the parent having moved).
    // Announced in `delta.roundIds`. `hashes`: the key's (ReaderIndex::hashesOf).
    uint32_t opRunElsewhere(DumpDelta& delta, uint32_t process, uint32_t parent,
                            std::string_view parentId, std::string_view id,
                            std::string_view namePath, const ReaderIndex::OpHashes& hashes);
    // A key with an op of its own, `existing`, not met in this round yet, may stand for an
    // earlier op of its name shifted onto it (two casts in one layer, the first run at the
    // second's id after ops run before them): the first added such op under the same parent, not
    // met in this round, whose own position is taken in this round (takenInRound) while no op
    // between the two ran in its place. That op, announced as opRunElsewhere does, or kNone.
    // (Ops inserted before them whose own ids lie between the two hide a shift: ids alone do not
    // tell them from the ops between.)
    uint32_t earlierOpShiftedOnto(DumpDelta& delta, uint32_t process, uint32_t existing,
                                  std::string_view id, std::string_view namePath,
                                  const ReaderIndex::OpHashes& hashes);
    // A later op of its name (the first after it, not met in this round) shifted onto the key of
    // `existing`, which ran under another key in this round already (an op before them left
    // out: both shifted down), announced; kNone when there is none.
    uint32_t laterOpShiftedOnto(DumpDelta& delta, uint32_t process, uint32_t existing,
                                std::string_view id, std::string_view namePath,
                                const ReaderIndex::OpHashes& hashes);
    // The known op the key stands for in this round, shifted there (kNone: none yet).
    uint32_t shiftedHere(uint32_t process, std::string_view id, std::string_view namePath) const;
    // Records that `op` ran under the key (id, namePath) in this round; returns it.
    uint32_t ranUnder(DumpDelta& delta, uint32_t process, std::string_view id,
                      std::string_view namePath, uint32_t op);
    // Whether, in this round, id `at` is taken by other than `op`: an op of another name path
    // whose own id it is, met in this round, or a known op that ran there shifted.
    bool takenInRound(uint32_t process, const std::string& at, std::string_view namePath,
                      uint32_t op) const;
    // Rounds are told apart by stamps: the (process, round) of the rows being read.
    void enterRound(uint32_t process, int64_t round);
    // Marks `op` and its ancestors as met in the current round.
    void markSeen(uint32_t op) {
        for (uint32_t o = op; o != kNone && ops_[o].seenIn != roundStamp_; o = ops_[o].parent)
            ops_[o].seenIn = roundStamp_;
    }
    std::map<std::pair<uint32_t, int64_t>, uint32_t> roundStamps_;
    uint32_t roundStamp_ = 0;  // 0: no round yet (no op is seen in it)
    uint32_t stampProcess_ = kNone;
    int64_t stampRound_ = -1;
    // New keys taken for a known op, with the stamp of the round they were (by process, id,
    // name path): the key's rows of that round go to the same op without asking again.
    struct RunElsewhere {
        uint32_t op = kNone, stamp = 0;
    };
    std::map<std::tuple<uint32_t, std::string, std::string>, RunElsewhere, std::less<>>
        runElsewhere_;
    struct LastRowOp {
        uint32_t op = kNone;  // kNone before the first row
        bool ownKey = false;  // the row before had the op's own key (process, id, name path)
        // Else that row's key.
        uint32_t process = kNone;
        std::string id, namePath;
    } lastRowOp_;
    // By op: the op whose rows came next the last time (kNone when unknown). Each round runs
    // the same ops in the same order, so this spares the lookup of almost every op change.
    std::vector<uint32_t> nextOp_;
    uint32_t lastStructureOp_ = kNone;  // the op a structure file described last
    struct InternCache {
        std::string text;
        uint32_t index = kNone;
    };
    // The string's number, remembered in `cache`: neighbouring rows mostly share dtype, format
    // and shape, so a row's look-up (and call) is spared then.
    uint32_t intern(DumpDelta& delta, std::string_view text, InternCache& cache) {
        return cache.index != kNone && sameText(cache.text, text) ? cache.index
                                                                  : internAnew(delta, text, cache);
    }
    uint32_t internAnew(DumpDelta& delta, std::string_view text, InternCache& cache);
    std::vector<std::string> rowScratch_;  // quoted fields of the row being parsed
    struct ParsedLine {
        format::StatRowView row;  // views into the read buffer
        bool ok = false;
        bool deferred = false;  // holds a quote: parsed in order instead
        std::string error;
    };
    // Parses lines 0 to lines - 1 (lineAt(i)) into parsedLines_ in pieces, taken in order by
    // the helper and by this thread, and calls add(i) for every line in order here as soon as
    // its piece is parsed: this thread parses a piece only when the next one to add is not
    // ready, so the helper parses while the rows are added.
    template <typename LineAt, typename Add>
    void parseAndAdd(size_t lines, const LineAt& lineAt, const Add& add);
    std::unique_ptr<char[]> readBuffer_;  // the bytes of the current read
    size_t readBufferSize_ = 0;
    std::vector<size_t> lineStarts_;       // of the lines of the current read, and the end
    std::vector<ParsedLine> parsedLines_;  // kept between reads: no allocation per line
    HelperThread parseHelper_;             // parses beside this thread, read after read

    std::string root_;
    ReaderIndex index_;
    std::vector<OpState> ops_;
    InternCache lastDtype_, lastFormat_, lastShape_;
    uint32_t sourceCount_ = 0;
    std::map<std::string, CsvFile> csvFiles_;
    std::map<std::string, FileStamp> structureFiles_;
    std::map<std::string, RowOrderReader> rowOrderFiles_;  // by process key
    // By pid, of the processes that ended (probe_status.json): whether they wrote every row.
    std::map<int64_t, bool> endedWritingAll_;
    std::set<std::string> processesSaidEmpty_;  // sayProcessesWithoutRows, by process key
    FileStamp statusStamp_;
    bool hasStatusFile_ = false;
    std::optional<format::DumpState> state_;        // from probe_status.json; none when unknown
    std::optional<format::DumpStatus> lastStatus_;  // as read last, vanished processes settled
    bool finished_ = false;
    bool vanished_ = false;             // the folder was deleted (said once)
    std::string unreachableStatus_;     // why probe_status.json cannot be reached (said once)
    std::set<std::string> unreadSaid_;  // what listRoundFiles found it could not read

    // Statistics from tensor files (setStatisticsFromTensorFiles).
    struct AwaitingStatistics {
        uint32_t row;       // the index's row number
        std::string path;   // its tensor file, in this dump (tensorPathInDump)
        std::string shape;  // as the row says it ("1x64"); the file must hold as many elements
        // Begun in an earlier poll whose budget it outgrew: goes on where it stopped.
        std::unique_ptr<TensorFileStatistics> begun;
    };
    // Computes statistics of awaiting rows within `budget` bytes of tensor files (a piece at
    // least); a file bigger than what is left goes on at the next poll.
    void pollStatistics(DumpDelta& delta, uint64_t budget);
    bool statisticsFromFiles_ = false;
    uint64_t rowsRead_ = 0;  // rows handed out in deltas before this poll's
    std::deque<AwaitingStatistics> awaitingStatistics_;
    uint32_t statisticsUnread_ = 0;  // tensor files that could not be read for them
};

}  // namespace probe::analysis
