# Included by cli/CMakeLists.txt once the cilkprof_cli target exists: the flame
# graph's JS and CSS (this folder) embedded into the library as C++ arrays
# (embed.cmake), regenerated when either file changes.
set(flamegraph_dir ${CMAKE_CURRENT_SOURCE_DIR}/src/export/flamegraph)
set(flamegraph_resources ${CMAKE_CURRENT_BINARY_DIR}/generated/flamegraph_resources.cc)
add_custom_command(
  OUTPUT ${flamegraph_resources}
  COMMAND ${CMAKE_COMMAND} -DOUTPUT=${flamegraph_resources} -DSCRIPT=${flamegraph_dir}/flamegraph.js
          -DSTYLE=${flamegraph_dir}/flamegraph.css -P ${flamegraph_dir}/embed.cmake
  DEPENDS ${flamegraph_dir}/flamegraph.js ${flamegraph_dir}/flamegraph.css ${flamegraph_dir}/embed.cmake
  COMMENT "Embedding the flame graph's script and style sheet"
  VERBATIM)
target_sources(cilkprof_cli PRIVATE ${flamegraph_resources})
