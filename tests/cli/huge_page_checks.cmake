# probe summary, compare and overflow start themselves again with glibc's malloc asking for
# transparent huge pages (restartWithHugePageHeap): what they print, write and return is the same
# as when they run as started (GLIBC_TUNABLES saying glibc.malloc.hugetlb=0: no restart), and
# a GLIBC_TUNABLES of the user's own is kept.
include(${CMAKE_CURRENT_LIST_DIR}/expect_run.cmake)

# A small op-level dump: two rounds of two ops, a NaN in round 1; the candidate differs there.
set(header "Device and PID,Execution Count,Op Name,Op Type,Op Id,Input/Output,Index,Dtype,Format,Shape,Max,Min,Mean,Norm,Tensor Path")
foreach(side reference candidate)
    set(root ${WORK}/${side}/atb_dump_data)
    foreach(round 0 1)
        set(value 1.500000)
        if(round EQUAL 1 AND side STREQUAL "candidate")
            set(value nan)
        endif()
        file(WRITE ${root}/data/0_77/${round}/statistic.csv "${header}\n"
            "0_77,${round},layers.0,DecoderLayer,0,input,0,float,nd,2x3,1.000000,-1.000000,0.000000,2.000000,N/A\n"
            "0_77,${round},layers.0/mlp,MLP,0_0,input,0,float,nd,2x3,1.000000,-1.000000,0.000000,2.000000,N/A\n"
            "0_77,${round},layers.0/mlp,MLP,0_0,output,0,float,nd,2x3,${value},-1.000000,0.000000,2.000000,N/A\n"
            "0_77,${round},layers.0,DecoderLayer,0,output,0,float,nd,2x3,${value},-1.000000,0.000000,2.000000,N/A\n")
    endforeach()
    file(WRITE ${root}/probe_status.json
        "{\"state\": \"complete\", \"version\": 1, \"processes\": []}\n")
endforeach()

# Runs probe with GLIBC_TUNABLES set to `tunables` ("" for unset); what it did in `result`.
function(run_with tunables result)
    if(tunables STREQUAL "")
        set(env ${CMAKE_COMMAND} -E env --unset=GLIBC_TUNABLES)
    else()
        set(env ${CMAKE_COMMAND} -E env GLIBC_TUNABLES=${tunables})
    endif()
    file(REMOVE ${WORK}/out.csv ${WORK}/out.xlsx)
    execute_process(COMMAND ${env} ${PROBE} ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out
                    ERROR_VARIABLE err)
    set(files "")
    if(EXISTS ${WORK}/out.csv)
        file(SHA256 ${WORK}/out.csv hash)
        string(APPEND files " out.csv:${hash}")
    endif()
    if(EXISTS ${WORK}/out.xlsx)  # its sheets (docProps says when it was written)
        file(REMOVE_RECURSE ${WORK}/xlsx)
        file(ARCHIVE_EXTRACT INPUT ${WORK}/out.xlsx DESTINATION ${WORK}/xlsx)
        file(GLOB_RECURSE sheets RELATIVE ${WORK}/xlsx ${WORK}/xlsx/xl/*)
        list(SORT sheets)
        foreach(sheet ${sheets})
            file(SHA256 ${WORK}/xlsx/${sheet} hash)
            string(APPEND files " ${sheet}:${hash}")
        endforeach()
    endif()
    set(${result} "exit ${code}\n--- stdout\n${out}\n--- stderr\n${err}\n--- files${files}" PARENT_SCOPE)
endfunction()

set(reference ${WORK}/reference)
set(candidate ${WORK}/candidate)
foreach(args IN ITEMS "summary;${reference}" "summary;${candidate}" "summary"
                      "overflow;${candidate}" "compare;${reference};${candidate}"
                      "compare;${reference};${candidate};--json"
                      "compare;${reference};${candidate};--csv;${WORK}/out.csv;--xlsx;${WORK}/out.xlsx"
                      "compare;${reference};${WORK}/none")
    run_with("glibc.malloc.hugetlb=0" as_started ${args})
    if(NOT as_started MATCHES "exit (0|1|64|66)\n")
        message(FATAL_ERROR "probe ${args}: unexpected result\n${as_started}")
    endif()
    foreach(tunables "" "glibc.malloc.check=0" "glibc.malloc.check=0:glibc.malloc.tcache_count=0")
        run_with("${tunables}" restarted ${args})
        if(NOT restarted STREQUAL as_started)
            message(FATAL_ERROR "probe ${args} with GLIBC_TUNABLES='${tunables}':\n${restarted}\n"
                                "differs from it run as started:\n${as_started}")
        endif()
    endforeach()
endforeach()
# Under valgrind it is not restarted (/proc/self/exe would be valgrind's own program, which
# refuses to run): it reads the dump under valgrind as it would run as started.
if(VALGRIND)
    run_with("glibc.malloc.hugetlb=0" as_started summary ${candidate})
    execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=GLIBC_TUNABLES ${VALGRIND} -q
                            --tool=none ${PROBE} summary ${candidate}
                    RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT "exit ${code}\n--- stdout\n${out}\n--- stderr\n${err}\n--- files" STREQUAL as_started)
        message(FATAL_ERROR "probe summary under valgrind: exit ${code}\n${out}${err}\n"
                            "differs from it run as started:\n${as_started}")
    endif()
endif()
# The dumps were read (a check that compares two failures would pass for nothing).
expect_run(0 "rows: 8" summary ${reference})
expect_run(1 "nan" compare ${reference} ${candidate})
