# What the probe command-line checks share: a fresh work folder, and expect_run, which runs
# probe with its arguments and fails the check unless it exits with the code and says the text.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

function(expect_run expected_code expected_text)
    execute_process(COMMAND ${PROBE} ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT code EQUAL expected_code)
        message(FATAL_ERROR "probe ${ARGN}: exit ${code}, expected ${expected_code}\n${out}${err}")
    endif()
    if(NOT "${out}${err}" MATCHES "${expected_text}")
        message(FATAL_ERROR "probe ${ARGN}: output does not match '${expected_text}':\n${out}${err}")
    endif()
endfunction()
