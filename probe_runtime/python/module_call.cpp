// probe_studio._module_call: the nn.Module.__call__ the probe installs (torch_hooks.py), in C.
//
// Every module call of the model goes through it, so its cost is the probe's floor: written in
// Python, the wrapper and its two ctypes calls cost more than 2% of a small model's step while
// the probe sleeps. Here a call that nobody looks into (inside a layer whose children are not
// observed) only counts the depth, a layer call of a sleeping probe is counted with the layer's
// counter (see Counting), and a module call whose tensors nobody wants begins and ends its op by
// calling the adapter directly. So does a call whose tensors are plain tensors given
// positionally (the common case): its inputs and outputs go to the adapter by their TensorImpl,
// its input gradients are hooked there (in Python this cost a small layer about 5 us). Other
// tensors (subclasses, tensors nested in lists or dicts, keyword arguments, the module's
// parameters beside tensor data) and naming a model's modules (at its first call on a thread)
// stay in Python: torch_hooks.py, called from here. bracket() marks backward passes the same way.
//
// Nothing here may disturb the model: a failure of the probe's Python is handed to its
// _failure() and cleared (only a KeyboardInterrupt or SystemExit raised in it is let through,
// after closing the ops begun), and the module's own exception always propagates unchanged.
//
// watch_config_writes() (config_writes.cpp) tells the runtime of the program's own writes of
// its config. stack_key() and compact_json() (compact_json.cpp) serve the code-level API
// (probe_studio.pytorch): the identity of the calling stack, so that stack.json's text is made
// once per call path, and the JSON text of its files.
// SPDX-License-Identifier: GPL-3.0-or-later
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "compact_json.h"
#include "config_writes.h"
#include "function_address.h"
#if PY_VERSION_HEX < 0x030B0000
#include <frameobject.h>  // PyFrameObject's f_lasti
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>

