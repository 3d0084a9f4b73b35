// SPDX-License-Identifier: GPL-3.0-or-later
#include "dump_directory.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "probe/format/file_util.h"

namespace probe::runtime {
namespace {

constexpr size_t kMaxCachedFolders = 64;
constexpr int kFolderFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

// Creates a hidden file beside `name` in `dirFd`, unique per process (`pid`) and call,
// exclusively (so that a name planted there is never used), open for writing with
// `extraFlags`; its name into `temporary`. -1 with errno on a failure.
int createTemporary(int dirFd, const std::string& name, int pid, int extraFlags,
                    std::string* temporary) {
    static std::atomic<uint64_t> counter{0};
    *temporary = "." + name + "." + std::to_string(pid) + "." +
                 std::to_string(counter.fetch_add(1)) + ".tmp";
    return ::openat(dirFd, temporary->c_str(),
                    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | extraFlags, 0644);
}

int writeAll(int fd, const void* data, uint64_t size) {
    const auto* p = static_cast<const char*>(data);
    while (size > 0) {
        const size_t chunk = size > (1u << 30) ? (1u << 30) : static_cast<size_t>(size);
        const ssize_t n = ::write(fd, p, chunk);
        if (n < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        p += n;
        size -= static_cast<uint64_t>(n);
    }
    return 0;
}

// `first` then `second`, in one system call when the kernel takes them whole (writev).
int writeBoth(int fd, std::string_view first, std::string_view second) {
    iovec parts[2] = {{const_cast<char*>(first.data()), first.size()},
                      {const_cast<char*>(second.data()), second.size()}};
    ssize_t n;
    do {
        n = ::writev(fd, parts, 2);
    } while (n < 0 && errno == EINTR);
    if (n < 0) return errno;
    const auto written = static_cast<size_t>(n);
    if (written >= first.size() + second.size()) return 0;
    if (written < first.size()) {
        if (int error = writeAll(fd, first.data() + written, first.size() - written)) return error;
        return writeAll(fd, second.data(), second.size());
    }
    return writeAll(fd, second.data() + (written - first.size()),
                    second.size() - (written - first.size()));
}

// Splits "a/b/c" into "a/b" and "c".
std::pair<std::string, std::string> splitLast(const std::string& path) {
    const size_t slash = path.rfind('/');
    if (slash == std::string::npos) return {"", path};
    return {path.substr(0, slash), path.substr(slash + 1)};
}

bool isPlainName(const std::string& name) {
    return !name.empty() && name != "." && name != "..";
}

}  // namespace

DumpDirectory::~DumpDirectory() {
    close();
}

int DumpDirectory::open(const std::string& root) {
    close();
    const auto [parent, name] = splitLast(root);
    if (!isPlainName(name)) return EINVAL;
    if (int error = format::makeDirectories(parent.empty() ? "/" : parent)) return error;
    if (::mkdir(root.c_str(), 0755) != 0 && errno != EEXIST) return errno;
    rootFd_ = ::open(root.c_str(), kFolderFlags);
    if (rootFd_ < 0) {
        const int error = errno;
        struct stat st {};
        return ::lstat(root.c_str(), &st) == 0 && S_ISLNK(st.st_mode) ? ELOOP : error;
    }
    if (::faccessat(rootFd_, ".", W_OK, 0) != 0) {
        const int error = errno;
        close();
        return error;
    }
    root_ = root;
    pid_ = ::getpid();  // a forked child's writer opens its own (Runtime::afterForkInChild)
    return 0;
}

void DumpDirectory::close() {
    for (auto& [path, folder] : folders_) ::close(folder.fd);
    folders_.clear();
    if (rootFd_ >= 0) ::close(rootFd_);
    rootFd_ = -1;
}

std::optional<std::string> DumpDirectory::relative(const std::string& path) const {
    if (root_.empty() || path.size() <= root_.size() + 1 ||
        path.compare(0, root_.size(), root_) != 0 || path[root_.size()] != '/')
        return std::nullopt;
    std::string rest = path.substr(root_.size() + 1);
    for (size_t start = 0; start <= rest.size();) {
        const size_t end = std::min(rest.find('/', start), rest.size());
        if (!isPlainName(rest.substr(start, end - start))) return std::nullopt;
        start = end + 1;
    }
    return rest;
}

std::optional<DumpDirectory::Refusal> DumpDirectory::folder(const std::string& relativeDir, int* fd,
                                                            bool* made) {
    if (made) *made = false;
    if (rootFd_ < 0) return Refusal{EBADF, relativeDir};
    if (relativeDir.empty()) {
        *fd = rootFd_;
        return std::nullopt;
    }
    if (auto it = folders_.find(relativeDir); it != folders_.end()) {
        it->second.lastUse = ++useClock_;
        *fd = it->second.fd;
        return std::nullopt;
    }
    // From the nearest folder already open, one name at a time.
    std::string done = relativeDir;
    int current = rootFd_;
    while (true) {
        const size_t slash = done.rfind('/');
        if (slash == std::string::npos) {
            done.clear();
            break;
        }
        done.resize(slash);
        if (auto it = folders_.find(done); it != folders_.end()) {
            it->second.lastUse = ++useClock_;  // in use: not the one to close next
            current = it->second.fd;
            break;
        }
    }
    size_t start = done.empty() ? 0 : done.size() + 1;
    while (start < relativeDir.size() + 1) {
        const size_t end = std::min(relativeDir.find('/', start), relativeDir.size());
        const std::string name = relativeDir.substr(start, end - start);
        const std::string here = relativeDir.substr(0, end);
        if (!isPlainName(name)) return Refusal{EINVAL, here};
        // Made first, then opened: a folder not yet open is nearly always a new round's, and
        // mkdir never follows a link either (EEXIST for one; O_NOFOLLOW below refuses it).
        const bool madeHere = ::mkdirat(current, name.c_str(), 0755) == 0;
        if (!madeHere && errno != EEXIST) return Refusal{errno, here};
        const int next = ::openat(current, name.c_str(), kFolderFlags);
        if (next < 0) {
            // O_NOFOLLOW with O_DIRECTORY says ENOTDIR for a link: tell a link from a file.
            const int error = errno;
            struct stat st {};
            const bool link = ::fstatat(current, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                              S_ISLNK(st.st_mode);
            return Refusal{link ? ELOOP : error, here};
        }
        if (folders_.size() >= kMaxCachedFolders) {
            // The least recently used, never the folder this walk stands in.
            auto oldest = folders_.end();
            for (auto i = folders_.begin(); i != folders_.end(); ++i)
                if (i->second.fd != current &&
                    (oldest == folders_.end() || i->second.lastUse < oldest->second.lastUse))
                    oldest = i;
            if (oldest != folders_.end()) {
                ::close(oldest->second.fd);
                folders_.erase(oldest);
            }
        }
        folders_[here] = CachedFolder{next, ++useClock_};
        current = next;
        start = end + 1;
        if (made && start >= relativeDir.size() + 1) *made = madeHere;
    }
    *fd = current;
    return std::nullopt;
}

std::optional<DumpDirectory::Refusal> DumpDirectory::writeFile(const std::string& relativePath,
                                                               std::string_view head,
                                                               const void* data, uint64_t size,
                                                               int64_t* previousSize) {
    const auto [dir, name] = splitLast(relativePath);
    if (!isPlainName(name)) return Refusal{EINVAL, relativePath};
    int dirFd = -1;
    if (auto refused = folder(dir, &dirFd, nullptr)) return refused;
    // Only a caller that wants the size replaced pays for looking (a directory in the way is
    // refused either way: renaming a file over it fails with EISDIR).
    if (previousSize) {
        struct stat st {};
        *previousSize = -1;
        if (::fstatat(dirFd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
            if (S_ISDIR(st.st_mode)) return Refusal{EISDIR, relativePath};
            if (S_ISREG(st.st_mode)) *previousSize = static_cast<int64_t>(st.st_size);
        }
    }
    std::string temporary;
    const int fd = createTemporary(dirFd, name, pid_, 0, &temporary);
    if (fd < 0) return Refusal{errno, relativePath};
    int error = writeBoth(fd, head, std::string_view(static_cast<const char*>(data), size));
    if (::close(fd) != 0 && !error) error = errno;
    // Renaming replaces whatever has the name, a link included: it is never followed.
    if (!error && ::renameat(dirFd, temporary.c_str(), dirFd, name.c_str()) != 0) error = errno;
    if (error) {
        ::unlinkat(dirFd, temporary.c_str(), 0);
        return Refusal{error, relativePath};
    }
    return std::nullopt;
}

std::optional<DumpDirectory::Refusal> DumpDirectory::openForAppend(const std::string& relativePath,
                                                                   std::string_view header,
                                                                   std::string_view firstRows,
                                                                   int* fd, bool* created) {
    const auto [dir, name] = splitLast(relativePath);
    if (!isPlainName(name)) return Refusal{EINVAL, relativePath};
    int dirFd = -1;
    bool folderMade = false;
    if (auto refused = folder(dir, &dirFd, &folderMade)) return refused;
    *created = false;
    struct stat st {};
    // A folder this call made is empty: nothing there to look at (a new round's statistic.csv).
    if (folderMade || ::fstatat(dirFd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (!folderMade && errno != ENOENT) return Refusal{errno, relativePath};
        // The header appears with the file: a reader never sees a file without it. The file is
        // made under a temporary name with its header and first rows, renamed into place, and
        // its descriptor kept: a new round's statistic.csv costs four system calls and the
        // rename (they cost a few microseconds each on a virtual machine). Made exclusively by
        // us, it is nobody else's file; a name planted meanwhile is replaced, never followed.
        std::string temporary;
        const int file = createTemporary(dirFd, name, pid_, O_APPEND, &temporary);
        if (file < 0) return Refusal{errno, relativePath};
        int error = writeBoth(file, header, firstRows);
        if (!error && ::renameat(dirFd, temporary.c_str(), dirFd, name.c_str()) != 0) error = errno;
        if (error) {
            ::close(file);
            ::unlinkat(dirFd, temporary.c_str(), 0);
            return Refusal{error, relativePath};
        }
        *created = true;
        *fd = file;
        return std::nullopt;
    }
    if (S_ISLNK(st.st_mode)) return Refusal{ELOOP, relativePath};
    if (!S_ISREG(st.st_mode)) return Refusal{EISDIR, relativePath};
    const int file = ::openat(dirFd, name.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    if (file < 0) return Refusal{errno, relativePath};
    // A file with another name elsewhere (a hard link planted here) is not ours to grow.
    if (::fstat(file, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
        ::close(file);
        return Refusal{EMLINK, relativePath};
    }
    *fd = file;
    return std::nullopt;
}

std::string describeRefusal(const DumpDirectory::Refusal& refusal) {
    switch (refusal.error) {
        case ELOOP:
            return refusal.where +
                   " is a symbolic link (put there by someone else?): not followed, the probe "
                   "never writes outside its dump; what belongs there is not written";
        case ENOTDIR:
        case EISDIR:
            return refusal.where +
                   " is not what the dump has there (a file where a folder belongs, or the "
                   "reverse): left alone; what belongs there is not written";
        case EMLINK:
            return refusal.where +
                   " has another name elsewhere (a hard link): not written to, so that the file "
                   "it shares its data with stays as it is";
        case EINVAL:
            return refusal.where + " is not a path inside the dump: not written";
    }
    return refusal.where + ": " + std::strerror(refusal.error);
}

}  // namespace probe::runtime
