// probe_studio._module_call.watch_config_writes (config_writes.cpp), registered by
// module_call.cpp.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

// watch_config_writes(note_file_written) -> bool: whether the audit hook is in place.
PyObject* watchConfigWrites(PyObject* self, PyObject* arg);
// flush_before_exec(before_exec) -> bool: the same hook calls before_exec(program) at
// os.exec*(), for the probe to write out what it has queued.
PyObject* flushBeforeExecSet(PyObject* self, PyObject* arg);
