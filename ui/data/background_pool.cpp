// SPDX-License-Identifier: GPL-3.0-or-later
#include "background_pool.h"

#include <QCoreApplication>
#include <QThreadPool>

namespace probe::data {

QThreadPool* backgroundPool() {
    static QThreadPool* pool = nullptr;
    if (!pool) {
        pool = new QThreadPool;
        pool->setObjectName(QStringLiteral("probe-background"));
        qAddPostRoutine([] {
            delete pool;  // waits for the jobs still running
            pool = nullptr;
        });
    }
    return pool;
}

}  // namespace probe::data
