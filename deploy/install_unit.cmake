# Run by `cmake --install` (deploy/CMakeLists.txt): writes a unit (cilkprofd.service,
# cilk-service.service) for the prefix of this install, which `cmake --install --prefix
# DIR` may have changed since configure time, so that ExecStart= and the documentation
# paths name the files this install put there. In: UNIT_IN, UNIT_OUT (the scratch
# copy), and the GNUInstallDirs values BINDIR, LIBDIR, DOCDIR and DATADIR, each
# relative to the prefix or absolute.
foreach(dir BINDIR LIBDIR DOCDIR DATADIR)
  if(IS_ABSOLUTE "${${dir}}")
    set(full_${dir} "${${dir}}")
  else()
    set(full_${dir} "${CMAKE_INSTALL_PREFIX}/${${dir}}")
  endif()
endforeach()
set(CMAKE_INSTALL_FULL_BINDIR "${full_BINDIR}")
set(CILKPROF_DOC_DIR "${full_DOCDIR}")
set(CILKPROF_SAMPLE_ENV "${full_DATADIR}/cilkprof/cilkprofd.env.sample")
# cilk-service.service: the installed example service and agent (examples/ and agent/
# install them there).
set(CILKPROF_EXAMPLES_DIR "${full_DATADIR}/cilkprof/examples")
set(CILKPROF_AGENT_PATH "${full_LIBDIR}/cilkprof/libcilkprof_agent.so")
configure_file("${UNIT_IN}" "${UNIT_OUT}" @ONLY)
file(INSTALL "${UNIT_OUT}" DESTINATION "${full_LIBDIR}/systemd/user")
