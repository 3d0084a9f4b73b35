// probe_studio._module_call.compact_json (compact_json.cpp), registered by module_call.cpp.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

// compact_json(value, default, indent=False) -> str, or None where json.dumps must be used.
PyObject* probeCompactJson(PyObject* self, PyObject* args);
