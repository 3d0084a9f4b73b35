// A function of the runtime or the adapter handed to probe_studio._module_call by address (an
// int, from ctypes), for module_call.cpp and config_writes.cpp.
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

// The function at `address`; null with an exception set when there is none.
inline void* functionAddress(PyObject* address) {
    void* function = PyLong_Check(address) ? PyLong_AsVoidPtr(address) : nullptr;
    if (!function && !PyErr_Occurred())
        PyErr_SetString(PyExc_ValueError, "a function address is 0");
    return function;
}
