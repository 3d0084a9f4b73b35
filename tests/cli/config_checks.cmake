# probe config validate: exit codes and messages for each kind of config.
include(${CMAKE_CURRENT_LIST_DIR}/expect_run.cmake)

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

# Hostile configs (issue 9): each is judged and said, never "internal error" or a crash.
file(WRITE ${WORK}/huge_number.json "{\n  \"task\": \"all\",\n  \"filter_level\": 1e999\n}")
expect_run(65 "huge_number.json:3:19: the number 1e999 is out of range" config validate ${WORK}/huge_number.json)
execute_process(COMMAND printf "{\"task\": \"\\377\", \"dump_enable\": true}" OUTPUT_FILE ${WORK}/not_utf8.json)
expect_run(65 "not_utf8.json:1:[0-9]+: not valid JSON: .*UTF-8" config validate ${WORK}/not_utf8.json --kind op)
execute_process(COMMAND printf "{\"dump_enable\": true, \"\\376\": 1}" OUTPUT_FILE ${WORK}/not_utf8_key.json)
expect_run(65 "not valid JSON" config validate ${WORK}/not_utf8_key.json)
string(REPEAT "[" 100000 open)
string(REPEAT "]" 100000 close)
file(WRITE ${WORK}/deep.json "{\"task\": ${open}${close}}")
expect_run(65 "deep.json:1:41: nested deeper than 32 levels" config validate ${WORK}/deep.json)
# A key given twice: legal JSON, the last value counts; warned, and the summary says so.
file(WRITE ${WORK}/twice.json [[{"task": "all", "ids": "1", "ids": "2"}]])
expect_run(0 "key \"ids\": is given more than once" config validate ${WORK}/twice.json)
expect_run(0 "valid op-level config \\(1 warning\\)" config validate ${WORK}/twice.json)
file(WRITE ${WORK}/twice_bad.json [[{"task": "tensors", "task": "everything"}]])
expect_run(65 "invalid op-level config \\(1 problem\\)" config validate ${WORK}/twice_bad.json --kind op)
# Not a regular file: said what it is, without blocking on a FIFO or reading a device forever.
file(MAKE_DIRECTORY ${WORK}/a_directory.json)
expect_run(66 "a_directory.json: cannot be read: is a directory, not a file" config validate ${WORK}/a_directory.json)
execute_process(COMMAND mkfifo ${WORK}/fifo.json)
expect_run(66 "fifo.json: cannot be read: is a named pipe \\(FIFO\\), not a regular file" config validate ${WORK}/fifo.json)
expect_run(66 "cannot be read: is a character device, not a regular file" config validate /dev/zero)
# Standard input is read when asked for by name: "-" or /dev/stdin (a pipe, as in a shell pipeline).
foreach(name - /dev/stdin)
    execute_process(COMMAND ${PROBE} config validate ${name} --kind op INPUT_FILE ${WORK}/op_ok.json
                    RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT code EQUAL 0 OR NOT out MATCHES "valid op-level config")
        message(FATAL_ERROR "probe config validate ${name} < op_ok.json: exit ${code}\n${out}${err}")
    endif()
endforeach()
# A config beyond the size limit: one that cannot be read (66) for validate and run alike (run
# said "not valid", 65).
string(REPEAT " " 1048577 padding)
file(WRITE ${WORK}/too_big.json "{\"task\": \"all\"${padding}}")
expect_run(66 "too_big.json: cannot be read: is 1048592 bytes, more than the limit of 1048576" config validate ${WORK}/too_big.json)
expect_run(66 "probe run: cannot read the config .*too_big.json: is 1048592 bytes, more than the limit of 1048576" run --output ${WORK}/too_big_out --config ${WORK}/too_big.json -- /bin/true)
