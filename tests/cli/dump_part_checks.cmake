# A step or rank folder named, probe summary and probe overflow take that part alone (as compare
# does), and say so; the whole dump named, all of it.
include(${CMAKE_CURRENT_LIST_DIR}/expect_run.cmake)

# Each step: a relu whose finite input gives an Inf, so the birth is in the first step checked.
set(entry [=[{"Functional.relu.0.forward": {"input_args": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2], "Max": 1.0, "Min": -1.0, "Mean": 0.0, "Norm": 1.4142135, "requires_grad": false}], "input_kwargs": {}, "output": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2], "Max": Infinity, "Min": 0.0, "Mean": Infinity, "Norm": Infinity, "requires_grad": false}]}}]=])
foreach(step 0 1)
    file(WRITE ${WORK}/dump/step${step}/proc7/dump.json
         "{\"task\": \"statistics\", \"level\": \"L1\", \"framework\": \"pytorch\", \"dump_data_dir\": null, \"data\": ${entry}}\n")
endforeach()

expect_run(0 "only step 1 of it:.*steps: 1..1 \\(1\\).*first Inf: step 1, op Functional.relu.0.forward.*probe summary: only step 1 of the dump .*/dump is summarised"
           summary ${WORK}/dump/step1)
expect_run(0 "only proc7, step 1 of it:.*rows: 2 .*first Inf: step 1.*probe summary: only proc7, step 1 of the dump .*/dump is summarised"
           summary ${WORK}/dump/step1/proc7)
expect_run(1 "born in step 1, op Functional.relu.0.forward.*probe overflow: only proc7, step 1 of the dump .*/dump is checked"
           overflow ${WORK}/dump/step1/proc7)
expect_run(1 "born in step 1.*probe overflow: only step 1 of the dump .*/dump is checked"
           overflow ${WORK}/dump/step1)
# The whole dump named: nothing to say, and all of it is read.
execute_process(COMMAND ${PROBE} summary ${WORK}/dump RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0 OR "${out}${err}" MATCHES "only|summarised" OR NOT "${out}" MATCHES "steps: 0..1.*rows: 4 .*first Inf: step 0")
    message(FATAL_ERROR "probe summary of the whole dump: exit ${code}\n${out}${err}")
endif()
execute_process(COMMAND ${PROBE} overflow ${WORK}/dump RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 1 OR "${out}${err}" MATCHES "is checked" OR NOT "${out}" MATCHES "born in step 0")
    message(FATAL_ERROR "probe overflow of the whole dump: exit ${code}\n${out}${err}")
endif()

# An op-level dump of three ranks; ranks 0 and 1 share pid 100 (two machines), rank 1 was
# killed, and rank 2's statistic.csv is garbage.
set(atb ${WORK}/atb/atb_dump_data)
set(header "Device and PID,Execution Count,Op Name,Op Type,Op Id,Input/Output,Index,Dtype,Format,Shape,Max,Min,Mean,Norm,Tensor Path\n")
foreach(key 0_100 1_100)
    file(WRITE ${atb}/data/${key}/0/statistic.csv "${header}${key},0,mul_0,aten::mul,0,output,0,float,nd,2,1.000000,0.000000,0.500000,1.000000,N/A\n")
endforeach()
file(WRITE ${atb}/data/2_300/0/statistic.csv "garbage\n")
set(entry [=[{"pid": 100, "device": @DEVICE@, "state": "@STATE@", "command": "python3 train.py", "host": "@HOST@", "pid_namespace": "", "started": "", "updated": "", "files": 1, "bytes": 1, "rows": 1, "errors": 0, "dropped_rows": 0, "dump_stopped": "", "ended_by": @END@, "cut_off": false, "messages": []}]=])
set(DEVICE 0)
set(STATE complete)
set(HOST a)
set(END "null")
string(CONFIGURE "${entry}" first @ONLY)
set(DEVICE 1)
set(STATE incomplete)
set(HOST b)
set(END [=[{"how": "signal", "code": 9, "seen_by": "probe run"}]=])
string(CONFIGURE "${entry}" second @ONLY)
file(WRITE ${atb}/probe_status.json "{\"state\": \"incomplete\", \"files\": 3, \"bytes\": 3, \"rows\": 2, \"errors\": 0, \"processes\": [${first}, ${second}]}\n")

