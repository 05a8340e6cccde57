#include "common/help_formatter.hpp"

#include <sstream>

#include "common/table.hpp"

namespace fmtcheck::cli {
namespace {

// Each line of a description wrapped to width columns, a line's own
// indentation kept and its continuation lines indented two more.
std::string wrapped(const std::string& description, std::size_t width) {
  std::string out;
  std::istringstream lines(description);
  for (std::string line; std::getline(lines, line);) {
    std::size_t indent = line.find_first_not_of(' ');
    if (indent == std::string::npos) indent = 0;
    const std::string lead(indent == 0 ? 0 : indent + 2, ' ');
    out += wrap(lead, line.substr(indent), width).substr(lead.size() - indent);
  }
  if (!out.empty()) out.pop_back();  // the caller ends the entry
  return out;
}

}  // namespace

std::string HelpFormatter::make_option_desc(const CLI::Option* opt) const {
  // CLI11 indents each line after a newline to the name column's width.
  return wrapped(CLI::Formatter::make_option_desc(opt), terminal_width - get_column_width());
}

std::string HelpFormatter::make_subcommand(const CLI::App* sub) const {
  std::ostringstream out;
  const std::string description = wrapped(sub->get_description(), terminal_width - get_column_width());
  CLI::detail::format_help(out, sub->get_display_name(true), description, get_column_width());
  return out.str();
}

std::string HelpFormatter::make_description(const CLI::App* app) const {
  const std::string text = CLI::Formatter::make_description(app);
  return text.empty() ? text : wrapped(text, terminal_width) + "\n";
}

}  // namespace fmtcheck::cli
