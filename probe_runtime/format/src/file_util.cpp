// SPDX-License-Identifier: GPL-3.0-or-later
#include "probe/format/file_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace probe::format {
namespace {

int writeAll(int fd, const void* data, uint64_t size) {
    const auto* p = static_cast<const char*>(data);
    while (size > 0) {
        const size_t chunk = size > (1u << 30) ? (1u << 30) : static_cast<size_t>(size);
        ssize_t n = ::write(fd, p, chunk);
        if (n < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        p += n;
        size -= static_cast<uint64_t>(n);
    }
    return 0;
}

std::string temporaryNameFor(const std::string& path) {
    static std::atomic<uint64_t> counter{0};
    const size_t slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
    const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
    // Hidden, and unique per process and call, so concurrent writers never share a temporary.
    return dir + "." + base + "." + std::to_string(::getpid()) + "." +
           std::to_string(counter.fetch_add(1)) + ".tmp";
}

// Puts `temporary` in place of `path` atomically. A regular file already there is exchanged
// with it (then removed) rather than renamed over: ext4 flushes the data of a file renamed over
// another (its replace-via-rename heuristic, auto_da_alloc), which made each rewrite of a step's
// dump.json cost the model's thread about 0.15 ms more than the exchange. Anything else there (a
// symbolic link, nothing) is replaced by rename(2), which never follows a link; so is a file on a
// file system without RENAME_EXCHANGE.
int replaceWith(const std::string& temporary, const std::string& path) {
    struct stat existing;
    if (::lstat(path.c_str(), &existing) == 0 && S_ISREG(existing.st_mode) &&
        ::renameat2(AT_FDCWD, temporary.c_str(), AT_FDCWD, path.c_str(), RENAME_EXCHANGE) == 0) {
        ::unlink(temporary.c_str());  // now the old content
        return 0;
    }
    return ::rename(temporary.c_str(), path.c_str()) == 0 ? 0 : errno;
}

}  // namespace

int makeDirectories(const std::string& path, mode_t mode) {
    if (path.empty()) return 0;
    struct stat st;
    if (::stat(path.c_str(), &st) == 0) return S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
    std::string partial;
    partial.reserve(path.size());
    size_t pos = 0;
    while (pos != std::string::npos) {
        pos = path.find('/', pos + 1);
        partial = path.substr(0, pos);
        if (partial.empty()) continue;
        if (::mkdir(partial.c_str(), mode) != 0 && errno != EEXIST) return errno;
    }
    if (::stat(path.c_str(), &st) != 0) return errno;
    return S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
}

int writeFileAtomically(const std::string& path, std::string_view head, const void* data,
                        uint64_t size) {
    const std::string temporary = temporaryNameFor(path);
    int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return errno;
    int error = writeAll(fd, head.data(), head.size());
    if (!error && size) error = writeAll(fd, data, size);
    if (::close(fd) != 0 && !error) error = errno;
    if (!error) error = replaceWith(temporary, path);
    if (error) ::unlink(temporary.c_str());
    return error;
}

int writeFileAtomically(const std::string& path, std::string_view content) {
    return writeFileAtomically(path, content, nullptr, 0);
}

namespace {

// The path a write to `path` lands on: its links followed one by one (a dangling link's target
// is created, as the shell does), a relative link text taken from the link's folder.
std::string userFileTarget(const std::string& path) {
    std::string target = path;
    for (int hops = 0; hops < 40; ++hops) {
        struct stat st;
        if (::lstat(target.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return target;
        char text[PATH_MAX];
        const ssize_t n = ::readlink(target.c_str(), text, sizeof text - 1);
        if (n <= 0) return target;
        text[n] = '\0';
        const size_t slash = target.rfind('/');
        target = text[0] == '/' || slash == std::string::npos ? std::string(text)
                                                              : target.substr(0, slash + 1) + text;
    }
    return target;  // a loop: the write says ELOOP
}

bool isStandardOutput(const struct stat& st) {
    struct stat out;
    return ::fstat(STDOUT_FILENO, &out) == 0 && out.st_dev == st.st_dev && out.st_ino == st.st_ino;
}

int writeParts(int fd, std::string_view head, const void* data, uint64_t size) {
    int error = writeAll(fd, head.data(), head.size());
    if (!error && size) error = writeAll(fd, data, size);
    return error;
}

// Where a write to `path` goes when it is not made atomically beside a regular file: standard
// output, or the device or FIFO opened for writing (`ownsFd`). -1 with `error` when it is a
// regular file or nothing (then `target` is what to write), or cannot be written.
int streamFor(const std::string& path, std::string& target, bool& ownsFd, int& error) {
    std::fflush(stdout);  // what was printed before goes first
    ownsFd = false;
    error = 0;
    if (path == "-") return STDOUT_FILENO;
    target = userFileTarget(path);
    struct stat st;
    const bool exists = ::stat(target.c_str(), &st) == 0;
    if (exists && isStandardOutput(st)) return STDOUT_FILENO;
    if (!exists || S_ISREG(st.st_mode)) return -1;
    if (S_ISDIR(st.st_mode)) {
        error = EISDIR;
        return -1;
    }
    const int fd = ::open(target.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) error = errno;
    ownsFd = fd >= 0;
    return fd;
}

int finishStream(int fd, bool ownsFd, int error) {
    if (ownsFd && ::close(fd) != 0 && !error) error = errno;
    return error;
}

}  // namespace

int writeUserFile(const std::string& path, std::string_view head, const void* data, uint64_t size) {
    std::string target;
    bool ownsFd = false;
    int error = 0;
    const int fd = streamFor(path, target, ownsFd, error);
    if (fd >= 0) return finishStream(fd, ownsFd, writeParts(fd, head, data, size));
    return error ? error : writeFileAtomically(target, head, data, size);
}

int writeUserFile(const std::string& path, std::string_view content) {
    return writeUserFile(path, content, nullptr, 0);
}

std::string userFileTemporary(const std::string& path) {
    const std::string target = path == "-" ? std::string() : userFileTarget(path);
    struct stat st;
    const bool beside =
        !target.empty() && (::stat(target.c_str(), &st) != 0 || S_ISREG(st.st_mode));
    if (beside) return temporaryNameFor(target);
    const char* tmp = std::getenv("TMPDIR");
    return temporaryNameFor(std::string(tmp && *tmp ? tmp : "/tmp") + "/probe-output");
}

int moveIntoUserFile(const std::string& temporary, const std::string& path) {
    std::string target;
    bool ownsFd = false;
    int error = 0;
    const int fd = streamFor(path, target, ownsFd, error);
    if (fd < 0) {
        if (!error) error = replaceWith(temporary, target);
        if (error) ::unlink(temporary.c_str());
        return error;
    }
    const int in = ::open(temporary.c_str(), O_RDONLY | O_CLOEXEC);
    if (in < 0) error = errno;
    std::vector<char> buffer(in >= 0 ? 1 << 20 : 0);
    while (in >= 0 && !error) {
        const ssize_t n = ::read(in, buffer.data(), buffer.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            if (n < 0) error = errno;
            break;
        }
        error = writeAll(fd, buffer.data(), static_cast<uint64_t>(n));
    }
    if (in >= 0) ::close(in);
    ::unlink(temporary.c_str());
    return finishStream(fd, ownsFd, error);
}

int checkUserFileWritable(const std::string& path) {
    if (path == "-") return 0;
    const std::string target = userFileTarget(path);
    struct stat st;
    if (::stat(target.c_str(), &st) == 0) {
        if (S_ISDIR(st.st_mode)) return EISDIR;
        if (!S_ISREG(st.st_mode)) return ::access(target.c_str(), W_OK) == 0 ? 0 : errno;
    }
    const size_t slash = target.rfind('/');
    const std::string dir = slash == std::string::npos ? "."
                            : slash == 0               ? "/"
                                                       : target.substr(0, slash);
    if (::stat(dir.c_str(), &st) != 0) return errno;
    if (!S_ISDIR(st.st_mode)) return ENOTDIR;
    return ::access(dir.c_str(), W_OK) == 0 ? 0 : errno;
}

int64_t freeDiskBytes(const std::string& path) {
    struct statvfs vfs;
    if (::statvfs(path.c_str(), &vfs) != 0) return -1;
    return static_cast<int64_t>(vfs.f_bavail) * static_cast<int64_t>(vfs.f_frsize);
}

std::string absolutePath(const std::string& path) {
    if (!path.empty() && path[0] == '/') return path;
    char buffer[PATH_MAX];
    if (!::getcwd(buffer, sizeof buffer)) return path;
    std::string cwd(buffer);
    if (path.empty() || path == ".") return cwd;
    std::string rel = path;
    while (rel.rfind("./", 0) == 0) rel = rel.substr(2);
    return joinPath(cwd, rel);
}

std::string normalizedPath(const std::string& path) {
    const std::string absolute = absolutePath(path);
    std::vector<std::string_view> parts;
    std::string_view rest(absolute);
    while (!rest.empty()) {
        const size_t slash = rest.find('/');
        const std::string_view part = rest.substr(0, slash);
        rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
        if (part.empty() || part == ".") continue;
        if (part == "..") {
            if (!parts.empty()) parts.pop_back();
            continue;
        }
        parts.push_back(part);
    }
    std::string out;
    for (const auto part : parts) {
        out += '/';
        out += part;
    }
    return out.empty() ? "/" : out;
}

std::string resolvedPath(const std::string& path) {
    char* resolved = ::realpath(path.c_str(), nullptr);
    if (!resolved) return {};
    std::string out = resolved;
    std::free(resolved);
    return out;
}

std::string fileNameOf(std::string_view path) {
    return std::string(path.substr(path.rfind('/') + 1));  // npos + 1: from the start
}

std::string joinPath(std::string_view a, std::string_view b) {
    if (a.empty()) return std::string(b);
    std::string out(a);
    if (out.back() != '/') out += '/';
    out += b;
    return out;
}

namespace {

const char* kindOfMode(mode_t mode) {
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a named pipe (FIFO)";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a regular file";
}

std::string refusedKind(mode_t mode) {
    if (S_ISDIR(mode)) return "is a directory, not a file";
    return std::string("is ") + kindOfMode(mode) + ", not a regular file";
}

}  // namespace

int openRegularFile(const std::string& path, uint64_t maxBytes, uint64_t* size,
                    std::string* error) {
    auto fail = [&](std::string why) {
        if (error) *error = std::move(why);
        return -1;
    };
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return fail(std::strerror(errno));
    // Refused before opening: opening a FIFO waits for a writer, a device may do anything.
    if (!S_ISREG(st.st_mode)) return fail(refusedKind(st.st_mode));
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) return fail(std::strerror(errno));
    // And checked again on what was opened: the path may have been replaced in between.
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        return fail(refusedKind(st.st_mode));
    }
    const auto bytes = static_cast<uint64_t>(st.st_size);
    if (bytes > maxBytes) {
        ::close(fd);
        return fail("is " + std::to_string(bytes) + " bytes, more than the limit of " +
                    std::to_string(maxBytes));
    }
    if (size) *size = bytes;
    return fd;
}

std::optional<std::string> readRegularFile(const std::string& path, uint64_t maxBytes,
                                           std::string* error) {
    uint64_t size = 0;
    const int fd = openRegularFile(path, maxBytes, &size, error);
    if (fd < 0) return std::nullopt;
    // The file may grow while it is read: read at most one byte past the limit to notice.
    std::string text;
    text.resize(static_cast<size_t>(std::min<uint64_t>(size, maxBytes) + 1));
    size_t used = 0;
    while (true) {
        if (used == text.size()) {
            if (text.size() > maxBytes) break;
            text.resize(static_cast<size_t>(std::min<uint64_t>(maxBytes + 1, text.size() * 2)));
        }
        const ssize_t n = ::read(fd, text.data() + used, text.size() - used);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            const int saved = errno;
            ::close(fd);
            if (error) *error = std::strerror(saved);
            return std::nullopt;
        }
        if (n == 0) break;
        used += static_cast<size_t>(n);
    }
    ::close(fd);
    if (used > maxBytes) {
        if (error)
            *error =
                "grew past the limit of " + std::to_string(maxBytes) + " bytes while being read";
        return std::nullopt;
    }
    text.resize(used);
    return text;
}

