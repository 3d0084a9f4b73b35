# probe summary and probe overflow read the whole dump whatever part of it they are given: named a
# step or rank folder, they say so, and their report (steps 0..1) is of all of it.
include(${CMAKE_CURRENT_LIST_DIR}/expect_run.cmake)

set(entry [=[{"Functional.relu.0.forward": {"input_args": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2], "Max": 1.0, "Min": -1.0, "Mean": 0.0, "Norm": 1.4142135, "requires_grad": false}], "input_kwargs": {}, "output": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2], "Max": 1.0, "Min": 0.0, "Mean": 0.5, "Norm": 1.0, "requires_grad": false}]}}]=])
foreach(step 0 1)
    file(WRITE ${WORK}/dump/step${step}/proc7/dump.json
         "{\"task\": \"statistics\", \"level\": \"L1\", \"framework\": \"pytorch\", \"dump_data_dir\": null, \"data\": ${entry}}\n")
endforeach()

expect_run(0 "steps: 0..1.*probe summary: .*/dump/step1 is part of the dump .*/dump: all of it is read"
           summary ${WORK}/dump/step1)
expect_run(0 "probe overflow: .*/dump/step1/proc7 is part of the dump .*/dump: all of it is read"
           overflow ${WORK}/dump/step1/proc7)
# The whole dump named: nothing to say.
execute_process(COMMAND ${PROBE} summary ${WORK}/dump RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0 OR "${out}${err}" MATCHES "is part of the dump" OR NOT "${out}" MATCHES "steps: 0..1")
    message(FATAL_ERROR "probe summary of the whole dump: exit ${code}\n${out}${err}")
endif()
