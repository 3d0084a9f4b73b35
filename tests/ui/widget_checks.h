// Helpers of the widget tests: waiting in the event loop, counting rendered pixels, running
// the probe-studio executable without a display.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <functional>
#include <ostream>

#include <QColor>
#include <QImage>
#include <QProcess>
#include <QStringList>
#include <QTest>

// Readable QStrings in GoogleTest's messages.
inline void PrintTo(const QString& text, std::ostream* out) {
    *out << '"' << text.toStdString() << '"';
}

namespace probe::test {

inline bool waitFor(const std::function<bool()>& condition, int ms = 20000) {
    return QTest::qWaitFor(condition, ms);
}

// Pixels of `image` for which `match` holds.
inline int countPixels(const QImage& image, const std::function<bool(QColor)>& match) {
    int n = 0;
    const QImage rgb = image.convertToFormat(QImage::Format_RGB32);
    for (int y = 0; y < rgb.height(); ++y)
        for (int x = 0; x < rgb.width(); ++x)
            if (match(QColor(rgb.pixel(x, y)))) ++n;
    return n;
}

#ifdef PROBE_STUDIO
struct StudioRun {
    int exitCode;
    QString out, err;
};

// Runs probe-studio as a user would from a terminal without a display.
inline StudioRun runStudio(const QStringList& arguments, int timeoutMs = 120000) {
    QProcess process;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove(QStringLiteral("DISPLAY"));  // --screenshot must work without a display
    env.remove(QStringLiteral("QT_QPA_PLATFORM"));
    process.setProcessEnvironment(env);
    process.start(QStringLiteral(PROBE_STUDIO), arguments);
    if (!process.waitForFinished(timeoutMs)) {
        process.kill();
        process.waitForFinished(5000);
        return {-1, {}, QStringLiteral("timed out")};
    }
    return {process.exitCode(), QString::fromLocal8Bit(process.readAllStandardOutput()),
            QString::fromLocal8Bit(process.readAllStandardError())};
}
#endif

}  // namespace probe::test
