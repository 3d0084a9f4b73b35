// The Python code of a probed program that writes files, seen by an audit hook (PEP 578).
//
// The runtime asks the kernel at each round's first layer-level op whether the config file
// changed: one system call, which on a virtual machine leaves a small model's step about 25 us
// slower. It need not, when the program tells it of the writes it makes itself: a change made
// between two steps by the program (a script switching dumping on at step N) must apply from the
// next step without fail, while a change from another process (the app, an editor) arrives at
// no particular step anyway and is applied as soon as the watcher thread has read it. So this
// hook hands the runtime (probe_note_file_written) the path of every file Python code opens for
// writing, renames onto, links or makes a folder at, and the runtime asks the kernel only while
// such a write of its config is pending. Writes made by native code or by child processes are
// not seen: they are another process's, as far as the probe's promise goes.
//
// The same hook has the probe's queue written out before the program execs (flush_before_exec):
// the new image never stops the probe, and what was queued was lost (a tiny MLP re-exec'd after
// 200 rounds of every op lost the rows of 68 of them).
//
// A hook cannot be removed, and it runs for every audited event of the process: it compares the
// event's name and nothing more for all others, and never raises (an exception from an audit
// hook would abort the program's operation).
// SPDX-License-Identifier: GPL-3.0-or-later
#include "config_writes.h"

#include <fcntl.h>

#include <cstring>

#include "function_address.h"

namespace {

using NoteFileWritten = int (*)(const char* path);
using BeforeExec = int (*)(const char* program);
NoteFileWritten noteFileWritten = nullptr;
BeforeExec beforeExec = nullptr;
bool hookAdded = false;
bool hookCalled = false;  // set by the check event: the hook is in place

constexpr const char* kCheckEvent = "probe_studio.watch_config_writes";

// Calls `take` with the path at `index` of an event's arguments (str or bytes; a file descriptor
// is no path: null).
template <typename Take>
void withPathAt(PyObject* args, Py_ssize_t index, Take take) {
    PyObject* path = PyTuple_Check(args) && PyTuple_GET_SIZE(args) > index
                         ? PyTuple_GET_ITEM(args, index)
                         : nullptr;
    if (path && PyBytes_Check(path)) {
        take(PyBytes_AS_STRING(path));
    } else if (path && PyUnicode_Check(path)) {
        // The file system's encoding, as os.fsencode (surrogate escapes kept).
        PyObject* bytes = PyUnicode_EncodeFSDefault(path);
        take(bytes ? PyBytes_AS_STRING(bytes) : nullptr);
        Py_XDECREF(bytes);
    } else {
        take(nullptr);
    }
}

void notePathAt(PyObject* args, Py_ssize_t index) {
    withPathAt(args, index, [](const char* path) {
        if (path) noteFileWritten(path);
    });
}

bool opensForWriting(PyObject* args) {
    // ("open", (path, mode, flags)): flags are the open(2) flags, also for builtins.open.
    if (!PyTuple_Check(args) || PyTuple_GET_SIZE(args) < 3) return false;
    const long flags = PyLong_AsLong(PyTuple_GET_ITEM(args, 2));
    return flags != -1 && (flags & (O_WRONLY | O_RDWR)) != 0;
}

int auditHook(const char* event, PyObject* args, void*) {
    if (event[0] == 'o' && std::strcmp(event, "os.exec") == 0) {
        if (beforeExec) withPathAt(args, 0, beforeExec);
    } else if (event[0] == 'o' && noteFileWritten) {
        if (std::strcmp(event, "open") == 0) {
            if (opensForWriting(args)) notePathAt(args, 0);
        } else if (std::strcmp(event, "os.rename") == 0 || std::strcmp(event, "os.symlink") == 0) {
            notePathAt(args, 1);  // the target; os.replace is os.rename here
        } else if (std::strcmp(event, "os.mkdir") == 0) {
            notePathAt(args, 0);  // a folder in the config's place is reported as such
        }
    } else if (event[0] == 'p' && std::strcmp(event, kCheckEvent) == 0) {
        hookCalled = true;
    }
    if (PyErr_Occurred()) PyErr_Clear();
    return 0;
}

// `function` set (once per process: the hook that calls it stays) to the function at the address
// `arg`, and the hook added; whether it is in place, or null with an exception.
template <typename Function>
PyObject* callFromHook(Function& function, PyObject* arg) {
    if (!function) {
        void* address = functionAddress(arg);
        if (!address) return nullptr;
        function = reinterpret_cast<Function>(address);
    }
    if (!hookAdded) {
        if (PySys_AddAuditHook(auditHook, nullptr) < 0) return nullptr;
        hookAdded = true;
        // Another hook may refuse ours silently: an event of our own says whether it is in place.
        if (PySys_Audit(kCheckEvent, nullptr) < 0) return nullptr;
    }
    return PyBool_FromLong(hookCalled);
}

}  // namespace

PyObject* watchConfigWrites(PyObject*, PyObject* arg) {
    return callFromHook(noteFileWritten, arg);
}

PyObject* flushBeforeExecSet(PyObject*, PyObject* arg) {
    return callFromHook(beforeExec, arg);
}
