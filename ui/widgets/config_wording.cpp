// SPDX-License-Identifier: GPL-3.0-or-later
#include "config_wording.h"

#include <QObject>
#include <QStringList>

#include "page_style.h"

namespace probe::widgets {

QString describeDumpedOps(const format::OpConfig& config) {
    QString what;
    if (config.ids.empty() && config.opNames.empty()) {
        what = config.saveChild ? QObject::tr("dumps every op")
                                : QObject::tr("dumps every layer-level op");
    } else {
        // Which ones, the first few: "1 ticked op" said nothing of which (or of save_child).
        const auto some = [](const std::vector<std::string>& items) {
            constexpr size_t kNamed = 3;
            QStringList named;
            for (size_t i = 0; i < items.size() && i < kNamed; ++i)
                named << QString::fromStdString(items[i]);
            if (items.size() > kNamed) named << QStringLiteral("…");
            return named.join(QStringLiteral(", "));
        };
        QStringList parts;
        if (!config.ids.empty())
            parts << QObject::tr("%1 (%2 %3)")
                         .arg(countOf(static_cast<qsizetype>(config.ids.size()),
                                      QObject::tr("ticked op"), QObject::tr("ticked ops")),
                              config.ids.size() == 1 ? QObject::tr("id") : QObject::tr("ids"),
                              some(config.ids));
        if (!config.opNames.empty())
            parts << QObject::tr("%1 (%2)").arg(
                countOf(static_cast<qsizetype>(config.opNames.size()), QObject::tr("name prefix"),
                        QObject::tr("name prefixes")),
                some(config.opNames));
        what = parts.join(QStringLiteral(", "));
        if (config.saveChild) what += QObject::tr(", with everything inside them");
    }
    // The rounds, unless all: a probe woken with the default exec_range (0,0) dumps nothing once
    // round 0 has passed, and the line said only "dumps every layer-level op".
    const format::ExecRange& range = config.execRange;
    if (range.kind == format::ExecRange::Kind::None) {
        what += QObject::tr(" in no round");
    } else if (range.kind == format::ExecRange::Kind::Ranges && range.ranges.size() == 1 &&
               range.ranges.front().first == range.ranges.front().second) {
        what += QObject::tr(" in round %1 only").arg(range.ranges.front().first);
    } else if (range.kind == format::ExecRange::Kind::Ranges) {
        QStringList spans;
        for (const auto& [first, last] : range.ranges)
            spans << (first == last ? QString::number(first)
                                    : QObject::tr("%1 to %2").arg(first).arg(last));
        what += QObject::tr(" in rounds %1").arg(spans.join(QStringLiteral(", ")));
    }
    // A config that dumps nothing says so first: "dumps every layer-level op" read as if the
    // probe were dumping.
    if (!config.dumpEnable)
        what = QObject::tr("dumping off (dump_enable is false); once on, %1").arg(what);
    return what;
}

QString describeDumpTask(format::DumpTask task) {
    switch (task) {
        case format::DumpTask::Tensor:
            return QObject::tr("tensors");
        case format::DumpTask::Statistics:
            return QObject::tr("statistics");
        case format::DumpTask::All:
            return QObject::tr("tensors and statistics");
        case format::DumpTask::OverflowCheck:
            return QObject::tr("overflow check");
    }
    return {};
}

}  // namespace probe::widgets
