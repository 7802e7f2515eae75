# Warnings and sanitizer switches shared by every target.
# CILKPROF_SANITIZE: "" | address | undefined | thread  (set by the presets)
set(CILKPROF_SANITIZE "" CACHE STRING "Sanitizer for project code: address, undefined, thread or empty")

add_compile_options(-Wall -Wextra -Wno-unused-parameter)

if(CILKPROF_SANITIZE STREQUAL "address")
  set(CILKPROF_SANITIZER_FLAGS -fsanitize=address -fno-omit-frame-pointer)
elseif(CILKPROF_SANITIZE STREQUAL "undefined")
  set(CILKPROF_SANITIZER_FLAGS -fsanitize=undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
elseif(CILKPROF_SANITIZE STREQUAL "thread")
  set(CILKPROF_SANITIZER_FLAGS -fsanitize=thread)
elseif(NOT CILKPROF_SANITIZE STREQUAL "")
  message(FATAL_ERROR "CILKPROF_SANITIZE must be address, undefined, thread or empty, not '${CILKPROF_SANITIZE}'")
endif()

# Sanitizers apply to the tools, the runtime and the tests, never to the
# preloaded agent: it runs inside arbitrary unsanitized programs.
# A sanitized static library's objects call the sanitizer's runtime: whatever links it
# (a test that is not sanitized itself, say) links that runtime too. A shared library
# or an executable carries its own reference to the runtime.
function(cilkprof_sanitize target)
  if(CILKPROF_SANITIZER_FLAGS)
    target_compile_options(${target} PRIVATE ${CILKPROF_SANITIZER_FLAGS})
    get_target_property(type ${target} TYPE)
    if(type STREQUAL "STATIC_LIBRARY")
      target_link_options(${target} PUBLIC ${CILKPROF_SANITIZER_FLAGS})
    else()
      target_link_options(${target} PRIVATE ${CILKPROF_SANITIZER_FLAGS})
    endif()
  endif()
endfunction()
