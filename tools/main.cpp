// fmtcheck: exact answers about floating-point formats.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/command.hpp"
#include "common/help_formatter.hpp"
#include "common/version.hpp"

namespace fmtcheck::cli {

static std::vector<Command>& registry() {
  static std::vector<Command> commands;
  return commands;
}

bool register_command(Command c) {
  registry().push_back(std::move(c));
  return true;
}

// An error message as one printable line: a message can quote input (a
// parser's "last read" bytes, a file name), so line breaks and other
// control characters, and bytes that are not UTF-8, are written as \xHH.
static std::string one_line(std::string_view text) {
  std::string out;
  const auto escape = [&out](unsigned char c) {
    static const char* const hex = "0123456789abcdef";
    out += "\\x";
    out += hex[c >> 4];
    out += hex[c & 15];
  };
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    // Length of the UTF-8 sequence a lead byte starts (0: not a lead byte).
    const std::size_t length = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    bool valid = length != 0 && i + length <= text.size();
    for (std::size_t k = 1; valid && k < length; ++k) valid = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
    if (!valid || (length == 1 && (c < 0x20 || c == 0x7f))) {
      escape(c);
      ++i;
    } else {
      out.append(text.substr(i, length));
      i += length;
    }
  }
  return out;
}

}  // namespace fmtcheck::cli

int main(int argc, char** argv) {
  using namespace fmtcheck::cli;
  CLI::App app{"fmtcheck: bit-exact answers about FP16, BF16, TF32, FP8 and MX formats", "fmtcheck"};
  app.formatter(std::make_shared<HelpFormatter>());  // subcommands inherit it
  app.require_subcommand(1);
  app.set_version_flag("--version", fmtcheck_version);
  auto commands = registry();
  std::sort(commands.begin(), commands.end(), [](const Command& a, const Command& b) { return a.order < b.order; });
  std::map<CLI::App*, std::function<int()>> runners;
  for (const Command& c : commands) {
    CLI::App* sub = app.add_subcommand(c.name, c.summary);
    runners[sub] = c.setup(*sub);
  }
  if (argc > 1 && argv[1][0] != '-' && !std::any_of(commands.begin(), commands.end(), [&](const Command& c) {
        return c.name == argv[1];
      })) {
    std::string names;
    for (const Command& c : commands) names += (names.empty() ? "" : ", ") + c.name;
    std::cerr << "fmtcheck: " << one_line("unknown command '" + std::string(argv[1]) + "'; the commands are " + names) << "\n";
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "fmtcheck: " << one_line(e.what()) << " (see fmtcheck --help)\n";
    return 2;
  }
  try {
    for (auto& [sub, run] : runners) {
      if (sub->parsed()) return run();
    }
  } catch (const UsageError& e) {
    std::cerr << "fmtcheck: " << one_line(e.what()) << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "fmtcheck: " << one_line(e.what()) << "\n";
    return 2;
  }
  return 2;
}
