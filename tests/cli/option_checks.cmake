# The probe subcommands' option parsing: help, unknown or malformed options and values, each
# said with what was wrong and exit code 64; the program's own options left to it.
include(${CMAKE_CURRENT_LIST_DIR}/expect_run.cmake)

# Help: the command's own text on standard output, exit 0, wherever -h/--help stands.
foreach(command run summary compare overflow grads config)
    expect_run(0 "Usage: probe ${command}" ${command} --help)
endforeach()
expect_run(0 "Usage: probe compare" compare a b -h)
expect_run(0 "Usage: probe config validate" config validate --help)

# Unknown options are named, followed by the usage.
expect_run(64 "probe compare: unknown option '--frob'.*Usage: probe compare" compare a b --frob)
expect_run(64 "probe grads: unknown option '--frob=1'" grads ${WORK} --frob=1)
expect_run(64 "probe run: unknown option '--frob'" run --frob true)
expect_run(64 "probe config validate: unknown option '--frob'" config validate x.json --frob)
expect_run(64 "probe config: unknown subcommand 'frob'" config frob)

# Values: missing, empty, not a number, out of range, not one of the accepted words.
expect_run(64 "probe run: --output needs a value" run --output)
expect_run(64 "probe run: --output needs a value \\(nothing follows '='\\)" run --output= true)
expect_run(64 "probe compare: --csv needs a value" compare a b --csv=)
expect_run(64 "probe compare: --threads needs a whole number from 1 to 256, not '0'" compare a b --threads 0)
expect_run(64 "probe compare: --threads needs a whole number from 1 to 256, not '2.5'" compare a b --threads=2.5)
expect_run(64 "probe compare: --ulps float32=x: 'float32=x' is not DTYPE=N" compare a b --ulps float32=x)
expect_run(64 "probe compare: --ulps int8=2: unknown dtype 'int8'" compare a b --ulps int8=2)
expect_run(64 "probe compare: --rtol is gone: .*--ulps" compare a b --rtol 1e-3)
expect_run(64 "probe compare: --min-cosine is gone" compare a b --min-cosine)
expect_run(64 "probe grads: --spike needs a number >= 0, not 'abc'" grads ${WORK} --spike abc)
expect_run(64 "probe grads: --vanish needs a number >= 0, not '-1'" grads ${WORK} --vanish -1)
expect_run(64 "probe grads: --explode needs a number >= 0, not 'inf'" grads ${WORK} --explode inf)
expect_run(64 "probe overflow: --range must be float16 or bfloat16, not 'int8'" overflow ${WORK} --range int8)
expect_run(64 "probe config default: --kind must be 'op' or 'api', not 'xyz'" config default --kind xyz)

# Positionals: one too many, none.
expect_run(64 "probe grads: one directory at a time \\('a' and 'b'\\)" grads a b)
expect_run(64 "probe overflow: one dump at a time \\('a' and 'b'\\)" overflow a b)
expect_run(64 "probe summary: one dump at a time \\('a' and 'b'\\)" summary a b)
expect_run(64 "probe config validate: only one FILE, got 'b' too" config validate a b)
expect_run(64 "probe run: no command to run" run --quiet)
expect_run(64 "Usage: probe summary" summary)
expect_run(64 "--append and --overwrite exclude each other" run --append --overwrite true)

# Both forms of a value, the last of two wins; the api default config is JSON.
expect_run(0 "\"dump_path\"" config default --kind=op --kind api)

# Everything from the command's name on is the command's: its --help and --output are its own.
expect_run(0 "args: --help --output x" run --quiet --output ${WORK}/out sh -c "echo args: \"$@\"" sh --help --output x)
expect_run(0 "args: -h" run --quiet --output=${WORK}/out --append -- sh -c "echo args: \"$@\"" sh -h)

# probe overflow says what it could not read: a damaged row order file changes its order.
set(od ${WORK}/od/atb_dump_data)
file(WRITE ${od}/data/100/0/statistic.csv
    "Device and PID,Execution Count,Op Name,Op Type,Op Id,Input/Output,Index,Dtype,Format,Shape,Max,Min,Mean,Norm,Tensor Path\n"
    "100,0,L,Block,0,input,0,float,nd,2,1.000000,0.000000,0.500000,1.000000,N/A\n"
    "100,0,L,Block,0,output,0,float,nd,2,inf,0.000000,inf,inf,N/A\n")
file(WRITE ${od}/probe_row_order/100.csv "Execution Count,Rows\nnot a run\n")
expect_run(1 "problem: .*probe_row_order/100.csv:2: not \"<round>,<rows>\"" overflow ${od})

# What could not be read makes the answer partial, and the exit code says so: "no overflow" and a
# summary exited 0 for a statistic.csv of garbage.
set(part ${WORK}/part/atb_dump_data)
file(WRITE ${part}/data/100/0/statistic.csv
    "Device and PID,Execution Count,Op Name,Op Type,Op Id,Input/Output,Index,Dtype,Format,Shape,Max,Min,Mean,Norm,Tensor Path\n"
    "100,0,L,Block,0,input,0,float,nd,2,1.000000,0.000000,0.500000,1.000000,N/A\n"
    "100,0,L,Block,0,output,0,float\n")
set(garbage ${WORK}/garbage/atb_dump_data)
file(WRITE ${garbage}/data/100/0/statistic.csv "not,a,table\n" "1,2\n")
expect_run(1 "100: no overflow in what could be read \\(see the problems\\)" overflow ${part})
expect_run(66 "100: no overflow in what could be read" overflow ${garbage})
expect_run(1 "problem: .*row skipped: expected 15 columns" summary ${part})
expect_run(66 "problem: .*statistic.csv" summary ${garbage})
# compare said "no tensor diverges of those that could be read" and exited 0.
file(COPY ${WORK}/part/atb_dump_data DESTINATION ${WORK}/part2)
expect_run(1 "no tensor diverges of those that could be read" compare ${part} ${WORK}/part2)

# A dump's own folder, or one inside it, as --output: the new dump went inside the old one.
expect_run(73 "is in the dump .*/od/atb_dump_data: the new dump would go inside it" run --quiet --output ${od} true)
expect_run(73 "is in the dump .*/od/atb_dump_data" run --quiet --output ${od}/data/100 true)
# The folder holding it, however spelled, is its own: --append adds to it.
expect_run(0 "" run --quiet --append --output ${WORK}/od/ true)
expect_run(0 "" run --quiet --append --output ${WORK}/od/. true)
