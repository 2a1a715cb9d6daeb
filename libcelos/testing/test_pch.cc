// The translation unit that owns the tests' precompiled header (cmake/CelosPch.cmake).
namespace celos::test_pch {}
