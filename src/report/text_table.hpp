#pragma once
// A plain text table: a header row and rows of cells, columns padded to their widest cell.

#include <string>
#include <vector>

namespace commgauge::report {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) : header_(std::move(header)) {}
  void add_row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  /// Numbers right-aligned, the first column left-aligned; a rule under the header.
  std::string render() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

/// A number for a table: `digits` significant digits, "n/a" for NaN.
std::string number(double value, int digits = 4);

}  // namespace commgauge::report
