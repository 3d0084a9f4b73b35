// What a Python command line runs, read as the interpreter reads its arguments: probe run checks
// the script exists, the app names a launch's folder after it.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "probe/format/python_command.h"

namespace probe::format {
namespace {

using Kind = PythonTarget::Kind;

TEST(PythonCommand, TellsTheScriptModuleOrCodeItRuns) {
    struct Case {
        std::vector<std::string> command;
        Kind kind;
        std::string name;
    };
    const std::vector<Case> cases = {
        {{"python3", "train.py", "-m", "x"}, Kind::Script, "train.py"},
        {{"python3", "-u", "-B", "t.py"}, Kind::Script, "t.py"},
        {{"python3", "-uB", "t.py"}, Kind::Script, "t.py"},
        {{"python3", "-W", "ignore", "-X", "dev", "t.py"}, Kind::Script, "t.py"},
        {{"python3", "-Wd", "-Xdev", "t.py"}, Kind::Script, "t.py"},
        {{"python3", "-Wignore::DeprecationWarning:mod", "t.py"}, Kind::Script, "t.py"},
        {{"python3", "--check-hash-based-pycs", "always", "t.py"}, Kind::Script, "t.py"},
        {{"python3", "-m", "pkg.mod", "a.py"}, Kind::Module, "pkg.mod"},
        {{"python3", "-mpip", "install"}, Kind::Module, "pip"},
        {{"python3", "-Bm", "pip"}, Kind::Module, "pip"},
        {{"python3", "-c", "import x", "a.py"}, Kind::Code, ""},
        {{"python3", "-uc", "import x"}, Kind::Code, ""},
        {{"python3", "-"}, Kind::StandardInput, ""},
        {{"python3", "-u"}, Kind::None, ""},
        {{"python3"}, Kind::None, ""},
    };
    for (const auto& c : cases) {
        const PythonTarget target = pythonTarget(c.command);
        EXPECT_EQ(target.kind, c.kind) << c.command.back();
        EXPECT_EQ(target.name, c.name) << c.command.back();
    }
}

TEST(PythonCommand, NamesARunAfterWhatItRuns) {
    EXPECT_EQ(runName({"/usr/bin/python3", "-u", "/x/train.py", "--epochs", "2"}), "train");
    EXPECT_EQ(runName({"python3.11", "-m", "torch.distributed.run", "t.py"}),
              "torch.distributed.run");
    EXPECT_EQ(runName({"/x/train.py"}), "train");
    EXPECT_EQ(runName({"./engine", "--rounds", "3"}), "engine");
    EXPECT_EQ(runName({"python3", "-c", "print(1)"}), "python3");
    EXPECT_EQ(runName({"python3"}), "python3");
    EXPECT_EQ(runName({"pythonista", "t.py"}), "pythonista");  // not an interpreter's name
    EXPECT_EQ(runName({}), "");
    EXPECT_TRUE(isPythonName("python3.11"));
    EXPECT_FALSE(isPythonName("python3-config"));
}

}  // namespace
}  // namespace probe::format
