# The local command external service (SPEC §7.2), included by io/CMakeLists.txt.
target_sources(celos PRIVATE ${CMAKE_CURRENT_LIST_DIR}/command_service.cc
  ${CMAKE_CURRENT_LIST_DIR}/command_job.cc)
if(CELOS_BUILD_TESTS)
  celos_add_test(celos_command_test ${CMAKE_CURRENT_LIST_DIR}/command_service_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/command_job_test.cc)
endif()
