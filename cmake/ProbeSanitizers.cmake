# Sanitizer builds (docs/sanitizers.md): "address,undefined" for the whole suite, "thread" for the
# runtime's tests. Applies to every target, so that instrumented code never calls uninstrumented
# code of ours.
set(PROBE_SANITIZE "" CACHE STRING "Sanitizers to build with: empty, address,undefined, or thread")

# ENVIRONMENT_MODIFICATION of the tests that load our instrumented libraries into Debian's
# uninstrumented /usr/bin/python3 (the PyTorch adapter): empty unless built with ASan.
set(PROBE_PYTHON_HOST_TEST_ENV "")

if(PROBE_SANITIZE)
    add_compile_options(-fsanitize=${PROBE_SANITIZE} -fno-omit-frame-pointer)
    if(PROBE_SANITIZE MATCHES "undefined")
        add_compile_options(-fno-sanitize-recover=undefined)
    endif()
    add_link_options(-fsanitize=${PROBE_SANITIZE})

    # Every test ctest runs gets the sanitizers' options and the suppressions of
    # tools/sanitizers/: ctest includes this script before it starts any test.
    set(PROBE_SANITIZER_SUPPRESSIONS ${PROJECT_SOURCE_DIR}/tools/sanitizers)
    configure_file(${CMAKE_CURRENT_LIST_DIR}/sanitizer_test_env.cmake.in
                   ${PROJECT_BINARY_DIR}/sanitizer_test_env.cmake @ONLY)
    set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY
                 TEST_INCLUDE_FILES ${PROJECT_BINARY_DIR}/sanitizer_test_env.cmake)

    if(PROBE_SANITIZE MATCHES "address")
        # python3 is not built with ASan: its runtime must be loaded before anything else, so the
        # tests preload gcc's shared one (the one our libraries are linked against). The probe
        # adds its adapter in front of it (`probe run` sets LD_PRELOAD), hence
        # verify_asan_link_order=0. No leak check in these processes: the interpreter and torch
        # keep their memory to the end by design, and their unwinding has no frame pointers.
        if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
            execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libasan.so
                            OUTPUT_VARIABLE probe_asan_runtime OUTPUT_STRIP_TRAILING_WHITESPACE)
            get_filename_component(probe_asan_runtime "${probe_asan_runtime}" REALPATH)
            # libstdc++ right behind it: python3 does not link it, so without it ASan starts
            # before libstdc++ is loaded, finds no __cxa_throw to forward to, and aborts at the
            # first C++ exception thrown in the process (torchrun's workers throw some).
            execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libstdc++.so
                            OUTPUT_VARIABLE probe_cxx_runtime OUTPUT_STRIP_TRAILING_WHITESPACE)
            get_filename_component(probe_cxx_runtime "${probe_cxx_runtime}" REALPATH)
            # Measured: python_api.test_statistics 11 s -> 85 s (x8) under ASan, two busy cores.
            set(PROBE_PYTHON_HOST_TIMEOUT_SCALE 4)
            set(PROBE_PYTHON_HOST_TEST_ENV
                "LD_PRELOAD=path_list_prepend:${probe_cxx_runtime}"
                "LD_PRELOAD=path_list_prepend:${probe_asan_runtime}"
                "ASAN_OPTIONS=string_append::detect_leaks=0:verify_asan_link_order=0")
        else()
            message(WARNING "PROBE_SANITIZE=address with ${CMAKE_CXX_COMPILER_ID}: the tests that "
                            "run PyTorch (python3 with the adapter) need gcc's shared ASan runtime "
                            "and will fail to start")
        endif()
    endif()
endif()

# The tests of the calling directory (every add_test so far), and those discovered from the given
# GoogleTest executables, load our libraries into /usr/bin/python3: in an ASan build they get
# PROBE_PYTHON_HOST_TEST_ENV, and the directory's tests (whole unittest modules) their TIMEOUT
# times PROBE_PYTHON_HOST_TIMEOUT_SCALE (each discovered test is one short case: no need).
# Elsewhere this does nothing.
function(probe_tests_load_python)
    cmake_parse_arguments(arg "" "" "GTEST_TARGETS" ${ARGN})
    if(NOT PROBE_PYTHON_HOST_TEST_ENV)
        return()
    endif()
    if(NOT arg_GTEST_TARGETS)
        get_property(names DIRECTORY PROPERTY TESTS)
        foreach(name ${names})
            set_tests_properties(${name} PROPERTIES ENVIRONMENT_MODIFICATION
                                 "${PROBE_PYTHON_HOST_TEST_ENV}")
            # A whole unittest module runs torch through ASan's allocator: several times slower.
            get_test_property(${name} TIMEOUT timeout)
            if(timeout)
                math(EXPR timeout "${timeout} * ${PROBE_PYTHON_HOST_TIMEOUT_SCALE}")
                set_tests_properties(${name} PROPERTIES TIMEOUT ${timeout})
            endif()
        endforeach()
        return()
    endif()
    # Discovered tests exist only when ctest reads the directory: set the property then, after
    # GoogleTest's own include file has listed them in <target>_TESTS.
    foreach(target ${arg_GTEST_TARGETS})
        set(script ${CMAKE_CURRENT_BINARY_DIR}/${target}_python_host.cmake)
        file(WRITE ${script}
             "foreach(name IN LISTS ${target}_TESTS)\n"
             "    set_tests_properties(\"\${name}\" PROPERTIES ENVIRONMENT_MODIFICATION\n"
             "                         [==[${PROBE_PYTHON_HOST_TEST_ENV}]==])\n"
             "endforeach()\n")
        set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${script})
    endforeach()
endfunction()
