// SPDX-License-Identifier: GPL-3.0-or-later
#include "test_support.h"

#include <dirent.h>
#include <ftw.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace probe::test {
namespace {

int removeEntry(const char* path, const struct stat*, int, struct FTW*) {
    return ::remove(path);
}

void listInto(const std::string& root, const std::string& relative, std::vector<std::string>& out) {
    const std::string dir = relative.empty() ? root : root + "/" + relative;
    DIR* d = ::opendir(dir.c_str());
    if (!d) return;
    while (dirent* entry = ::readdir(d)) {
        const std::string name = entry->d_name;
        if (name == "." || name == "..") continue;
        const std::string rel = relative.empty() ? name : relative + "/" + name;
        struct stat st;
        if (::stat((root + "/" + rel).c_str(), &st) != 0) continue;
        if (S_ISDIR(st.st_mode))
            listInto(root, rel, out);
        else
            out.push_back(rel);
    }
    ::closedir(d);
}

}  // namespace

TempDir::TempDir(const std::string& tag) {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/" + tag + "-XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (!::mkdtemp(buffer.data())) throw std::runtime_error("mkdtemp failed for " + pattern);
    path_ = buffer.data();
}

TempDir::~TempDir() {
    if (std::getenv("PROBE_KEEP_TEST_DIRS")) return;
    ::nftw(path_.c_str(), removeEntry, 16, FTW_DEPTH | FTW_PHYS);
}

std::vector<std::string> listFiles(const std::string& root) {
    std::vector<std::string> out;
    listInto(root, "", out);
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<std::string> filesNamed(const std::string& root, const std::string& name) {
    std::vector<std::string> out;
    for (const std::string& relative : listFiles(root))
        if (relative == name ||
            (relative.size() > name.size() && relative.compare(relative.size() - name.size() - 1,
                                                               std::string::npos, "/" + name) == 0))
            out.push_back(root + "/" + relative);
    return out;
}

std::vector<std::string> listSubdirectories(const std::string& dir) {
    std::vector<std::string> out;
    DIR* d = ::opendir(dir.c_str());
    if (!d) return out;
    while (dirent* entry = ::readdir(d)) {
        const std::string name = entry->d_name;
        if (name == "." || name == "..") continue;
        struct stat st;
        if (::stat((dir + "/" + name).c_str(), &st) == 0 && S_ISDIR(st.st_mode))
            out.push_back(name);
    }
    ::closedir(d);
    std::sort(out.begin(), out.end());
    return out;
}

std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

void writeFile(const std::string& path, const std::string& content) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write " + path);
    out << content;
}

void replaceFile(const std::string& path, const std::string& content) {
    const std::string temporary = path + ".new";
    writeFile(temporary, content);
    if (::rename(temporary.c_str(), path.c_str()) != 0)
        throw std::runtime_error("cannot rename onto " + path);
}

std::vector<std::string> splitLines(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) lines.push_back(line);
    return lines;
}

bool exists(const std::string& path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0;
}

bool waitUntil(const std::function<bool()>& condition, int timeoutMs) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
    while (!condition()) {
        if (std::chrono::steady_clock::now() >= deadline) return condition();
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
}

std::string nested(size_t depth, const std::string& open, const std::string& close,
                   const std::string& inner) {
    std::string text;
    text.reserve(depth * (open.size() + close.size()) + inner.size());
    for (size_t i = 0; i < depth; ++i) text += open;
    text += inner;
    for (size_t i = 0; i < depth; ++i) text += close;
    return text;
}

long maxResidentKb() {
    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss;
}

char processState(long pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string text;
    std::getline(in, text);
    const size_t afterName = text.rfind(')');  // the name may hold spaces and parentheses
    if (text.empty() || afterName == std::string::npos || afterName + 2 >= text.size()) return 0;
    return text[afterName + 2];
}

bool processHasEnded(long pid) {
    const char state = processState(pid);
    return state == 0 || state == 'Z' || state == 'X';
}

}  // namespace probe::test
