# Warnings for our own targets only (third-party headers are included as SYSTEM).
function(probe_target_warnings target)
    # -Wshadow=local is gcc's; clang (the fuzz and TSan builds) does not know it and says so at
    # every file.
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
        set(shadow -Wshadow=local)
    endif()
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic ${shadow} -Wno-missing-field-initializers)
endfunction()
