# probe summary reads the whole dump whatever part of it it is given, and says so when named a
# step or rank folder; probe overflow then checks that part alone (as compare takes it).
include(${CMAKE_CURRENT_LIST_DIR}/expect_run.cmake)

# Each step: a relu whose finite input gives an Inf, so the birth is in the first step checked.
set(entry [=[{"Functional.relu.0.forward": {"input_args": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2], "Max": 1.0, "Min": -1.0, "Mean": 0.0, "Norm": 1.4142135, "requires_grad": false}], "input_kwargs": {}, "output": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2], "Max": Infinity, "Min": 0.0, "Mean": Infinity, "Norm": Infinity, "requires_grad": false}]}}]=])
foreach(step 0 1)
    file(WRITE ${WORK}/dump/step${step}/proc7/dump.json
         "{\"task\": \"statistics\", \"level\": \"L1\", \"framework\": \"pytorch\", \"dump_data_dir\": null, \"data\": ${entry}}\n")
endforeach()

expect_run(0 "steps: 0..1.*probe summary: .*/dump/step1 is part of the dump .*/dump: all of it is read"
           summary ${WORK}/dump/step1)
expect_run(1 "born in step 1, op Functional.relu.0.forward.*probe overflow: only proc7, step 1 of the dump .*/dump is checked"
           overflow ${WORK}/dump/step1/proc7)
expect_run(1 "born in step 1.*probe overflow: only step 1 of the dump .*/dump is checked"
           overflow ${WORK}/dump/step1)
# The whole dump named: nothing to say, and all of it is read.
execute_process(COMMAND ${PROBE} summary ${WORK}/dump RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0 OR "${out}${err}" MATCHES "is part of the dump" OR NOT "${out}" MATCHES "steps: 0..1")
    message(FATAL_ERROR "probe summary of the whole dump: exit ${code}\n${out}${err}")
endif()
execute_process(COMMAND ${PROBE} overflow ${WORK}/dump RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 1 OR "${out}${err}" MATCHES "is checked" OR NOT "${out}" MATCHES "born in step 0")
    message(FATAL_ERROR "probe overflow of the whole dump: exit ${code}\n${out}${err}")
endif()