namespace {

// The adapter's flags (probe.h PROBE_WANTS_*, torch_adapter.cpp kLayerProbeAwake and
// kLayerGradEnabled).
constexpr int kWantsMetadata = 2;
constexpr int kWantsTensors = 1 | kWantsMetadata;  // data or metadata
constexpr int kWantsChildren = 4;
constexpr int kWantsStatisticsOnly = 8;
constexpr int kLayerProbeAwake = 1 << 16;
constexpr int kLayerGradEnabled = 1 << 17;

// Whether a module call at `depth` is a layer-level op whose input gradients the adapter hooks:
// the probe awake and grad mode on as it began (the adapter's flags).
bool hooksInputGradients(int depth, int wants) {
    return depth == 1 && wants & kLayerProbeAwake && wants & kLayerGradEnabled;
}

using RootBegin = int (*)(const char* modelName);
using RootEnd = int (*)();
using ModuleBegin = int (*)(const char* name, const char* type);
using ModuleEnd = int (*)();
using UnwindTo = int (*)(int depth);
using InBackwardPass = int (*)();
using ReportTensor = int (*)(int io, int index, const char* name, void* impl);
using HookInputGradient = int (*)(const char* layer, int index, const char* name, void* impl);

// Set once by install(); owned for the life of the process (Module.__call__ is never restored).
struct Hooks {
    PyObject* original = nullptr;      // torch's own Module.__call__
    PyObject* enterRoot = nullptr;     // _enter_root(module) -> (the model's names, its class name)
    PyObject* enterTensors = nullptr;  // _enter_tensors(module, args, kwargs, depth, wants, names)
    PyObject* reportOutputs = nullptr;  // _report_outputs(output)
    PyObject* namesOf = nullptr;        // _names_of(module): a module that is not the model's
    PyObject* failure = nullptr;        // _failure(where, exception)
    RootBegin rootBegin = nullptr;
    RootEnd rootEnd = nullptr;
    ModuleBegin begin = nullptr;
    ModuleEnd end = nullptr;
    UnwindTo unwindTo = nullptr;
    InBackwardPass inBackwardPass = nullptr;
};
Hooks hooks;

// The interned name "_cdata": a tensor's TensorImpl (made once, by the module's init; looking an
// attribute up by a C string makes the name again at each call).
PyObject* cdataName = nullptr;

// The model last called on this thread and what _enter_root() said of it, so that a training
// loop's every step does not run Python to name the same model again.
struct LastRoot {
    PyObject* model = nullptr;      // a weak reference to it
    PyObject* names = nullptr;      // its names: a dict (see ThreadState)
    PyObject* className = nullptr;  // bytes
};
thread_local LastRoot lastRoot;

// Set by enable_plain_tensors() when torch.Tensor._cdata is the TensorImpl the adapter takes;
// until then every tensor goes through Python.
struct PlainTensors {
    PyTypeObject* types[2] = {nullptr, nullptr};  // torch.Tensor, torch.nn.Parameter (exact)
    PyObject* encodedArgNames = nullptr;          // _encoded_arg_names(module): a tuple of bytes
    PyObject* hookInPython = nullptr;    // _hook_input_gradient_in_python(layer, i, name, t)
    PyObject* argNamesByType = nullptr;  // type(module) -> _encoded_arg_names(module)
    ReportTensor report = nullptr;
    HookInputGradient hookInputGradient = nullptr;
};
PlainTensors plain;

struct ThreadState {
    int depth = 0;              // module calls open on this thread, the model's own included
    int pushed = 0;             // ops those calls opened in the adapter
    int quietAt = -1;           // depth of a call whose children nobody observes (-1: none)
    PyObject* names = nullptr;  // id(module) -> (path, attribute name, class name, LayerCount)
    // This call of the model may count its layer calls here (countedLayerCall): the adapter said
    // so as it began, and no layer call of it has been begun since.
    bool rootCounts = false;
};
thread_local ThreadState state;

// Set by enable_counting(): while the runtime only counts (the probe sleeps), a layer call is
// counted here, with the layer's counter in the runtime, instead of being begun in the adapter
// (and there in the runtime): a sleeping probe's cost per layer call on a small model was mostly
// the code those calls ran. The adapter still gets the autograd sequence numbers the call used,
// from which the backward ops are counted.
using CountingOnly = uint64_t (*)();
using LayerCounterOf = void* (*)(const char* name, const char* type);
using LayerCounterAdd = void (*)(void* counter);
using SequenceNumber = uint64_t (*)();
using LayerIndex = int (*)(const char* name, const char* type);
using CountedLayerCall = void (*)(int layer, uint64_t firstSequence);
struct Counting {
    CountingOnly countingOnly = nullptr;  // null until enabled
    LayerCounterOf counterOf = nullptr;
    LayerCounterAdd counterAdd = nullptr;
    SequenceNumber sequenceNumber = nullptr;
    LayerIndex layerIndex = nullptr;
    CountedLayerCall counted = nullptr;
};
Counting counting;

// The fourth of a module's names (_module_names in torch_hooks.py): what counting its calls
// needs, got once per start of the runtime (`epoch`).
struct LayerCountObject {
    PyObject_HEAD void* counter;
    int layer;
    uint64_t epoch;
};
PyTypeObject layerCountType = {
    PyVarObject_HEAD_INIT(nullptr, 0) "probe_studio._module_call.LayerCount",
    sizeof(LayerCountObject),
};

// An exception of the probe's own Python is set: hand it to _failure and clear it. Returns
// false (the exception still set) for a KeyboardInterrupt or SystemExit, which belong to the
// user, not to the probe.
bool absorbFailure() {
    if (!PyErr_ExceptionMatches(PyExc_Exception)) return false;
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyErr_NormalizeException(&type, &value, &traceback);
    PyObject* result =
        PyObject_CallFunction(hooks.failure, "sO", "module call", value ? value : Py_None);
    Py_XDECREF(result);
    PyErr_Clear();  // _failure itself failing must not reach the model either
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(traceback);
    return true;
}

// An exception leaves the module call at `depth` that began its op (the module's own, or one of
// the probe's Python it must not absorb): close that op and whatever was left open above it,
// and the model's root when it is the outermost call. The exception is kept as it is, whatever
// the probe does meanwhile. Returns nullptr, for the caller to return.
PyObject* closeOpsAndRaise(int pushedBefore, int depth) {
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    hooks.unwindTo(pushedBefore);
    state.pushed = pushedBefore;
    if (state.quietAt >= depth) state.quietAt = -1;
    if (depth == 0) hooks.rootEnd();
    PyErr_Restore(type, value, traceback);
    return nullptr;
}

PyObject* positionalTuple(PyObject* const* args, Py_ssize_t count) {
    PyObject* tuple = PyTuple_New(count);
    if (!tuple) return nullptr;
    for (Py_ssize_t i = 0; i < count; ++i) {
        Py_INCREF(args[i]);
        PyTuple_SET_ITEM(tuple, i, args[i]);
    }
    return tuple;
}

PyObject* keywordDict(PyObject* const* values, PyObject* kwnames) {
    PyObject* dict = PyDict_New();
    if (!dict || !kwnames) return dict;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(kwnames); ++i) {
        if (PyDict_SetItem(dict, PyTuple_GET_ITEM(kwnames, i), values[i]) != 0) {
            Py_DECREF(dict);
            return nullptr;
        }
    }
    return dict;
}

// The module's names (a new reference to a tuple of three bytes), or nullptr with an exception.
PyObject* namesOf(PyObject* module) {
    if (state.names) {
        PyObject* key = PyLong_FromVoidPtr(module);
        if (!key) return nullptr;
        PyObject* names = PyDict_GetItemWithError(state.names, key);
        Py_DECREF(key);
        if (names) {
            Py_INCREF(names);
            return names;
        }
        if (PyErr_Occurred()) return nullptr;
    }
    return PyObject_CallOneArg(hooks.namesOf, module);  // made on the fly, not an attribute
}

// Whether `module` is one of the modules of the model last called on this thread (not the model
// itself). Leaves no exception set.
bool ofLastModel(PyObject* module) {
    if (!state.names) return false;
    PyObject* key = PyLong_FromVoidPtr(module);
    if (!key) {
        PyErr_Clear();
        return false;
    }
    const int found = PyDict_Contains(state.names, key);
    Py_DECREF(key);
    if (found < 0) PyErr_Clear();
    return found == 1;
}

// (path, attribute name, class name), and for a module of the model its LayerCount.
bool namesAreBytes(PyObject* names) {
    return PyTuple_Check(names) && PyTuple_GET_SIZE(names) >= 3 &&
           PyBytes_Check(PyTuple_GET_ITEM(names, 0)) && PyBytes_Check(PyTuple_GET_ITEM(names, 1)) &&
           PyBytes_Check(PyTuple_GET_ITEM(names, 2));
}

