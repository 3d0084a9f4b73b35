// main() of the Qt test suites: GoogleTest inside a Qt application on the offscreen platform
// (no display needed). PROBE_TEST_WIDGETS selects QApplication; the data layer needs only
// QGuiApplication, which keeps widgets out of its tests.
// SPDX-License-Identifier: GPL-3.0-or-later
#include <QTemporaryDir>
#include <gtest/gtest.h>

#ifdef PROBE_TEST_WIDGETS
#include <QApplication>
using TestApplication = QApplication;
#else
#include <QGuiApplication>
using TestApplication = QGuiApplication;
#endif

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    // Settings (recent sessions) and application data (launches' output folders) of this run
    // only, for it and the probe-studio processes it starts: never the user's.
    QTemporaryDir home;
    qputenv("XDG_CONFIG_HOME", (home.path() + "/config").toLocal8Bit());
    qputenv("XDG_DATA_HOME", (home.path() + "/data").toLocal8Bit());
    TestApplication app(argc, argv);
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
