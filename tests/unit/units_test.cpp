#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "common/units.hpp"

namespace commgauge {
namespace {

TEST(ByteSize, Units) {
  EXPECT_EQ(parse_byte_size("8", "x"), 8u);
  EXPECT_EQ(parse_byte_size("0", "x"), 0u);
  EXPECT_EQ(parse_byte_size("64KiB", "x"), 65536u);
  EXPECT_EQ(parse_byte_size("20MiB", "x"), 20u * 1024 * 1024);
  EXPECT_EQ(parse_byte_size("1M", "x"), 1048576u);
  EXPECT_EQ(parse_byte_size("2kB", "x"), 2000u);
  EXPECT_EQ(parse_byte_size("1.5KiB", "x"), 1536u);
}

TEST(ByteSize, Errors) {
  EXPECT_THROW(parse_byte_size("-1", "--size"), InputError);
  EXPECT_THROW(parse_byte_size("abc", "--size"), InputError);
  EXPECT_THROW(parse_byte_size("3 parsecs", "--size"), InputError);
  EXPECT_THROW(parse_byte_size("1.3", "--size"), InputError);
  try {
    parse_byte_size("-5", "--size");
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("--size: a size must be >= 0"));
  }
}

TEST(SizeList, ListAndRange) {
  EXPECT_EQ(parse_size_list("8,64,1KiB", "x"), (std::vector<std::uint64_t>{8, 64, 1024}));
  EXPECT_EQ(parse_size_list("1:16", "x"), (std::vector<std::uint64_t>{1, 2, 4, 8, 16}));
  EXPECT_EQ(parse_size_list("0:4", "x"), (std::vector<std::uint64_t>{0, 1, 2, 4}));
  EXPECT_EQ(parse_size_list("1:100:10", "x"), (std::vector<std::uint64_t>{1, 10, 100}));
  EXPECT_THROW(parse_size_list("16:1", "x"), InputError);
  EXPECT_THROW(parse_size_list("1:16:1", "x"), InputError);
}

}  // namespace
}  // namespace commgauge
