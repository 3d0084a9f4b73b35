// SPDX-License-Identifier: GPL-3.0-or-later
#include "probe/format/python_command.h"

#include "probe/format/file_util.h"

namespace probe::format {

namespace {

// "train.py" -> "train"; a name that is only an extension (".bashrc") stays.
std::string_view withoutExtension(std::string_view name) {
    const size_t dot = name.rfind('.');
    return dot == std::string_view::npos || dot == 0 ? name : name.substr(0, dot);
}

}  // namespace

bool isPythonName(std::string_view name) {
    constexpr std::string_view prefix = "python";
    if (name.substr(0, prefix.size()) != prefix) return false;
    for (size_t i = prefix.size(); i < name.size(); ++i)
        if ((name[i] < '0' || name[i] > '9') && name[i] != '.') return false;
    return true;
}

PythonTarget pythonTarget(const std::vector<std::string>& command) {
    using Kind = PythonTarget::Kind;
    for (size_t i = 1; i < command.size(); ++i) {
        const std::string& a = command[i];
        if (a == "-") return {Kind::StandardInput, {}};
        if (a.empty() || a[0] != '-') return {Kind::Script, a};
        if (a == "--check-hash-based-pycs") {
            ++i;  // the option's value
            continue;
        }
        if (a[1] == '-') continue;  // --version, --help, ...
        // One or more flags ("-uB"); -c, -m, -W and -X take the rest of the word ("-Wd",
        // "-mpip") or the next one.
        for (size_t j = 1; j < a.size(); ++j) {
            const char flag = a[j];
            if (flag != 'c' && flag != 'm' && flag != 'W' && flag != 'X') continue;
            std::string value = a.substr(j + 1);
            if (value.empty() && i + 1 < command.size()) value = command[++i];
            if (flag == 'c') return {Kind::Code, {}};
            if (flag == 'm') return {Kind::Module, value};
            break;
        }
    }
    return {};
}

std::string runName(const std::vector<std::string>& command) {
    if (command.empty()) return {};
    const std::string program = fileNameOf(command[0]);
    if (isPythonName(program)) {
        const PythonTarget target = pythonTarget(command);
        if (target.kind == PythonTarget::Kind::Module && !target.name.empty()) return target.name;
        if (target.kind == PythonTarget::Kind::Script) {
            const std::string script = fileNameOf(target.name);
            const std::string_view name = withoutExtension(script);
            if (!name.empty()) return std::string(name);
        }
    }
    return std::string(withoutExtension(program));
}

}  // namespace probe::format
