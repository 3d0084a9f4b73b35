// Small POSIX file helpers shared by the writer and the readers. None throws.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace probe::format {

// What ends the lines of a text whose first bytes are `start`: '\r' when a CR alone ends its
// first line (a spreadsheet saving as the old Mac OS did), '\n' when LF or CR LF does; nullopt
// while `start` cannot tell (no line end in it, or a CR as its last byte: a CR LF's, maybe,
// unless `whole` says nothing will follow `start`).
std::optional<char> firstLineEnd(std::string_view start, bool whole = false);

// mkdir -p; the directories made get `mode` (less the umask). Returns 0 or an errno value.
int makeDirectories(const std::string& path, mode_t mode = 0755);

// Writes `parts` under a temporary name in the same directory, then renames over `path`, so a
// reader never sees half a file. Returns 0 or an errno value (the temporary is removed).
int writeFileAtomically(const std::string& path, std::string_view content);
int writeFileAtomically(const std::string& path, std::string_view head, const void* data,
                        uint64_t size);

// Writes a file the user named (an export, a result file) as a shell's `>` would, yet whole or
// not at all where it can: a symbolic link is followed (its target written, the link kept); a
// device, FIFO or socket is written in place (a FIFO's reader gets the bytes, /dev/full says
// ENOSPC); the file standard output goes to (/dev/stdout) is written through standard output,
// and so is "-"; a regular file, or nothing, is written by writeFileAtomically beside it.
// Returns 0 or an errno value (EISDIR for a directory). writeFileAtomically renames over a link,
// right for the files the probe owns, wrong for a name the user gave.
int writeUserFile(const std::string& path, std::string_view content);
int writeUserFile(const std::string& path, std::string_view head, const void* data, uint64_t size);
// The same for a file made by a library that writes to a name of its own (an .xlsx): make it at
// userFileTemporary(path), then moveIntoUserFile puts it in place (renamed over a regular file,
// copied into a device or FIFO) and removes the temporary. Returns 0 or an errno value.
std::string userFileTemporary(const std::string& path);
int moveIntoUserFile(const std::string& temporary, const std::string& path);
// Whether writeUserFile(path) can be expected to succeed, asked before long work that ends in
// writing it: 0, or why not (EISDIR, ENOENT for a missing folder, EACCES).
int checkUserFileWritable(const std::string& path);

// Free bytes for unprivileged users on the file system holding `path`; -1 when unknown.
int64_t freeDiskBytes(const std::string& path);

// The absolute form of `path` (relative to the current directory), without resolving links.
std::string absolutePath(const std::string& path);

// absolutePath with "." and ".." taken by their text, as a shell's cd does, and slashes doubled
// or at the end dropped: "/a/b/../c//" is "/a/c". Links are not resolved.
std::string normalizedPath(const std::string& path);

// `path` with every link and "." / ".." resolved (realpath); empty when it cannot be (it does not
// exist, a loop, no permission).
std::string resolvedPath(const std::string& path);

std::string joinPath(std::string_view a, std::string_view b);
// The last component of `path` ("train.py" of "/w/train.py"; `path` itself without a '/').
std::string fileNameOf(std::string_view path);

bool isDirectory(const std::string& path);

// Opens `path` for reading only when it is a regular file (links followed) of at most
// `maxBytes`: a FIFO, a device, a socket or a directory is refused with what it is, before it is
// opened and again after (O_NONBLOCK, so a FIFO swapped in between cannot block). Returns the
// descriptor (O_CLOEXEC) and sets `size`, or -1 with the reason in `error` ("is a named pipe
// (FIFO), not a regular file", "is 6442450944 bytes, more than the limit of 1048576").
int openRegularFile(const std::string& path, uint64_t maxBytes, uint64_t* size, std::string* error);
// A whole regular file of at most `maxBytes`, read through openRegularFile.
std::optional<std::string> readRegularFile(const std::string& path, uint64_t maxBytes,
                                           std::string* error);
// What kind of thing is at `path` when it is not a regular file ("a directory", "a named pipe
// (FIFO)", ...); "" for a regular file or nothing at all.
std::string nonRegularKind(const std::string& path);
// What is at `path`, links followed, to put in a message: "does not exist", "is a regular file",
// "is a directory", "is a named pipe (FIFO)", "is a symbolic link that cannot be followed (Too
// many levels of symbolic links)".
std::string whatIsThere(const std::string& path);

// What says a file changed: its modification time, size and inode (replacing a file by a
// rename gives it a new inode).
struct FileStamp {
    int64_t mtimeNs = -1;
    int64_t size = -1;
    uint64_t inode = 0;
    bool operator==(const FileStamp& o) const {
        return mtimeNs == o.mtimeNs && size == o.size && inode == o.inode;
    }
    bool operator!=(const FileStamp& o) const { return !(*this == o); }
};
// nullopt when the file does not exist (or cannot be stat'ed).
std::optional<FileStamp> fileStamp(const std::string& path);

// An entry of a directory, links followed: `unfollowed` when it is a link that cannot be (a
// loop, a dangling link; neither a directory nor not one).
struct DirectoryEntry {
    std::string name;
    bool isDirectory = false;
    bool isLink = false;
    bool unfollowed = false;
};
// Every entry of `dir` but . and .., sorted by name; empty when it cannot be read, and then
// `error` (when given; cleared first) says why, unless it is gone or no folder (a folder the user
// may not read was skipped without a word). What most entries are comes with their names (no stat
// each: a listing of a hundred thousand round folders was a system call each, at every poll);
// links, and entries of a file system that does not say, are stat'ed.
std::vector<DirectoryEntry> listDirectoryEntries(const std::string& dir,
                                                 std::string* error = nullptr);

// Files: anything but a directory, links followed. NotDirectories: the same, and names whose link
// cannot be followed (a loop, a dangling link).
enum class EntryKind { Directories, Files, NotDirectories };
// The names in `dir` of that kind, sorted; empty when it cannot be read (`error` as above).
std::vector<std::string> listDirectory(const std::string& dir, EntryKind kind,
                                       std::string* error = nullptr);
bool fileExists(const std::string& path);

}  // namespace probe::format
