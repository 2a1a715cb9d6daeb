# Hadoop integration (SPEC §7.1, §7.3): the libcurl HTTP client, the Oozie external service,
# WebHDFS and the Hadoop configuration that locates it. Included by io/CMakeLists.txt.
target_sources(celos PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/curl_http_client.cc
  ${CMAKE_CURRENT_LIST_DIR}/hadoop_config.cc
  ${CMAKE_CURRENT_LIST_DIR}/webhdfs_file_system.cc
  ${CMAKE_CURRENT_LIST_DIR}/hadoop_file_system_resolver.cc
  ${CMAKE_CURRENT_LIST_DIR}/oozie_service.cc
)
if(CELOS_BUILD_TESTS)
  celos_add_test(celos_hadoop_test
    ${CMAKE_CURRENT_LIST_DIR}/hadoop_config_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/webhdfs_file_system_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/oozie_service_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/curl_http_client_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/webhdfs_contract_test.cc
  )
endif()