# The healthy rank alone: complete, not the other's death, and rank 2's garbage only counted.
expect_run(0 "only 0_100 of it:.*rows: 1 .*rank 0 \\(0_100\\): 1 rows.*complete.*[0-9]+ problems? with files of other parts"
           summary ${atb}/data/0_100)
execute_process(COMMAND ${PROBE} summary ${atb}/data/0_100 OUTPUT_VARIABLE out ERROR_VARIABLE err)
if("${out}${err}" MATCHES "SIGKILL|garbage")
    message(FATAL_ERROR "the part of rank 0 took another rank's end or problem:\n${out}${err}")
endif()
expect_run(0 "0_100: no overflow" overflow ${atb}/data/0_100)
# The whole dump: rank 1's death and rank 2's garbage.
expect_run(1 "SIGKILL.*problem: .*2_300/0/statistic.csv" summary ${atb})
# ".." taken by its text: the other rank's folder, not this one's.
expect_run(0 "SIGKILL.*only 1_100 of it:" summary ${atb}/data/0_100/../1_100)
expect_run(0 "only 0_100 of it:" summary ${atb}/data/0_100/0/..)
# A link to a rank folder is that rank.
file(CREATE_LINK ${atb}/data/0_100 ${WORK}/rank0 SYMBOLIC)
expect_run(0 "only 0_100 of it:" summary ${WORK}/rank0)
# A part that holds nothing is no dump: 66, as compare takes it.
file(MAKE_DIRECTORY ${WORK}/dump/step5)
expect_run(66 "probe summary: nothing of step 5 was dumped" summary ${WORK}/dump/step5)
expect_run(66 "probe overflow: nothing of step 5 was dumped" overflow ${WORK}/dump/step5)
# A part that holds nothing readable is not said to be undumped: a file in its rank folder's place.
file(WRITE ${WORK}/dump/step6/proc7 "x")
expect_run(66 "problem: .*step6/proc7: is a regular file, not a folder.*probe summary: nothing of step 6 could be read \\(its problems above\\)"
           summary ${WORK}/dump/step6)
expect_run(66 "probe overflow: nothing of step 6 could be read: .*step6/proc7: is a regular file, not a folder"
           overflow ${WORK}/dump/step6)
# Names from the disk are printed as printable text.
string(ASCII 27 escape)
file(WRITE "${atb}/data/3_400${escape}[31m/0/statistic.csv" "${header}3_400,0,mul_0,aten::mul,0,output,0,float,nd,2,1.000000,0.000000,0.500000,1.000000,N/A\n")
execute_process(COMMAND ${PROBE} summary "${atb}/data/3_400${escape}[31m" OUTPUT_VARIABLE out ERROR_VARIABLE err)
if("${out}${err}" MATCHES "${escape}" OR NOT "${out}" MATCHES "only 3_400\\\\x1B\\[31m of it")
    message(FATAL_ERROR "a rank folder's escape went to the terminal:\n${out}${err}")
endif()
# A tensor file the rows name that is gone is a problem, and fails the exit code (a dump of its
# own: nothing else is wrong in it).
set(gone ${WORK}/gone/atb_dump_data/data/4_500/0)
file(WRITE ${gone}/statistic.csv "${header}4_500,0,mul_0,aten::mul,0,output,0,float,nd,2,1.000000,0.000000,0.500000,1.000000,${gone}/0_mul_0/after/outtensor0.bin\n")
expect_run(1 "only 4_500 of it:.*problem: 1 tensor file that the rows name is not in the dump" summary ${gone}/..)
expect_run(1 "problem: 1 tensor file that the rows name is not in the dump" summary ${WORK}/gone)
