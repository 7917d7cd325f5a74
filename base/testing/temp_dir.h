// File: base/testing/temp_dir.h
//
// Scratch folders for tests: fresh (emptied if a crashed run left one),
// named so that parallel test processes never share one.
#ifndef REVERIE_BASE_TESTING_TEMP_DIR_H_
#define REVERIE_BASE_TESTING_TEMP_DIR_H_

#include <unistd.h>

#include <filesystem>
#include <string>

#include "gtest/gtest.h"

namespace reverie::testing {

// A fresh temporary directory named for `name` and this process.
inline std::string TempDir(const std::string& name) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("reverie_" + name + "_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

// A fresh temporary directory for the running test: `prefix`, this process
// and the test's name.
inline std::filesystem::path TempDirForTest(const std::string& prefix) {
  return TempDir(prefix + "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
}

}  // namespace reverie::testing

#endif  // REVERIE_BASE_TESTING_TEMP_DIR_H_
