# celos_target_defaults(target): our warnings (errors with CELOS_WARNINGS_AS_ERRORS) and the
# sanitizers of CELOS_SANITIZE.
# Only our own targets call this; third-party code keeps its own warnings.
function(celos_target_defaults target)
  celos_target_warnings(${target})
  celos_target_sanitize(${target})
endfunction()

# celos_target_warnings(target): the warnings alone (fuzz/'s lock check compiles without the
# sanitizers).
function(celos_target_warnings target)
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
    -Woverloaded-virtual -Wimplicit-fallthrough)
  if(CELOS_WARNINGS_AS_ERRORS)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  if(CELOS_PCH AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # Through a precompiled header GCC 12 no longer treats libstdc++ as a system header for its
    # flow-based warnings and reports its own false positives (GCC bug 105651: std::string's
    # operator+ inlined from <bits/char_traits.h>). These warnings guess at bounds from
    # optimised code; the asan preset checks real bounds at run time.
    target_compile_options(${target} PRIVATE -Wno-array-bounds -Wno-stringop-overflow
      -Wno-stringop-overread -Wno-restrict)
  endif()
  if(CELOS_THREAD_SAFETY AND CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    target_compile_options(${target} PRIVATE -Wthread-safety)
  endif()
endfunction()

function(celos_target_sanitize target)
  if(CELOS_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=${CELOS_SANITIZE} -fno-omit-frame-pointer)
    if(CELOS_FUZZ)
      # Coverage for libFuzzer in everything the fuzz targets reach (fuzz/CMakeLists.txt links
      # the fuzzer's main).
      target_compile_options(${target} PRIVATE -fsanitize=fuzzer-no-link)
    endif()
    target_link_options(${target} PRIVATE -fsanitize=${CELOS_SANITIZE})
    if(CELOS_SANITIZE MATCHES "thread")
      # GCC 12 warns that std::atomic_thread_fence (used inside libstdc++ and Boost.Asio) is not
      # instrumented; that is the headers' business, not ours.
      target_compile_options(${target} PRIVATE -Wno-tsan)
    endif()
  endif()
endfunction()
