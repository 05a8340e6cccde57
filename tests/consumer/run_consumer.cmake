# cmake -P script: install, configure, build, run. Fails on the first step
# that fails, with its output.
function(step name)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${name} failed (${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "${name}: ok\n${out}")
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
step(install ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)

# The installed headers are the public ones, all of them and nothing else.
file(GLOB_RECURSE installed RELATIVE ${WORK_DIR}/prefix/include ${WORK_DIR}/prefix/include/*)
file(GLOB_RECURSE public RELATIVE ${PUBLIC_INCLUDE_DIR} ${PUBLIC_INCLUDE_DIR}/*)
list(SORT installed)
list(SORT public)
if(NOT installed STREQUAL public)
  set(extra ${installed})
  list(REMOVE_ITEM extra ${public})
  set(missing ${public})
  list(REMOVE_ITEM missing ${installed})
  message(FATAL_ERROR "installed headers differ from lib/include: not public: ${extra}; missing: ${missing}")
endif()
list(LENGTH installed header_count)
message(STATUS "installed headers: ok (${header_count}, exactly lib/include's)")

# The installed CLI (where this build has one) finds the installed training
# data without --data, run from a folder that holds no data/.
set(cli ${WORK_DIR}/prefix/bin/fmtcheck)
if(EXISTS ${cli})
  execute_process(COMMAND ${cli} train --steps 1 --recipe fp32 --infer "" WORKING_DIRECTORY ${WORK_DIR}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(REPLACE "\n" " " out_line "${out}")
  if(NOT rc EQUAL 0 OR NOT out_line MATCHES "^mlp on ${WORK_DIR}/prefix/share/fmtcheck/data/digits/digits.csv.gz,")
    message(FATAL_ERROR "installed fmtcheck train without --data (${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "installed CLI finds its installed data: ok")
endif()
step(configure ${CMAKE_COMMAND} -S ${PROJECT_DIR} -B ${WORK_DIR}/build -G ${GENERATOR}
     -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_BUILD_TYPE=Release)
step(build ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
step(run ${WORK_DIR}/build/consumer)