bool isPlainTensor(PyObject* value) {
    PyTypeObject* type = Py_TYPE(value);
    return type == plain.types[0] || type == plain.types[1];
}

// A value _flatten() finds no tensor in.
bool holdsNoTensor(PyObject* value) {
    return value == Py_None || PyBool_Check(value) || PyLong_CheckExact(value) ||
           PyFloat_CheckExact(value) || PyUnicode_CheckExact(value);
}

// The TensorImpl of a plain tensor, or nullptr with an exception.
void* implOf(PyObject* tensor) {
    PyObject* cdata = PyObject_GetAttr(tensor, cdataName);
    if (!cdata) return nullptr;
    void* impl = PyLong_AsVoidPtr(cdata);
    Py_DECREF(cdata);
    if (!impl && !PyErr_Occurred())
        PyErr_SetString(PyExc_ValueError, "a tensor without TensorImpl");
    return impl;
}

// The names of the module's positional arguments (borrowed: a tuple of bytes), asked of Python
// once per class; nullptr with an exception.
PyObject* argNamesOf(PyObject* module) {
    PyObject* type = reinterpret_cast<PyObject*>(Py_TYPE(module));
    PyObject* names = PyDict_GetItemWithError(plain.argNamesByType, type);
    if (names || PyErr_Occurred()) return names;
    names = PyObject_CallOneArg(plain.encodedArgNames, module);
    if (!names) return nullptr;
    bool valid = PyTuple_Check(names);
    for (Py_ssize_t i = 0; valid && i < PyTuple_GET_SIZE(names); ++i)
        valid = PyBytes_Check(PyTuple_GET_ITEM(names, i));
    if (!valid) {
        Py_DECREF(names);
        PyErr_SetString(PyExc_TypeError, "argument names are not a tuple of bytes");
        return nullptr;
    }
    const int stored = PyDict_SetItem(plain.argNamesByType, type, names);
    Py_DECREF(names);  // the dict holds it
    return stored == 0 ? names : nullptr;
}

// _enter_tensors() of torch_hooks.py for a call given only plain tensors and values without
// tensors, positionally, when the op's parameters are not wanted: its inputs reported, and for a
// layer-level op of an awake probe its input gradients hooked. Returns 1 when done, 0 when the
// call is not such a call (Python does it), -1 with an exception.
int enterPlainTensors(PyObject* module, PyObject* const* args, Py_ssize_t count, PyObject* kwnames,
                      int depth, int wants, PyObject* names) {
    if (!plain.report || (kwnames && PyTuple_GET_SIZE(kwnames) > 0)) return 0;
    const bool wantsTensors = wants & kWantsTensors;
    // The module's parameters go with tensor data and with the observed structure.
    if (wantsTensors && (wants & kWantsMetadata || !(wants & kWantsStatisticsOnly))) return 0;
    for (Py_ssize_t i = 0; i < count; ++i)
        if (!isPlainTensor(args[i]) && !holdsNoTensor(args[i])) return 0;
    const bool layerGradients = hooksInputGradients(depth, wants);
    if (!wantsTensors && !layerGradients) return 1;
    PyObject* argNames = argNamesOf(module);
    if (!argNames) return -1;
    const char* layer = PyBytes_AS_STRING(PyTuple_GET_ITEM(names, 0));
    int index = 0;
    for (Py_ssize_t i = 0; i < count; ++i) {
        if (!isPlainTensor(args[i])) continue;
        const char* name =
            i < PyTuple_GET_SIZE(argNames) ? PyBytes_AS_STRING(PyTuple_GET_ITEM(argNames, i)) : "";
        void* impl = implOf(args[i]);
        if (!impl) return -1;
        if (wantsTensors) plain.report(0, index, name, impl);
        if (layerGradients && plain.hookInputGradient(layer, index, name, impl) < 0) {
            // The adapter could not hook it (and said why): a Python hook instead.
            PyObject* result =
                PyObject_CallFunction(plain.hookInPython, "yiyO", layer, index, name, args[i]);
            if (!result) return -1;
            Py_DECREF(result);
        }
        ++index;
    }
    return 1;
}

// _report_outputs() of torch_hooks.py for a plain tensor, or a tuple or list of plain tensors
// (None among them skipped), all named "" as _flatten() names them. Returns 1 when done, 0 when
// the output is another kind (Python does it), -1 with an exception.
int reportPlainOutputs(PyObject* output) {
    if (!plain.report) return 0;
    if (isPlainTensor(output)) {
        void* impl = implOf(output);
        if (!impl) return -1;
        plain.report(1, 0, "", impl);
        return 1;
    }
    if (!PyTuple_CheckExact(output) && !PyList_CheckExact(output)) return 0;
    PyObject* items = PySequence_Fast(output, "");  // the same object, for a tuple or list
    if (!items) return -1;
    const Py_ssize_t count = PySequence_Fast_GET_SIZE(items);
    PyObject** values = PySequence_Fast_ITEMS(items);
    int result = 1;
    for (Py_ssize_t i = 0; i < count && result == 1; ++i)
        if (!isPlainTensor(values[i]) && values[i] != Py_None) result = 0;
    for (Py_ssize_t i = 0, index = 0; i < count && result == 1; ++i) {
        if (values[i] == Py_None) continue;
        void* impl = implOf(values[i]);
        if (!impl) {
            result = -1;
            break;
        }
        plain.report(1, static_cast<int>(index++), "", impl);
    }
    Py_DECREF(items);
    return result;
}

