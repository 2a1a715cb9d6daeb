# Precompiled headers (issue 24, cold CI time; numbers in bench/README.md). Nearly every file of
# libcelos includes the standard library (GCC 12's <chrono> alone is 46k lines in C++20), fmt
# and tl::expected; a third include spdlog and Boost.JSON; every test file includes Catch2.
# Parsing them once per target instead of once per file is most of the saving. Beast and Asio
# are left out: two files include them, and a precompiled header is not shared across targets.
#
# ccache: a GCC .gch is not byte-for-byte reproducible, so ccache keys on its hash and needs
# `sloppiness=pch_defines,time_macros` (set below for a ccache launcher, as the presets use).
# The .gch itself is compiled through ccache too: a hit restores the same bytes, and then every
# file that uses it hits as well.
#
# With the precompiled header GCC 12 reports its own libstdc++'s -Warray-bounds false positives
# (std::string's operator+ inlined from <bits/char_traits.h>, GCC bug 105651), which it keeps
# quiet as a system header's without one; CelosWarnings.cmake turns those flow-based bounds
# warnings off for GCC builds with CELOS_PCH (the asan preset checks bounds for real).
option(CELOS_PCH "Precompile the headers most files of libcelos and its tests include" ON)

set(CELOS_PCH_HEADERS
  <algorithm> <atomic> <chrono> <cstdint> <filesystem> <functional> <map> <memory> <mutex>
  <optional> <set> <string> <string_view> <thread> <utility> <vector>
  <fmt/format.h> <tl/expected.hpp> <spdlog/spdlog.h> <boost/json.hpp>)

# celos_target_pch(target [TEST]): the library's headers; TEST reuses the tests' one (below).
function(celos_target_pch target)
  # GCC only: CMake 3.25 builds clang's .pch without -fno-pch-timestamp, so a .pch that ccache
  # restores into a fresh build tree would be refused (the fuzz preset keeps compiling without).
  if(NOT CELOS_PCH OR NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    return()
  endif()
  if("${ARGN}" STREQUAL "TEST")
    target_precompile_headers(${target} REUSE_FROM celos_test_pch)
  else()
    target_precompile_headers(${target} PRIVATE ${CELOS_PCH_HEADERS})
  endif()
endfunction()

# The tests' precompiled header (the library's headers and Catch2), one for every test binary:
# owned by an object library of one empty file compiled as the tests are (celos_test_flags; -fPIE
# as an executable), so that a test binary waits for this header only, not for another test
# binary. A header built with other flags is refused by -Winvalid-pch (CMake adds it), an error
# with -Werror.
function(celos_add_test_pch_owner)
  if(NOT CELOS_PCH OR NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    return()
  endif()
  add_library(celos_test_pch OBJECT ${PROJECT_SOURCE_DIR}/libcelos/testing/test_pch.cc)
  set_target_properties(celos_test_pch PROPERTIES POSITION_INDEPENDENT_CODE OFF)
  target_compile_options(celos_test_pch PRIVATE -fPIE)
  celos_test_flags(celos_test_pch)
  target_precompile_headers(celos_test_pch PRIVATE ${CELOS_PCH_HEADERS} <catch2/catch.hpp>)
endfunction()

# ccache caches a file compiled with a precompiled header only with this sloppiness; the .gch's
# own hash is still part of the key. Hashing it is most of what a hit costs: a .gch is 150 MB, and
# ccache reads and hashes it again for every file that includes it (0.8 of a hit's 1.05 s, about
# 80 files per configuration). Its inode cache keeps a file's hash by inode, size and times, so
# the .gch is hashed once per build (a hit: 0.05 to 0.28 s; numbers in bench/README.md).
if(CELOS_PCH AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU"
   AND CMAKE_CXX_COMPILER_LAUNCHER MATCHES "ccache$")
  set(CMAKE_CXX_COMPILER_LAUNCHER env CCACHE_SLOPPINESS=pch_defines,time_macros
    CCACHE_INODECACHE=true ${CMAKE_CXX_COMPILER_LAUNCHER})
endif()
