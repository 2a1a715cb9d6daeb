# The SFTP file system (libssh2), used by celos-ci. Included by io/CMakeLists.txt.
target_sources(celos PRIVATE ${CMAKE_CURRENT_LIST_DIR}/sftp_file_system.cc)