// The outermost module call begins: the model's names into `state`, its root op begun. Returns
// false with an exception set (of _enter_root).
bool enterRoot(PyObject* model) {
    state.rootCounts = false;
    if (!lastRoot.model || PyWeakref_GetObject(lastRoot.model) != model) {
        PyObject* entered = PyObject_CallOneArg(hooks.enterRoot, model);
        if (!entered) return false;
        if (!PyTuple_Check(entered) || PyTuple_GET_SIZE(entered) != 2 ||
            !PyDict_Check(PyTuple_GET_ITEM(entered, 0)) ||
            !PyBytes_Check(PyTuple_GET_ITEM(entered, 1))) {
            Py_DECREF(entered);
            PyErr_SetString(PyExc_TypeError, "_enter_root() gives (a dict, bytes)");
            return false;
        }
        PyObject* reference = PyWeakref_NewRef(model, nullptr);
        if (!reference) PyErr_Clear();  // not weakly referable: named by Python each call
        Py_XSETREF(lastRoot.model, reference);
        Py_XSETREF(lastRoot.names, Py_NewRef(PyTuple_GET_ITEM(entered, 0)));
        Py_XSETREF(lastRoot.className, Py_NewRef(PyTuple_GET_ITEM(entered, 1)));
        Py_DECREF(entered);
    }
    Py_XSETREF(state.names, Py_NewRef(lastRoot.names));
    state.rootCounts = hooks.rootBegin(PyBytes_AS_STRING(lastRoot.className)) == 1;
    return true;
}

// The LayerCount of a layer call that can be counted rather than begun (see Counting), ready
// for this start of the runtime; null when it must be begun.
LayerCountObject* layerCountOf(PyObject* names) {
    if (!counting.countingOnly || !state.rootCounts || PyTuple_GET_SIZE(names) < 4) return nullptr;
    PyObject* item = PyTuple_GET_ITEM(names, 3);
    if (Py_TYPE(item) != &layerCountType) return nullptr;
    const uint64_t epoch = counting.countingOnly();
    if (!epoch) return nullptr;
    auto* count = reinterpret_cast<LayerCountObject*>(item);
    if (count->epoch != epoch) {
        const char* name = PyBytes_AS_STRING(PyTuple_GET_ITEM(names, 0));
        const char* type = PyBytes_AS_STRING(PyTuple_GET_ITEM(names, 2));
        count->counter = counting.counterOf(name, type);
        count->layer = counting.layerIndex(name, type);
        count->epoch = epoch;
    }
    return count->counter && count->layer >= 0 ? count : nullptr;
}

// torch's own Module.__call__ for a call at `depth`, the modules it calls one level deeper.
PyObject* callOriginal(int depth, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
    state.depth = depth + 1;
    PyObject* output = PyObject_Vectorcall(hooks.original, args, nargsf, kwnames);
    state.depth = depth;
    return output;
}

// A layer call counted, not begun: nobody observes its children, and the adapter gets the
// autograd sequence numbers it used, whether it returns or raises.
PyObject* countedLayerCall(LayerCountObject* count, PyObject* const* args, size_t nargsf,
                           PyObject* kwnames) {
    counting.counterAdd(count->counter);
    const uint64_t first = counting.sequenceNumber();
    const int quietAt = state.quietAt;
    state.quietAt = 1;
    PyObject* output = callOriginal(1, args, nargsf, kwnames);
    state.quietAt = quietAt;
    counting.counted(count->layer, first);  // touches no Python state: an exception stays set
    return output;
}

