# probe config validate: exit codes and messages for each kind of config.
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

file(WRITE ${WORK}/op_ok.json [[{"task": "all", "dump_enable": true, "exec_range": "0,3", "ids": "2_1", "save_child": true}]])
expect_run(0 "valid op-level config" config validate ${WORK}/op_ok.json)

file(WRITE ${WORK}/op_bad.json [[{"task": "tensors", "dump_enable": "yes", "filter_level": 5}]])
expect_run(65 "op_bad.json: key \"task\": \"tensors\" is not a valid value; accepted: \"tensor\", \"statistics\", \"all\"" config validate ${WORK}/op_bad.json)
expect_run(65 "key \"dump_enable\": must be a boolean" config validate ${WORK}/op_bad.json)
expect_run(65 "key \"filter_level\": 5 is out of range; accepted: 0, 1 or 2" config validate ${WORK}/op_bad.json)
expect_run(65 "invalid op-level config \\(3 problems\\)" config validate ${WORK}/op_bad.json)

file(WRITE ${WORK}/syntax.json "{\n  \"task\": \"tensor\"\n  \"dump_enable\": true\n}")
expect_run(65 "syntax.json:3:[0-9]+: not valid JSON" config validate ${WORK}/syntax.json)

file(WRITE ${WORK}/api_ok.json [[{"task": "statistics", "dump_path": "./dump", "level": "mix", "step": [0, "2-3"], "async_dump": false}]])
expect_run(0 "key \"async_dump\": has no effect" config validate ${WORK}/api_ok.json)
expect_run(0 "valid code-level config" config validate ${WORK}/api_ok.json)

file(WRITE ${WORK}/api_bad.json [[{"task": "statistics", "level": "L3", "statistics": {"data_mode": ["all", "input"]}}]])
expect_run(65 "key \"level\": \"L3\" is not a supported level" config validate ${WORK}/api_bad.json)
expect_run(65 "key \"statistics.data_mode\"" config validate ${WORK}/api_bad.json)

file(WRITE ${WORK}/unknown.json [[{"foo": 1}]])
expect_run(65 "cannot tell which kind" config validate ${WORK}/unknown.json)
expect_run(65 "key \"foo\": unknown key" config validate ${WORK}/unknown.json --kind op)

expect_run(66 "cannot be read" config validate ${WORK}/absent.json)
expect_run(64 "no FILE given" config validate)
expect_run(64 "--kind must be" config validate ${WORK}/op_ok.json --kind xyz)
expect_run(64 "unknown command" frobnicate)
expect_run(64 "give two dumps" compare ${WORK})
expect_run(66 "holds no dump" compare ${WORK} ${WORK})
