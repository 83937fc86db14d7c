// Reading input files without hanging: a FIFO nobody writes to is an error after a bounded wait,
// a FIFO or pipe that is written is read whole (a shell's <(command)).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "common/error.hpp"
#include "common/input_file.hpp"
#include "common/text_file.hpp"

namespace commgauge {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class InputFile : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/commgauge-input-test-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(InputFile, ARegularFileIsReadWhole) {
  std::string text(200000, 'x');
  text += "end";
  std::ofstream(dir_ / "a.json") << text;
  EXPECT_EQ(read_input_file(dir_ / "a.json"), text);
  std::ofstream(dir_ / "empty.json").flush();
  EXPECT_EQ(read_input_file(dir_ / "empty.json"), "");
}

TEST_F(InputFile, WhatIsNoFileIsAnErrorNamingThePath) {
  try {
    read_input_file(dir_);
    ADD_FAILURE() << "a directory was read";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where(), dir_.string());
    EXPECT_THAT(e.what(), HasSubstr("is a directory"));
  }
  EXPECT_THROW(read_input_file(dir_ / "missing.json"), InputError);
  try {
    read_input_file("/dev/null");
    ADD_FAILURE() << "a device was read";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("is a device"));
  }
}

TEST_F(InputFile, AFifoNobodyWritesToIsAnErrorNotAHang) {
  const fs::path fifo = dir_ / "f.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  try {
    read_input_file(fifo, 0.2);
    ADD_FAILURE() << "an empty FIFO was read";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where(), fifo.string());
    EXPECT_THAT(e.what(), HasSubstr("is a FIFO nothing was written to within 0.2 s"));
  }
}

TEST_F(InputFile, AFifoThatIsWrittenIsReadToItsEnd) {
  const fs::path fifo = dir_ / "f.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // The writer comes after the reader has opened the FIFO and writes in two parts with a pause:
  // the bounded wait is between bytes, not for the whole file.
  std::thread writer([&fifo] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::ofstream out(fifo);
    out << "{\"a\":" << std::flush;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    out << " 1}";
  });
  EXPECT_EQ(read_input_file(fifo, 30), "{\"a\": 1}");
  writer.join();
}

TEST_F(InputFile, APipeIsReadLikeAShellsProcessSubstitution) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::thread writer([fd = fds[1]] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const std::string text = "size,time\n8,1.5\n";
    EXPECT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
    ::close(fd);
  });
  EXPECT_EQ(read_input_file("/dev/fd/" + std::to_string(fds[0]), 30), "size,time\n8,1.5\n");
  writer.join();
  ::close(fds[0]);
}

// An output directory a failed run created goes again, with the parents it created, but only
// while empty; one that was there, or that holds anything, stays.
TEST_F(InputFile, ANewOutputDirectoryGoesAgainOnlyIfEmptyAndNotKept) {
  {
    const NewDirectory d(dir_ / "a" / "b" / "c");
    EXPECT_TRUE(fs::is_directory(dir_ / "a" / "b" / "c"));
  }
  EXPECT_FALSE(fs::exists(dir_ / "a"));
  { const NewDirectory d(dir_.string() + "/slash/c/"); }
  EXPECT_FALSE(fs::exists(dir_ / "slash"));
  {
    NewDirectory d(dir_ / "kept" / "c");
    d.keep();
  }
  EXPECT_TRUE(fs::is_directory(dir_ / "kept" / "c"));
  {
    const NewDirectory d(dir_ / "full" / "c");
    std::ofstream(dir_ / "full" / "c" / "result") << "x";
  }
  EXPECT_TRUE(fs::exists(dir_ / "full" / "c" / "result"));
  fs::create_directories(dir_ / "there");
  { const NewDirectory d(dir_ / "there" / "new"); }
  EXPECT_TRUE(fs::is_directory(dir_ / "there"));
  EXPECT_FALSE(fs::exists(dir_ / "there" / "new"));
  { const NewDirectory d(dir_ / "there"); }
  EXPECT_TRUE(fs::is_directory(dir_ / "there"));
  std::ofstream(dir_ / "file") << "x";
  EXPECT_THROW(NewDirectory(dir_ / "file" / "sub"), InputError);
  EXPECT_TRUE(fs::is_regular_file(dir_ / "file"));
}

}  // namespace
}  // namespace commgauge