// Module.__call__(module, *args, **kwargs).
PyObject* moduleCall(PyObject*, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
    const Py_ssize_t count = PyVectorcall_NARGS(nargsf);
    if (count < 1) {
        PyErr_SetString(PyExc_TypeError, "Module.__call__ needs the module");
        return nullptr;
    }
    PyObject* module = args[0];
    const int depth = state.depth;
    if (0 <= state.quietAt && state.quietAt < depth) {
        // Inside a module whose children nobody observes: only keep count of the depth.
        return callOriginal(depth, args, nargsf, kwnames);
    }

    if (depth == 0 && hooks.inBackwardPass() && ofLastModel(module)) {
        // A module of the model called in a backward pass (checkpointing recomputing a block):
        // work of the backward op running, whose aten ops are its children, not a call of
        // another model (the recomputed block was named a model, its layers as the model's).
        // A model recomputed whole is called as a model: its layers' backward ops are known
        // from the calls.
        state.quietAt = 0;
        PyObject* output = callOriginal(0, args, nargsf, kwnames);
        state.quietAt = -1;
        return output;
    }

    bool begun = false;
    int wants = 0, pushedBefore = 0;
    if (depth == 0) {
        begun = enterRoot(module);
        if (!begun && !absorbFailure()) return nullptr;
    } else if (PyObject* names = namesOf(module); names && namesAreBytes(names)) {
        if (depth == 1) {
            if (LayerCountObject* layerCount = layerCountOf(names)) {
                Py_DECREF(names);  // the LayerCount lives on in the model's names
                return countedLayerCall(layerCount, args, nargsf, kwnames);
            }
            // Begun from here on in this call of the model: the adapter may watch its aten ops
            // now, which a layer call counted here would not switch off.
            state.rootCounts = false;
        }
        // A layer-level op is named by its full attribute path ("layers.0"), a child by its
        // attribute name ("self_attn").
        wants = hooks.begin(PyBytes_AS_STRING(PyTuple_GET_ITEM(names, depth == 1 ? 0 : 1)),
                            PyBytes_AS_STRING(PyTuple_GET_ITEM(names, 2)));
        begun = true;
        pushedBefore = state.pushed;
        state.pushed = pushedBefore + 1;
        if (!(wants & kWantsChildren)) state.quietAt = depth;
        if (wants & kWantsTensors || (depth == 1 && wants & kLayerProbeAwake)) {
            int done = enterPlainTensors(module, args + 1, count - 1, kwnames, depth, wants, names);
            if (done == 0) {
                PyObject* positional = positionalTuple(args + 1, count - 1);
                PyObject* keywords = positional ? keywordDict(args + count, kwnames) : nullptr;
                PyObject* result =
                    keywords ? PyObject_CallFunction(hooks.enterTensors, "OOOiiO", module,
                                                     positional, keywords, depth, wants, names)
                             : nullptr;
                Py_XDECREF(positional);
                Py_XDECREF(keywords);
                Py_XDECREF(result);
                done = result ? 1 : -1;
            }
            if (done < 0 && !absorbFailure()) {
                Py_DECREF(names);
                return closeOpsAndRaise(pushedBefore, depth);
            }
        }
        Py_DECREF(names);
    } else {
        if (names) {
            Py_DECREF(names);
            PyErr_SetString(PyExc_TypeError, "module names are not three bytes");
        }
        if (!absorbFailure()) return nullptr;
    }

    PyObject* output = callOriginal(depth, args, nargsf, kwnames);
    if (!begun) return output;

    if (!output) return closeOpsAndRaise(pushedBefore, depth);  // the module's own exception

    if (depth == 0) {
        hooks.rootEnd();
        return output;
    }
    bool interrupted = false;
    // A layer-level op whose input gradients are hooked: its outputs lead the adapter to its
    // autograd nodes (reported as rows only when wanted).
    if (wants & kWantsTensors || hooksInputGradients(depth, wants)) {
        int done = reportPlainOutputs(output);
        if (done == 0) {
            PyObject* result = PyObject_CallOneArg(hooks.reportOutputs, output);
            Py_XDECREF(result);
            done = result ? 1 : -1;
        }
        if (done < 0) interrupted = !absorbFailure();
    }
    hooks.end();
    state.pushed = pushedBefore;
    if (state.quietAt == depth) state.quietAt = -1;
    if (interrupted) {
        Py_DECREF(output);
        return nullptr;
    }
    return output;
}

// The callable installed as nn.Module.__call__: a method descriptor, called with the module as
// its first argument without a bound method being made (Py_TPFLAGS_METHOD_DESCRIPTOR).
struct ModuleCallObject {
    PyObject_HEAD vectorcallfunc vectorcall;
};

PyObject* moduleCallGet(PyObject* self, PyObject* instance, PyObject*) {
    if (!instance || instance == Py_None) {
        Py_INCREF(self);
        return self;
    }
    return PyMethod_New(self, instance);
}

PyObject* moduleCallWrapped(PyObject*, void*) {
    Py_INCREF(hooks.original);
    return hooks.original;
}

PyObject* moduleCallProbeWrapped(PyObject*, void*) {
    Py_RETURN_TRUE;
}

PyObject* moduleCallName(PyObject*, void*) {
    return PyUnicode_FromString("__call__");
}

