# configure_check.cmake - the configure step on a machine without what the
# agent needs (agent/CMakeLists.txt): run as
#
#   cmake -DSRC=... -DWORK=... -DGEN=... -DCC=... -DCASE=... -P configure_check.cmake
#
# it configures the source tree SRC in the scratch directory WORK (emptied
# first) with one of the agent's needs taken away, and fails unless the
# outcome is the one CASE expects:
#
#   skipped_without_btf        EMBER_AGENT=AUTO, EMBER_VMLINUX_BTF missing:
#                              configured, the agent and its tests left
#                              out with the reason, the servers still there
#   required_without_bpftool   EMBER_AGENT=ON, EMBER_BPFTOOL missing: the
#                              configure step fails, naming bpftool
#   skipped_on_other_target    EMBER_AGENT=AUTO, an aarch64 target: skipped,
#                              saying the agent is x86-64 only
foreach(v SRC WORK GEN CC CASE)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "configure_check: -D${v}=... is missing")
  endif()
endforeach()

if(CASE STREQUAL "skipped_without_btf")
  set(args -DEMBER_AGENT=AUTO -DEMBER_VMLINUX_BTF=${WORK}/no-such-btf)
  set(want_rc 0)
  set(want "agent: ember-agent and its tests are not built: no kernel BTF at '${WORK}/no-such-btf'")
elseif(CASE STREQUAL "required_without_bpftool")
  set(args -DEMBER_AGENT=ON -DEMBER_BPFTOOL=${WORK}/no-such-bpftool)
  set(want_rc 1)
  set(want "agent: cannot build ember-agent (EMBER_AGENT=ON): no bpftool at '${WORK}/no-such-bpftool'")
elseif(CASE STREQUAL "skipped_on_other_target")
  set(args -DEMBER_AGENT=AUTO -DCMAKE_SYSTEM_NAME=Linux -DCMAKE_SYSTEM_PROCESSOR=aarch64)
  set(want_rc 0)
  set(want "the target is 'aarch64': the agent's BPF program and unwind tables are x86-64 only")
else()
  message(FATAL_ERROR "configure_check: no case '${CASE}'")
endif()

file(REMOVE_RECURSE ${WORK})
execute_process(
  COMMAND ${CMAKE_COMMAND} -S ${SRC} -B ${WORK} -G ${GEN} -DCMAKE_C_COMPILER=${CC} ${args}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
# CMake wraps a message's lines: compare with the whitespace squeezed.
string(REGEX REPLACE "[ \t\r\n]+" " " flat "${out}")
string(FIND "${flat}" "${want}" at)
if(at LESS 0)
  message(FATAL_ERROR "configure_check ${CASE}: the output lacks \"${want}\":\n${out}")
endif()
if(want_rc EQUAL 0 AND NOT rc EQUAL 0)
  message(FATAL_ERROR "configure_check ${CASE}: the configure step failed (${rc}):\n${out}")
elseif(NOT want_rc EQUAL 0 AND rc EQUAL 0)
  message(FATAL_ERROR "configure_check ${CASE}: the configure step passed; it must fail")
endif()
if(want_rc EQUAL 0)
  foreach(d cli/CMakeFiles/ember.dir cli/CMakeFiles/ember-server.dir)
    if(NOT IS_DIRECTORY ${WORK}/${d})
      message(FATAL_ERROR "configure_check ${CASE}: no '${d}': the server is not built")
    endif()
  endforeach()
  foreach(d agent/CMakeFiles/ember-agent.dir agent/CMakeFiles/ember_agent_core.dir tests/agent)
    if(EXISTS ${WORK}/${d})
      message(FATAL_ERROR "configure_check ${CASE}: '${d}' is there: the agent is built")
    endif()
  endforeach()
endif()
file(REMOVE_RECURSE ${WORK})
message(STATUS "configure_check ${CASE}: as expected")
