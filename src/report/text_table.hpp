#pragma once
// A plain text table: a header row and rows of cells, columns padded to their widest cell.

#include <string>
#include <utility>
#include <vector>

namespace commgauge::report {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) : header_(std::move(header)) {}
  void add_row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  /// Numbers right-aligned, the first column left-aligned; a rule under the header.
  std::string render() const;
  const std::vector<std::string>& header() const { return header_; }
  const std::vector<std::vector<std::string>>& rows() const { return rows_; }

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

/// The tables a command printed, each under a name, for `--tables-csv`: one CSV in long form,
/// `table,row,column,value` (row counts from 0; the cells as printed), so that tables of any
/// shape share one file that a pipe or pandas reads (pivot on table and row).
class TableSink {
 public:
  void add(std::string table, const TextTable& t) { tables_.emplace_back(std::move(table), t); }
  std::string csv() const;  ///< RFC 4180 quoting
  std::size_t size() const { return tables_.size(); }

 private:
  std::vector<std::pair<std::string, TextTable>> tables_;
};

/// A TextTable's text, after handing it to `sink` (if any) under `name`.
std::string render(const TextTable& t, TableSink* sink, std::string name);

/// A CSV field: quoted (with doubled quotes) when it holds a comma, quote, CR or LF (RFC 4180).
std::string csv_field(const std::string& cell);

/// A number for a table: `digits` significant digits, "n/a" for NaN.
std::string number(double value, int digits = 4);

}  // namespace commgauge::report