PyGetSetDef moduleCallGetSet[] = {
    {"__wrapped__", moduleCallWrapped, nullptr, "torch's own Module.__call__", nullptr},
    {"_probe_wrapped", moduleCallProbeWrapped, nullptr, nullptr, nullptr},
    {"__name__", moduleCallName, nullptr, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyTypeObject moduleCallType = {
    PyVarObject_HEAD_INIT(nullptr, 0) "probe_studio._module_call.ModuleCall",
    sizeof(ModuleCallObject),
};

PyObject* moduleCallObject = nullptr;  // the one instance, made by install()

// bracket(original, begin, end): a callable that calls the adapter's begin(roots, count),
// original(*args, **kwargs) and end(), whatever original does. torch.autograd.backward and grad
// become such, so that the adapter knows a backward pass from a forward one without Python of
// ours per pass; `roots` are the TensorImpls (`_cdata`) of the tensors the pass starts from (the
// first argument, or `tensors=` / `outputs=`: a tensor or a sequence of them).
using BeginMarker = int (*)(void* const* roots, int count);
using Marker = int (*)();

struct BracketObject {
    PyObject_HEAD vectorcallfunc vectorcall;
    PyObject* original;
    BeginMarker begin;
    Marker end;
};

// The TensorImpl of `value` when it is a torch.Tensor (its `_cdata`), else null. Leaves no
// exception set.
void* tensorImplOf(PyObject* value) {
    PyObject* cdata = PyObject_GetAttr(value, cdataName);
    if (!cdata) {
        PyErr_Clear();
        return nullptr;
    }
    void* impl = PyLong_Check(cdata) ? PyLong_AsVoidPtr(cdata) : nullptr;
    Py_DECREF(cdata);
    if (PyErr_Occurred()) PyErr_Clear();
    return impl;
}

// The TensorImpls of the tensors a backward pass starts from (see bracket), at most kMaxRoots.
constexpr int kMaxRoots = 64;
int passRoots(PyObject* const* args, size_t nargs, PyObject* kwnames, void* (&roots)[kMaxRoots]) {
    PyObject* first = nargs > 0 ? args[0] : nullptr;
    if (!first && kwnames) {
        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(kwnames) && !first; ++k) {
            PyObject* key = PyTuple_GET_ITEM(kwnames, k);
            if (PyUnicode_CompareWithASCIIString(key, "tensors") == 0 ||
                PyUnicode_CompareWithASCIIString(key, "outputs") == 0)
                first = args[nargs + static_cast<size_t>(k)];
        }
    }
    if (!first) return 0;
    if (PyList_Check(first) || PyTuple_Check(first)) {
        int count = 0;
        const Py_ssize_t size = PySequence_Fast_GET_SIZE(first);
        for (Py_ssize_t i = 0; i < size && count < kMaxRoots; ++i)
            if (void* impl = tensorImplOf(PySequence_Fast_GET_ITEM(first, i)))
                roots[count++] = impl;
        return count;
    }
    roots[0] = tensorImplOf(first);
    return roots[0] ? 1 : 0;
}

PyObject* bracketCall(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
    auto* bracket = reinterpret_cast<BracketObject*>(self);
    void* roots[kMaxRoots];
    const int count = passRoots(args, PyVectorcall_NARGS(nargsf), kwnames, roots);
    bracket->begin(roots, count);
    PyObject* result = PyObject_Vectorcall(bracket->original, args, nargsf, kwnames);
    bracket->end();  // touches no Python state: an exception of original stays as it is
    return result;
}

void bracketDealloc(PyObject* self) {
    Py_XDECREF(reinterpret_cast<BracketObject*>(self)->original);
    PyObject_Free(self);
}

PyObject* bracketWrapped(PyObject* self, void*) {
    return Py_NewRef(reinterpret_cast<BracketObject*>(self)->original);
}

PyObject* bracketProbeBracketed(PyObject*, void*) {
    Py_RETURN_TRUE;
}

// __name__, __qualname__, __doc__ and __module__ are the original's.
PyObject* bracketOriginalAttribute(PyObject* self, void* name) {
    return PyObject_GetAttrString(reinterpret_cast<BracketObject*>(self)->original,
                                  static_cast<const char*>(name));
}

char kName[] = "__name__", kQualifiedName[] = "__qualname__", kDoc[] = "__doc__",
     kModule[] = "__module__";

PyGetSetDef bracketGetSet[] = {
    {"__wrapped__", bracketWrapped, nullptr, "the function bracketed", nullptr},
    {"_probe_bracketed", bracketProbeBracketed, nullptr, nullptr, nullptr},
    {kName, bracketOriginalAttribute, nullptr, nullptr, kName},
    {kQualifiedName, bracketOriginalAttribute, nullptr, nullptr, kQualifiedName},
    {kDoc, bracketOriginalAttribute, nullptr, nullptr, kDoc},
    {kModule, bracketOriginalAttribute, nullptr, nullptr, kModule},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyTypeObject bracketType = {
    PyVarObject_HEAD_INIT(nullptr, 0) "probe_studio._module_call.Bracket",
    sizeof(BracketObject),
};

PyObject* bracket(PyObject*, PyObject* args) {
    PyObject *original, *begin, *end;
    if (!PyArg_ParseTuple(args, "OOO", &original, &begin, &end)) return nullptr;
    if (!PyCallable_Check(original)) {
        PyErr_SetString(PyExc_TypeError, "bracket() takes a callable and two addresses");
        return nullptr;
    }
    auto beginMarker = reinterpret_cast<BeginMarker>(functionAddress(begin));
    auto endMarker = reinterpret_cast<Marker>(functionAddress(end));
    if (!beginMarker || !endMarker) return nullptr;
    auto* object = PyObject_New(BracketObject, &bracketType);
    if (!object) return nullptr;
    object->vectorcall = bracketCall;
    object->original = Py_NewRef(original);
    object->begin = beginMarker;
    object->end = endMarker;
    return reinterpret_cast<PyObject*>(object);
}

// install(original, enter_root, enter_tensors, report_outputs, names_of, failure, root_begin,
//         root_end, module_begin, module_end, unwind_to, in_backward_pass) -> the callable to
// set as Module.__call__. The last six are the adapter's C functions, by address (ctypes).
PyObject* install(PyObject*, PyObject* args) {
    PyObject *original, *enterRoot, *enterTensors, *reportOutputs, *namesOfModule, *failure,
        *rootBegin, *rootEnd, *begin, *end, *unwindTo, *inBackwardPass;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOOO", &original, &enterRoot, &enterTensors,
                          &reportOutputs, &namesOfModule, &failure, &rootBegin, &rootEnd, &begin,
                          &end, &unwindTo, &inBackwardPass))
        return nullptr;
    if (moduleCallObject) {
        PyErr_SetString(PyExc_RuntimeError, "the module call is installed already");
        return nullptr;
    }
    for (PyObject* callable :
         {original, enterRoot, enterTensors, reportOutputs, namesOfModule, failure}) {
        if (!PyCallable_Check(callable)) {
            PyErr_SetString(PyExc_TypeError, "install() takes six callables and six addresses");
            return nullptr;
        }
    }
    hooks.rootBegin = reinterpret_cast<RootBegin>(functionAddress(rootBegin));
    hooks.rootEnd = reinterpret_cast<RootEnd>(functionAddress(rootEnd));
    hooks.begin = reinterpret_cast<ModuleBegin>(functionAddress(begin));
    hooks.end = reinterpret_cast<ModuleEnd>(functionAddress(end));
    hooks.unwindTo = reinterpret_cast<UnwindTo>(functionAddress(unwindTo));
    hooks.inBackwardPass = reinterpret_cast<InBackwardPass>(functionAddress(inBackwardPass));
    if (!hooks.rootBegin || !hooks.rootEnd || !hooks.begin || !hooks.end || !hooks.unwindTo ||
        !hooks.inBackwardPass)
        return nullptr;
    hooks.original = Py_NewRef(original);
    hooks.enterRoot = Py_NewRef(enterRoot);
    hooks.enterTensors = Py_NewRef(enterTensors);
    hooks.reportOutputs = Py_NewRef(reportOutputs);
    hooks.namesOf = Py_NewRef(namesOfModule);
    hooks.failure = Py_NewRef(failure);
    auto* object = PyObject_New(ModuleCallObject, &moduleCallType);
    if (!object) return nullptr;
    object->vectorcall = moduleCall;
    moduleCallObject = reinterpret_cast<PyObject*>(object);
    Py_INCREF(moduleCallObject);  // held here for the life of the process
    return moduleCallObject;
}