std::optional<char> firstLineEnd(std::string_view start, bool whole) {
    const size_t end = start.find_first_of("\r\n");
    if (end == std::string_view::npos) return std::nullopt;
    if (start[end] == '\r' && end + 1 == start.size())
        return whole ? std::optional('\r') : std::nullopt;
    return start[end] == '\r' && start[end + 1] != '\n' ? '\r' : '\n';
}

std::string nonRegularKind(const std::string& path) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return {};
    return kindOfMode(st.st_mode);
}

std::string whatIsThere(const std::string& path) {
    struct stat st;
    if (::stat(path.c_str(), &st) == 0)
        return S_ISREG(st.st_mode) ? "is a regular file"
                                   : std::string("is ") + kindOfMode(st.st_mode);
    const int statError = errno;
    if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
        return std::string("is a symbolic link that cannot be followed (") +
               std::strerror(statError) + ")";
    return statError == ENOENT ? "does not exist"
                               : std::string("cannot be read: ") + std::strerror(statError);
}

bool isDirectory(const std::string& path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::optional<FileStamp> fileStamp(const std::string& path) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return std::nullopt;
    return FileStamp{static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
                     st.st_size, static_cast<uint64_t>(st.st_ino)};
}

std::vector<DirectoryEntry> listDirectoryEntries(const std::string& dir, std::string* error) {
    std::vector<DirectoryEntry> entries;
    if (error) error->clear();
    DIR* d = ::opendir(dir.c_str());
    if (!d) {
        if (error && errno != ENOENT && errno != ENOTDIR) *error = std::strerror(errno);
        return entries;
    }
    while (dirent* e = ::readdir(d)) {
        DirectoryEntry entry;
        entry.name = e->d_name;
        if (entry.name == "." || entry.name == "..") continue;
        switch (e->d_type) {
            case DT_DIR:
                entry.isDirectory = true;
                break;
            case DT_REG:
            case DT_FIFO:
            case DT_CHR:
            case DT_BLK:
            case DT_SOCK:
                break;
            default: {  // a link (followed, as stat does), or a file system that does not say
                entry.isLink = e->d_type == DT_LNK;
                struct stat st;
                if (::stat((dir + "/" + entry.name).c_str(), &st) != 0)
                    entry.unfollowed = true;
                else
                    entry.isDirectory = S_ISDIR(st.st_mode);
                if (e->d_type == DT_UNKNOWN && !entry.unfollowed) {
                    struct stat own;
                    entry.isLink = ::lstat((dir + "/" + entry.name).c_str(), &own) == 0 &&
                                   S_ISLNK(own.st_mode);
                }
            }
        }
        entries.push_back(std::move(entry));
    }
    ::closedir(d);
    std::sort(entries.begin(), entries.end(),
              [](const DirectoryEntry& a, const DirectoryEntry& b) { return a.name < b.name; });
    return entries;
}

std::vector<std::string> listDirectory(const std::string& dir, EntryKind kind, std::string* error) {
    std::vector<std::string> names;
    for (auto& entry : listDirectoryEntries(dir, error)) {
        const bool wanted = entry.unfollowed
                                ? kind == EntryKind::NotDirectories
                                : entry.isDirectory == (kind == EntryKind::Directories);
        if (wanted) names.push_back(std::move(entry.name));
    }
    return names;
}

bool fileExists(const std::string& path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0;
}

}  // namespace probe::format
