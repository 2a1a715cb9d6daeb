# The linker: LLVM's lld where the compiler can use it (scripts/setup.sh installs it), else the
# toolchain's default. Every build links about thirty test binaries of 100 MB or more with debug
# information, in a fresh build tree on each CI run (ccache keeps objects, not links); lld links
# one in about half the time of GNU ld (issue 24, CI time; bench/README.md).
# CELOS_LINKER=default keeps the toolchain's own.
set(CELOS_LINKER "lld" CACHE STRING "Linker for celos's targets: lld or default")
if(CELOS_LINKER STREQUAL "lld")
  include(CheckLinkerFlag)
  check_linker_flag(CXX "-fuse-ld=lld" CELOS_HAVE_LLD)
  if(CELOS_HAVE_LLD)
    add_link_options(-fuse-ld=lld)
  else()
    message(STATUS "celos: lld not found, linking with the default linker")
  endif()
endif()