// enable_plain_tensors(tensor_type, parameter_type, encoded_arg_names,
//                      hook_input_gradient_in_python, report_tensor, hook_input_gradient)
// After install(), when a plain tensor's _cdata is its TensorImpl: such tensors go to the
// adapter's last two functions (by address) from here.
PyObject* enablePlainTensors(PyObject*, PyObject* args) {
    PyObject *tensorType, *parameterType, *encodedArgNames, *hookInPython, *report,
        *hookInputGradient;
    if (!PyArg_ParseTuple(args, "O!O!OOOO", &PyType_Type, &tensorType, &PyType_Type, &parameterType,
                          &encodedArgNames, &hookInPython, &report, &hookInputGradient))
        return nullptr;
    if (plain.report) {
        PyErr_SetString(PyExc_RuntimeError, "plain tensors are enabled already");
        return nullptr;
    }
    for (PyObject* callable : {encodedArgNames, hookInPython}) {
        if (!PyCallable_Check(callable)) {
            PyErr_SetString(PyExc_TypeError,
                            "enable_plain_tensors() takes two types, two "
                            "callables and two addresses");
            return nullptr;
        }
    }
    auto* reportFunction = reinterpret_cast<ReportTensor>(functionAddress(report));
    auto* hookFunction = reinterpret_cast<HookInputGradient>(functionAddress(hookInputGradient));
    if (!reportFunction || !hookFunction) return nullptr;
    PyObject* byType = PyDict_New();
    if (!byType) return nullptr;
    plain.types[0] = reinterpret_cast<PyTypeObject*>(Py_NewRef(tensorType));
    plain.types[1] = reinterpret_cast<PyTypeObject*>(Py_NewRef(parameterType));
    plain.encodedArgNames = Py_NewRef(encodedArgNames);
    plain.hookInPython = Py_NewRef(hookInPython);
    plain.argNamesByType = byType;
    plain.hookInputGradient = hookFunction;
    plain.report = reportFunction;  // last: it switches the path on
    Py_RETURN_NONE;
}

// enable_counting(counting_only, layer_counter_of, layer_counter_add, sequence_number,
//                 layer_index, counted_layer_call): the runtime's first three functions and the
// adapter's last three, by address. After install(); layer calls are counted from then on (see
// Counting).
PyObject* enableCounting(PyObject*, PyObject* args) {
    PyObject* addresses[6];
    if (!PyArg_ParseTuple(args, "OOOOOO", &addresses[0], &addresses[1], &addresses[2],
                          &addresses[3], &addresses[4], &addresses[5]))
        return nullptr;
    if (counting.countingOnly) {
        PyErr_SetString(PyExc_RuntimeError, "counting is enabled already");
        return nullptr;
    }
    void* functions[6];
    for (int i = 0; i < 6; ++i) {
        functions[i] = functionAddress(addresses[i]);
        if (!functions[i]) return nullptr;
    }
    counting.counterOf = reinterpret_cast<LayerCounterOf>(functions[1]);
    counting.counterAdd = reinterpret_cast<LayerCounterAdd>(functions[2]);
    counting.sequenceNumber = reinterpret_cast<SequenceNumber>(functions[3]);
    counting.layerIndex = reinterpret_cast<LayerIndex>(functions[4]);
    counting.counted = reinterpret_cast<CountedLayerCall>(functions[5]);
    counting.countingOnly = reinterpret_cast<CountingOnly>(functions[0]);  // last: switches it on
    Py_RETURN_NONE;
}

// layer_count() -> a new LayerCount, for the fourth of a module's names.
PyObject* layerCount(PyObject*, PyObject*) {
    auto* count = PyObject_New(LayerCountObject, &layerCountType);
    if (!count) return nullptr;
    count->counter = nullptr;
    count->layer = -1;
    count->epoch = 0;
    return reinterpret_cast<PyObject*>(count);
}

