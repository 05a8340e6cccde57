// fmtcheck: exact answers about floating-point formats.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
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
    std::cerr << "fmtcheck: unknown command '" << argv[1] << "'; the commands are " << names << "\n";
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
    std::cerr << "fmtcheck: " << e.what() << " (see fmtcheck --help)\n";
    return 2;
  }
  try {
    for (auto& [sub, run] : runners) {
      if (sub->parsed()) return run();
    }
  } catch (const UsageError& e) {
    std::cerr << "fmtcheck: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "fmtcheck: " << e.what() << "\n";
    return 2;
  }
  return 2;
}
