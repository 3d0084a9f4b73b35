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