// stack_key(skip) -> bytes: the identity of the calling Python stack, for the code-level API's
// stack.json (probe_studio.pytorch._records.StackCapture): the address of each frame's code object
// and its last instruction, from the frame `skip` levels above the caller of stack_key outward.
// Two calls get equal bytes exactly when they come from the same call sites by the same path, so
// the stack's text is made once per such path; the caller keeps the code objects alive, so no
// other code object can take their addresses. The frame walk in Python cost about 6 us per call.
PyObject* stackKey(PyObject*, PyObject* arg) {
    const long skip = PyLong_AsLong(arg);
    if (skip == -1 && PyErr_Occurred()) return nullptr;
    struct Place {
        const void* code;
        long long lasti;
    };
    constexpr size_t kInline = 128;
    Place inlinePlaces[kInline];
    Place* places = inlinePlaces;
    size_t capacity = kInline, count = 0;
    PyFrameObject* frame = PyEval_GetFrame();  // borrowed: the caller's
    Py_XINCREF(frame);
    for (long i = 0; frame && i < skip; ++i) {
        PyFrameObject* back = PyFrame_GetBack(frame);
        Py_DECREF(frame);
        frame = back;
    }
    PyObject* key = nullptr;
    while (frame) {
        if (count == capacity) {
            Place* grown = static_cast<Place*>(PyMem_Malloc(2 * capacity * sizeof(Place)));
            if (!grown) {
                PyErr_NoMemory();
                break;
            }
            std::memcpy(grown, places, count * sizeof(Place));
            if (places != inlinePlaces) PyMem_Free(places);
            places = grown;
            capacity *= 2;
        }
        PyCodeObject* code = PyFrame_GetCode(frame);
        places[count].code = code;
        Py_DECREF(code);  // alive while its frame is
#if PY_VERSION_HEX >= 0x030B0000
        places[count].lasti = PyFrame_GetLasti(frame);
#else
        places[count].lasti = frame->f_lasti;
#endif
        ++count;
        PyFrameObject* back = PyFrame_GetBack(frame);
        Py_DECREF(frame);
        frame = back;
    }
    if (!frame)  // walked to the end (else memory ran out)
        key = PyBytes_FromStringAndSize(reinterpret_cast<const char*>(places),
                                        static_cast<Py_ssize_t>(count * sizeof(Place)));
    Py_XDECREF(frame);
    if (places != inlinePlaces) PyMem_Free(places);
    return key;
}

PyMethodDef methods[] = {
    {"install", install, METH_VARARGS, "Makes the nn.Module.__call__ of the probe (once)."},
    {"bracket", bracket, METH_VARARGS,
     "A callable calling begin(), the function and end() (the last two by address)."},
    {"enable_plain_tensors", enablePlainTensors, METH_VARARGS,
     "Plain tensors go to the adapter from C (once, after install())."},
    {"enable_counting", enableCounting, METH_VARARGS,
     "Layer calls are counted from C while the runtime only counts (once, after install())."},
    {"layer_count", layerCount, METH_NOARGS, "A new LayerCount (a module's fourth name)."},
    {"compact_json", probeCompactJson, METH_VARARGS,
     "json.dumps(value, separators=(',', ': '), default=default) with tensor items unescaped; "
     "with indent=True, that text as json.dumps(value, indent=1) writes it."},
    {"stack_key", stackKey, METH_O,
     "The identity of the calling Python stack (code objects and positions), as bytes."},
    {"watch_config_writes", watchConfigWrites, METH_O,
     "Hands the path of every file Python code writes to the given function (by address), "
     "through an audit hook (once per process); whether the hook is in place."},
    {"flush_before_exec", flushBeforeExecSet, METH_O,
     "Calls the given function (by address) before the program execs, from the same audit "
     "hook; whether the hook is in place."},
    {nullptr, nullptr, 0, nullptr},
};

PyModuleDef moduleDefinition = {
    PyModuleDef_HEAD_INIT,
    "_module_call",
    "The probe's nn.Module.__call__ and autograd marks, in C.",
    -1,
    methods,
};

}  // namespace

namespace {

// Makes `type` a type whose instances are called by vectorcall through the function pointer at
// `offset`; false with an exception.
bool readyCallableType(PyTypeObject& type, unsigned long flags, Py_ssize_t offset,
                       PyGetSetDef* getset, const char* doc) {
    type.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | flags;
    type.tp_vectorcall_offset = offset;
    type.tp_call = PyVectorcall_Call;
    type.tp_getset = getset;
    type.tp_doc = doc;
    return PyType_Ready(&type) == 0;
}

}  // namespace

PyMODINIT_FUNC PyInit__module_call(void) {
    cdataName = PyUnicode_InternFromString("_cdata");
    if (!cdataName) return nullptr;
    moduleCallType.tp_descr_get = moduleCallGet;
    bracketType.tp_dealloc = bracketDealloc;
    if (!readyCallableType(moduleCallType, Py_TPFLAGS_METHOD_DESCRIPTOR,
                           offsetof(ModuleCallObject, vectorcall), moduleCallGetSet,
                           "nn.Module.__call__ as the probe wraps it") ||
        !readyCallableType(bracketType, 0, offsetof(BracketObject, vectorcall), bracketGetSet,
                           "a function whose calls the probe marks"))
        return nullptr;
    layerCountType.tp_flags = Py_TPFLAGS_DEFAULT;
    layerCountType.tp_doc = "what counting a module's calls needs (see Counting)";
    if (PyType_Ready(&layerCountType) != 0) return nullptr;
    return PyModule_Create(&moduleDefinition);
}
