#include "report/text_table.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace commgauge::report {

std::string number(double value, int digits) {
  if (std::isnan(value)) return "n/a";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return fmt::format("{:.{}g}", value, digits);
}

std::string TextTable::render() const {
  std::vector<std::size_t> width(header_.size(), 0);
  for (std::size_t c = 0; c < header_.size(); ++c)
    width[c] = header_[c].size();
  for (const auto& row : rows_) {
    for (std::size_t c = 0; c < row.size() && c < width.size(); ++c) {
      width[c] = std::max(width[c], row[c].size());
    }
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (std::size_t c = 0; c < width.size(); ++c) {
      const std::string cell = c < cells.size() ? cells[c] : "";
      if (c > 0) out += "  ";
      out += c == 0 ? fmt::format("{:<{}}", cell, width[c]) : fmt::format("{:>{}}", cell, width[c]);
    }
    while (!out.empty() && out.back() == ' ')
      out.pop_back();
    return out + "\n";
  };
  std::string out = line(header_);
  std::size_t total = 0;
  for (std::size_t w : width)
    total += w;
  out += std::string(total + 2 * (width.size() - 1), '-') + "\n";
  for (const auto& row : rows_)
    out += line(row);
  return out;
}

std::string csv_field(const std::string& cell) {
  if (cell.find_first_of(",\"\r\n") == std::string::npos) return cell;
  std::string out = "\"";
  for (char c : cell) {
    out += c;
    if (c == '"') out += '"';
  }
  return out + "\"";
}

std::string TableSink::csv() const {
  std::string out = "table,row,column,value\n";
  for (const auto& [name, t] : tables_) {
    const auto& header = t.header();
    for (std::size_t r = 0; r < t.rows().size(); ++r) {
      const auto& row = t.rows()[r];
      for (std::size_t c = 0; c < header.size() && c < row.size(); ++c) {
        out += fmt::format("{},{},{},{}\n", csv_field(name), r, csv_field(header[c]),
                           csv_field(row[c]));
      }
    }
  }
  return out;
}

std::string render(const TextTable& t, TableSink* sink, std::string name) {
  if (sink != nullptr) sink->add(std::move(name), t);
  return t.render();
}

}  // namespace commgauge::report
