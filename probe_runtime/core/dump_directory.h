// The dump's folder as the writer sees it: every folder is entered and every file created
// relative to descriptors of folders the writer opened itself, one name at a time and never
// following a link (O_NOFOLLOW), so that nothing planted in the dump (a link named like a
// round folder or a statistic.csv, a hard link to a file elsewhere) leads the writer out of it.
// What would is refused, and the writer reports it. Used by the writer thread only.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace probe::runtime {

class DumpDirectory {
public:
    DumpDirectory() = default;
    ~DumpDirectory();
    DumpDirectory(const DumpDirectory&) = delete;
    DumpDirectory& operator=(const DumpDirectory&) = delete;

    // Opens `root`, making it (and its parents) when missing. Its parents are the user's to
    // choose and may be links; the root itself must be a folder, not a link. 0 or an errno value.
    int open(const std::string& root);
    void close();
    bool isOpen() const { return rootFd_ >= 0; }
    const std::string& root() const { return root_; }

    // `path` relative to the root ("data/123/0/statistic.csv"), or nullopt when it does not lie
    // below it (or climbs out of it with "..").
    std::optional<std::string> relative(const std::string& path) const;

    struct Refusal {
        int error = 0;      // errno value; ELOOP / ENOTDIR / EMLINK for something planted
        std::string where;  // the relative path where it was found
    };

    // Writes the file at `relativePath` whole: under a temporary name in its folder, then
    // renamed over the name. `previousSize` (when not null) receives the size of the file
    // replaced (-1: none); without it the name is not looked at first (a tensor: one system
    // call fewer).
    std::optional<Refusal> writeFile(const std::string& relativePath, std::string_view head,
                                     const void* data, uint64_t size, int64_t* previousSize);
    // A descriptor to append to the file at `relativePath`. When missing the file is created
    // with `header` and `firstRows` in it (`created` says so), else the caller appends
    // `firstRows` itself. The caller owns the descriptor.
    std::optional<Refusal> openForAppend(const std::string& relativePath, std::string_view header,
                                         std::string_view firstRows, int* fd, bool* created);

private:
    // The folder `relativeDir` ("" = the root), made as needed; the descriptor stays cached.
    // `made` (if given): the folder itself was made by this call, so is empty.
    std::optional<Refusal> folder(const std::string& relativeDir, int* fd, bool* made);

    int rootFd_ = -1;
    int pid_ = 0;  // this process's, for temporary names (getpid() is a system call)
    std::string root_;
    struct CachedFolder {
        int fd = -1;
        uint64_t lastUse = 0;
    };
    std::unordered_map<std::string, CachedFolder> folders_;
    uint64_t useClock_ = 0;
};

// For people: what a refusal means.
std::string describeRefusal(const DumpDirectory::Refusal& refusal);

}  // namespace probe::runtime
