# Files and streams the user names for results: written as the shell's `>` writes them (a link
# followed, a FIFO or device written in place), "-" standard output, a folder that cannot take
# the file said before the work, and a report that could not be printed is no success.
include(${CMAKE_CURRENT_LIST_DIR}/expect_run.cmake)

# Two steps of an msprobe dump whose relu differs: something to compare and write.
foreach(step 0 1)
    math(EXPR max "${step} + 1")
    file(WRITE ${WORK}/dump/step${step}/proc7/dump.json
         "{\"task\": \"statistics\", \"level\": \"L1\", \"framework\": \"pytorch\", \"dump_data_dir\": null, \"data\": {\"Functional.relu.0.forward\": {\"input_args\": [], \"input_kwargs\": {}, \"output\": [{\"type\": \"torch.Tensor\", \"dtype\": \"torch.float32\", \"shape\": [2], \"Max\": ${max}.0, \"Min\": 0.0, \"Mean\": 0.5, \"Norm\": 1.0, \"requires_grad\": false}]}}}\n")
endforeach()
set(pair ${WORK}/dump/step0 ${WORK}/dump/step1)

# A link to a file: the link stays, its target gets the table.
file(WRITE ${WORK}/target.csv "old\n")
file(CREATE_LINK target.csv ${WORK}/link.csv SYMBOLIC)
expect_run(1 "every compared tensor is in .*link.csv" compare ${pair} --csv ${WORK}/link.csv)
file(READ ${WORK}/target.csv table)
if(NOT IS_SYMLINK ${WORK}/link.csv OR NOT table MATCHES "^Execution Count,")
    message(FATAL_ERROR "--csv through a link: the link was replaced or its target not written:\n${table}")
endif()

# "-": the table alone on standard output, the report on standard error.
execute_process(COMMAND ${PROBE} compare ${pair} --csv - RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 1 OR NOT out MATCHES "^Execution Count," OR out MATCHES "diverge" OR NOT err MATCHES "diverge")
    message(FATAL_ERROR "--csv -: exit ${code}\nstdout:\n${out}\nstderr:\n${err}")
endif()

# A folder that does not exist, or a folder in the file's place: said before the dumps are read.
expect_run(73 "probe compare: cannot write .*/missing/x.csv: No such file or directory" compare ${pair} --csv ${WORK}/missing/x.csv)
execute_process(COMMAND ${PROBE} compare ${pair} --xlsx ${WORK} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 73 OR NOT err MATCHES "Is a directory" OR "${out}${err}" MATCHES "reference")
    message(FATAL_ERROR "--xlsx into a folder: exit ${code}\n${out}${err}")
endif()

# A device: written in place, its error said (it was renamed over: /dev/full became a file).
if(EXISTS /dev/full)
    expect_run(73 "cannot write /dev/full: No space left on device" compare ${pair} --csv /dev/full)
    execute_process(COMMAND ${PROBE} summary ${WORK}/dump OUTPUT_FILE /dev/full RESULT_VARIABLE code ERROR_VARIABLE err)
    if(NOT code EQUAL 73 OR NOT err MATCHES "probe summary: cannot write standard output: No space left on device")
        message(FATAL_ERROR "probe summary > /dev/full: exit ${code}\n${err}")
    endif()
    execute_process(COMMAND stat -c %F /dev/full OUTPUT_VARIABLE kind)
    if(NOT kind MATCHES "character special")
        message(FATAL_ERROR "/dev/full is now: ${kind}")
    endif()
endif()
