# The Slurm external service (SPEC §12) and the process runner it uses. Included by
# io/CMakeLists.txt.
target_sources(celos PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/process_runner.cc
  ${CMAKE_CURRENT_LIST_DIR}/slurm_commands.cc
  ${CMAKE_CURRENT_LIST_DIR}/slurm_service.cc
)
if(CELOS_BUILD_TESTS)
  celos_add_test(celos_slurm_test
    ${CMAKE_CURRENT_LIST_DIR}/process_runner_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/slurm_commands_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/slurm_service_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/slurm_story_test.cc
  )
endif()
